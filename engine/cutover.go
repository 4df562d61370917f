package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/replicate"
)

// CutoverConfig is the sync a cutover finishes, and how it checks.
type CutoverConfig struct {
	// Sync names the mapping, source, target, slot, publication and state
	// file of the sync to finish. UntilCaughtUp is implied.
	Sync SyncConfig
	// Quiet is how long the source must take no write to a mapped table
	// after the sync caught up. Default 10s.
	Quiet time.Duration
	// Sample is the fraction of keys verify checks (0 < Sample <= 1).
	// Default 1: every item.
	Sample float64
	// WaitInactive is how long a cutover waits for a sync that still
	// streams from the slot to stop. Default 30s.
	WaitInactive time.Duration
}

// Validate reports every problem with c's own settings and the source
// URL and table name of its Sync at once (the rest of Sync is checked by
// Sync.Validate), each a FieldError. Zero values mean the defaults.
func (c CutoverConfig) Validate() error {
	errs := []error{CheckPostgres("cutover", c.Sync.Postgres), checkName("cutover", "Table", "table", c.Sync.Table)}
	field := func(name, format string, args ...any) { errs = append(errs, fieldf("cutover", name, format, args...)) }
	if c.Quiet < 0 {
		field("Quiet", "must be positive")
	}
	if c.Sample != 0 && !(c.Sample > 0 && c.Sample <= 1) { // NaN too
		field("Sample", "must be in (0, 1], e.g. 0.01 for 1%%")
	}
	if c.WaitInactive < 0 {
		field("WaitInactive", "must be positive")
	}
	return errors.Join(errs...)
}

// CutoverResult is the evidence of a cutover, and its verdict.
type CutoverResult struct {
	// Go is true when every check passed: the table may serve.
	Go bool
	// NoGo lists why not, one reason each.
	NoGo []string
	// CaughtUp is the source position the sync first caught up with, and
	// Applied the changes it applied to get there.
	CaughtUp LSN
	Applied  int64
	// QuietChanges are the writes to mapped tables the source took during
	// the quiet period, by table (they are applied too).
	Quiet        time.Duration
	QuietChanges map[string]int64
	// Final is the position every change before which is in the table.
	Final LSN
	// Writers are sessions holding a write lock on a mapped table: a
	// transaction that wrote and has not ended.
	Writers []TableWriter
	// Verify is verify's report.
	Verify  *VerifyResult
	Elapsed time.Duration
}

// TableWriter is a session holding a write lock on a mapped table.
type TableWriter struct {
	PID         int32
	Table       string
	OpenSeconds float64
}

// String renders the writer as "pid N on T (transaction open for D)".
func (w TableWriter) String() string {
	return fmt.Sprintf("pid %d on %s (transaction open for %s)", w.PID, w.Table, (time.Duration(w.OpenSeconds) * time.Second).String())
}

// Cutover finishes a sync whose writes were frozen, and checks the
// go/no-go conditions together: it applies every change up to the
// source's position, checks that no session holds a write lock on a
// mapped table, waits Quiet and applies again (any change then means the
// source still takes writes), and verifies the table against the source.
// The sync itself must be stopped: Cutover streams from its slot.
func Cutover(ctx context.Context, cfg CutoverConfig) (*CutoverResult, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 10 * time.Second
	}
	if cfg.Sample == 0 {
		cfg.Sample = 1
	}
	if cfg.WaitInactive <= 0 {
		cfg.WaitInactive = 30 * time.Second
	}
	sc := cfg.Sync.WithDefaults()
	sc.UntilCaughtUp = true
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if err := waitSlotInactive(ctx, sc, cfg.WaitInactive); err != nil {
		return nil, err
	}
	res := &CutoverResult{Quiet: cfg.Quiet}

	first, err := Sync(ctx, sc)
	if err != nil {
		return res, fmt.Errorf("cutover: catching up: %w", err)
	}
	res.CaughtUp, res.Applied = first.CaughtUpAt, first.Final.Changes
	tables := first.Slot.Tables
	if res.Writers, err = tableWriters(ctx, sc.Postgres, tables); err != nil {
		return res, err
	}
	select {
	case <-time.After(cfg.Quiet):
	case <-ctx.Done():
		return res, kinded(ErrInterrupted, errors.New("cutover interrupted"))
	}
	second, err := Sync(ctx, sc)
	if err != nil {
		return res, fmt.Errorf("cutover: applying the quiet period's changes: %w", err)
	}
	res.Final, res.QuietChanges = second.CaughtUpAt, second.Final.TableChanges
	later, err := tableWriters(ctx, sc.Postgres, tables)
	if err != nil {
		return res, err
	}
	res.Writers = mergeWriters(res.Writers, later)

	vc := VerifyConfig{CompareConfig: CompareConfig{Mapping: sc.Mapping, Postgres: sc.Postgres, DynamoDB: sc.DynamoDB, Table: sc.Table, Logger: sc.Logger}, Sample: cfg.Sample}
	// The sync's state file records the shard counts its initial load
	// wrote the items with (sc.StateFile has its default by now).
	st, err := ReadStateShards(sc.StateFile, sc.Table)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		vc.Shards = map[[2]string]int{} // computed: not another file's
	case err != nil:
		return res, fmt.Errorf("cutover: %w", err)
	default:
		vc.Shards = st.Map()
	}
	if res.Verify, err = Verify(ctx, vc); err != nil {
		return res, fmt.Errorf("cutover: verify: %w", err)
	}

	var quiet int64
	for _, n := range res.QuietChanges {
		quiet += n
	}
	if quiet > 0 {
		res.NoGo = append(res.NoGo, fmt.Sprintf("the source took %d writes to mapped tables during the %s quiet period: writes are not frozen", quiet, cfg.Quiet))
	}
	for _, w := range res.Writers {
		res.NoGo = append(res.NoGo, "a transaction holds a write lock on a mapped table: "+w.String())
	}
	if !res.Verify.Identical {
		s := res.Verify.Summary
		res.NoGo = append(res.NoGo, fmt.Sprintf("verify found differences: %d missing, %d different, %d unexpected, %d problems", s.Missing, s.Different, s.Unexpected, s.Problems))
	}
	res.Go = len(res.NoGo) == 0
	res.Elapsed = time.Since(start)
	return res, nil
}

// waitSlotInactive refuses a cutover without a slot, and waits for a
// sync still streaming from it to stop.
func waitSlotInactive(ctx context.Context, sc SyncConfig, wait time.Duration) error {
	conn, err := connect(ctx, sc.Postgres)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	deadline := time.Now().Add(wait)
	for {
		s, err := replicate.ReadSlot(ctx, conn, sc.Slot)
		switch {
		case err != nil:
			return err
		case s == nil:
			return configErrorf("cutover: there is no replication slot %s: nothing was synced into %s with it (run migrate sync first)", sc.Slot, sc.Table)
		case !s.Active:
			return nil
		case time.Now().After(deadline):
			return configErrorf("cutover: the slot %s is in use by server process %d: stop the sync service first (cutover applies the last changes itself)", sc.Slot, s.ActivePID)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return kinded(ErrInterrupted, errors.New("cutover interrupted"))
		}
	}
}

// tableWriters lists the sessions holding a write lock on one of tables
// (schema.table): a transaction that wrote to it and has not ended, whose
// changes no stream has seen yet.
func tableWriters(ctx context.Context, pgURL string, tables []string) ([]TableWriter, error) {
	conn, err := connect(ctx, pgURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT l.pid, n.nspname::text || '.' || c.relname::text,
			COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - a.xact_start)::float8, 0)
		FROM pg_catalog.pg_locks l
		JOIN pg_catalog.pg_class c ON c.oid = l.relation
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_backend_pid()
		  AND l.mode IN ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
		  AND n.nspname::text || '.' || c.relname::text = ANY($1)
		ORDER BY 2, 1`, tables)
	if err != nil {
		return nil, fmt.Errorf("cutover: list writers: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (TableWriter, error) {
		var w TableWriter
		err := r.Scan(&w.PID, &w.Table, &w.OpenSeconds)
		return w, err
	})
}

func mergeWriters(a, b []TableWriter) []TableWriter {
	seen := map[[2]any]bool{}
	var out []TableWriter
	for _, w := range append(a, b...) {
		k := [2]any{w.PID, w.Table}
		if !seen[k] {
			seen[k] = true
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].PID < out[j].PID
	})
	return out
}
