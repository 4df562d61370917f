package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Values of SyncConfig.OnTruncate.
const (
	OnTruncateFail   = "fail"   // stop the sync (default)
	OnTruncateDelete = "delete" // delete the truncated tables' items and re-render what embeds or copies them
)

// Defaults of SyncConfig.
const (
	DefaultMaxFanout = 100_000
	// DefaultSyncBatch: a backlog drains in rounds this large, and an
	// item changed many times in a round is written once (BenchmarkSync,
	// Drain, quiet machine: 23,000-26,000 changes/s against 17,000-18,000
	// at 5,000 a round, for ~90 MiB more at the peak).
	DefaultSyncBatch   = 20_000
	DefaultStatusEvery = 10 * time.Second
)

// ErrNotReplicable is wrapped when the source cannot feed a sync as it is
// set up: wal_level is not logical, or a table's replica identity lacks
// columns that deletes and key changes need. Nothing was created, read or
// written; the message says what to change.
var ErrNotReplicable = errors.New("engine: the source cannot be replicated as it is set up")

// ErrTruncate is wrapped when a mapped table was truncated and
// SyncConfig.OnTruncate is OnTruncateFail: the sync stopped before the
// truncating transaction.
var ErrTruncate = errors.New("engine: a mapped table was truncated")

// SyncConfig configures Sync. Mapping, Postgres and DynamoDB are required;
// every other zero value means its documented default.
type SyncConfig struct {
	Mapping  *mapping.Mapping
	Postgres string // never logged or stored
	DynamoDB DynamoDB
	// Table is the target table. Default: the mapping's table.
	Table string
	// CreateTable creates the table for the initial load when it is
	// missing.
	CreateTable bool
	// Writer tunes the batch writer (Concurrency, MaxWCU, ...), for the
	// initial load and the stream.
	Writer load.Config

	// Slot and Publication name the replication slot and the publication.
	// Each is created when missing and reused when it exists. Default:
	// "migrate_" and the table name (see replicate.DefaultName).
	Slot, Publication string
	// StateFile is the initial load's state file (see RunConfig). Default
	// ".migrate/<table>.state.json".
	StateFile string
	// ResumeCommand is quoted in messages of an initial load that stopped.
	ResumeCommand string

	// MaxFanout bounds the items one change may affect (a parent row that
	// many items copy from); a change over it stops the sync with an error
	// naming it. Default DefaultMaxFanout; -1: no bound.
	MaxFanout int
	// OnTruncate is OnTruncateFail (default) or OnTruncateDelete.
	OnTruncate string
	// UntilCaughtUp returns once every transaction visible on the source
	// when the first check ran (every 250 ms, from the stream's start) is
	// applied (the cutover step); otherwise Sync streams until ctx ends.
	UntilCaughtUp bool
	// MaxBatch is how many changes one round applies at most. Default
	// DefaultSyncBatch.
	MaxBatch int
	// StatusEvery is how often Observer.Status is called. Default 10s.
	StatusEvery time.Duration
	// MaxSlotWAL guards the source's disk: from slot creation on, past
	// 80% of it Sync warns, and once the slot holds this much WAL Sync
	// stops (even inside a round retrying against a stalled target) and
	// drops the slot, returning ErrSlotWALLimit. 0: no limit.
	MaxSlotWAL int64

	// Observer receives the initial load's progress, the slot and the
	// stream's status. Default: none.
	Observer SyncObserver
	// Logger receives log lines. Default: discard.
	Logger *slog.Logger
}

// SyncObserver receives a sync's progress. Methods are called from one
// engine goroutine at a time and must return quickly.
type SyncObserver interface {
	// Observer receives the initial load's progress.
	contract.Observer
	// Slot is called as soon as the slot and publication are known,
	// created or reused, before anything is read: a caller prints the
	// slot's name here, so that a slot is never left behind unnamed.
	Slot(SlotInfo)
	// Status is called when streaming begins, every SyncConfig.StatusEvery
	// while it goes on, and once more at the end.
	Status(SyncStatus)
}

// NopSyncObserver ignores everything.
type NopSyncObserver struct{ contract.NopObserver }

// Slot does nothing.
func (NopSyncObserver) Slot(SlotInfo) {}

// Status does nothing.
func (NopSyncObserver) Status(SyncStatus) {}

// SlotInfo describes the slot and publication of a sync.
type SlotInfo struct {
	Slot, Publication   string
	SlotCreated         bool // created by this Sync, not reused
	PublicationCreated  bool
	ConfirmedFlush      LSN      // where the stream resumes
	RetainedBytes       int64    // WAL the slot holds back on the server
	Tables              []string // the published tables
	ConsistentPoint     LSN      // of a slot created now
	InitialLoadSnapshot bool     // the initial load reads the slot's exported snapshot
}

// SyncStatus is a sync's state at one moment.
type SyncStatus struct {
	Elapsed time.Duration
	// ServerLSN is the source's current WAL position; Confirmed the
	// position up to which every change is applied and acknowledged by
	// DynamoDB (the slot's confirmed position).
	ServerLSN, Confirmed LSN
	// LagBytes is ServerLSN - Confirmed; LagSeconds how long the oldest
	// received, not yet applied transaction has been committed (0 when
	// none waits). LastLatency is the commit-to-acknowledged time of the
	// oldest transaction of the last round applied.
	LagBytes    int64
	LagSeconds  float64
	LastLatency float64
	// Counts since Sync started.
	Transactions, Changes, ItemsPut, ItemsDeleted, Rounds int64
	// Rates over the last status interval.
	ChangesPerSecond, ItemsPerSecond float64
	// Fanout counts the items the changes affected: Max is the largest
	// number one change affected, MaxChange names it.
	Fanout Fanout
	// CaughtUp: every change up to ServerLSN is applied.
	CaughtUp bool
	Done     bool // the final call

	// Received is the position of the last message the stream delivered.
	Received LSN
	// LagSince is the oldest moment at which this sync saw WAL on the
	// source that it has not applied yet; zero when caught up. It comes
	// from samples of the source's WAL position (every second) and from
	// commit times, so the lag it gives is true while the server decodes
	// old WAL and sends nothing. It errs short, never long: by up to one
	// sample (a second), and WAL already waiting when the sync started
	// counts from the sync's start.
	LagSince time.Time
	// SlotRetainedBytes is the WAL the slot holds back on the source
	// (-1 when it could not be read).
	SlotRetainedBytes int64
	// TableChanges counts the row changes read, by source table
	// (schema.table); Entities the items written and deleted, by entity.
	TableChanges map[string]int64
	Entities     map[string]SyncEntity
	// Writes counts the DynamoDB work of the stream's rounds.
	Writes SyncWrites
}

// SyncEntity counts one entity's items since Sync started.
type SyncEntity struct {
	Put, Deleted int64
}

// SyncWrites counts DynamoDB calls and retries of a sync's rounds.
type SyncWrites struct {
	Calls          int64
	ThrottledCalls int64 // calls throttled, or answered with UnprocessedItems
	Retries        int64 // item sends beyond the first
	Throttled      int64 // item sends throttled
	// LastError is when a round last saw a failed call (retried): zero
	// when none has.
	LastError time.Time
}

// SyncResult is what a sync did.
type SyncResult struct {
	Slot SlotInfo
	// Load is the initial load's result; nil when the table was already
	// loaded for this slot.
	Load *RunResult
	// Final is the stream's last status.
	Final SyncStatus
	// CaughtUp says Sync returned because the stream reached the source's
	// WAL position (UntilCaughtUp): every transaction committed before
	// CaughtUpAt is in the table.
	CaughtUp   bool
	CaughtUpAt LSN
}

// WithDefaults returns c with every unset field set to its default.
func (c SyncConfig) WithDefaults() SyncConfig {
	if c.Mapping != nil {
		c.Table = cmp.Or(c.Table, c.Mapping.Table)
	}
	c.Slot = cmp.Or(c.Slot, replicate.DefaultName(c.Table))
	c.Publication = cmp.Or(c.Publication, replicate.DefaultName(c.Table))
	c.StateFile = cmp.Or(c.StateFile, filepath.Join(DefaultStateDir, c.Table+".state.json"))
	c.MaxFanout = cmp.Or(c.MaxFanout, DefaultMaxFanout)
	c.OnTruncate = cmp.Or(c.OnTruncate, OnTruncateFail)
	c.MaxBatch = cmp.Or(c.MaxBatch, DefaultSyncBatch)
	c.StatusEvery = cmp.Or(c.StatusEvery, DefaultStatusEvery)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = NopSyncObserver{}
	}
	return c
}

// Validate reports every problem with c at once, each wrapping ErrConfig.
// Call it on WithDefaults().
func (c SyncConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, configErrorf(format, args...)) }
	if c.Mapping == nil {
		bad("sync: a mapping is required")
	}
	if c.Postgres == "" {
		bad("sync: a source database URL is required")
	}
	if c.DynamoDB == nil {
		bad("sync: a DynamoDB client is required")
	}
	if c.Table == "" {
		bad("sync: a target table name is required")
	}
	for _, n := range []struct{ field, what, name string }{{"Slot", "slot", c.Slot}, {"Publication", "publication", c.Publication}} {
		switch {
		case n.name == "":
			// WithDefaults names them after the table.
			errs = append(errs, kinded(ErrConfig, replicate.CheckName(n.what, n.name)))
		case replicate.NameProblem(n.name) != "":
			errs = append(errs, fieldf("sync", n.field, "%s", replicate.NameProblem(n.name)))
		}
	}
	if c.StatusEvery < 0 {
		errs = append(errs, fieldf("sync", "StatusEvery", "must be positive"))
	}
	if c.MaxFanout < -1 {
		errs = append(errs, fieldf("sync", "MaxFanout", "must be -1 (no bound), 0 (the default, %d) or more", DefaultMaxFanout))
	}
	switch c.OnTruncate {
	case OnTruncateFail, OnTruncateDelete:
	default:
		errs = append(errs, fieldf("sync", "OnTruncate", "must be %q or %q, not %q", OnTruncateFail, OnTruncateDelete, c.OnTruncate))
	}
	writer := validateWriter("sync", c.Writer, c.CreateTable)
	errs = append(errs, writer...)
	// Last, as a command checks them after its other flags.
	errs = append(errs, checkName("sync", "Table", "table", c.Table), CheckPostgres("sync", c.Postgres))
	if c.MaxBatch < 1 {
		errs = append(errs, fieldf("sync", "MaxBatch", "must be at least 1 (the default is %d)", DefaultSyncBatch))
	}
	if c.Mapping != nil && c.Table != "" && len(writer) == 0 {
		if err := c.writerConfig().Validate(); err != nil {
			errs = append(errs, kinded(ErrConfig, err))
		}
	}
	return errors.Join(errs...)
}

func (c SyncConfig) writerConfig() load.Config {
	return RunConfig{Mapping: c.Mapping, Table: c.Table, Writer: c.Writer, Logger: c.Logger}.writerConfig()
}

// streamSource is the compiled mapping a stream renders items with, and
// the graph of which items each table's changes reach.
type streamSource struct {
	plan  *transform.Plan
	graph *affect.Graph
	cat   *mapping.Catalog
	// schema is the definition of every table the stream reads, as the
	// plan was compiled against it, its columns Mapped.
	schema []extract.TableSchema
}

// compileForStream checks the mapping against the catalog and builds the
// plan and graph, inside a snapshot of conn.
func compileForStream(ctx context.Context, conn *pgx.Conn, m *mapping.Mapping) (*streamSource, error) {
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer snap.Close(context.WithoutCancel(ctx))
	cat, err := checkAgainst(ctx, snap, m)
	if err != nil {
		return nil, err
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		return nil, err
	}
	g, err := affect.New(plan, cat)
	if err != nil {
		return nil, err
	}
	var names [][2]string
	for _, t := range g.Tables() {
		names = append(names, [2]string{t.Schema, t.Name})
	}
	schema, err := extract.ReadSchemas(ctx, snap, names)
	if err != nil {
		return nil, err
	}
	markMapped(schema, plan)
	return &streamSource{plan: plan, graph: g, cat: cat, schema: schema}, nil
}

// replicationProblems are the reasons the source cannot feed a stream:
// wal_level, and every table whose replica identity lacks columns.
func replicationProblems(ctx context.Context, conn *pgx.Conn, g *affect.Graph) ([]error, error) {
	problems := g.Unsupported()
	if err := replicate.CheckWALLevel(ctx, conn); err != nil {
		if !errors.Is(err, replicate.ErrNotLogical) {
			return nil, err
		}
		problems = append(problems, err)
	}
	for _, r := range g.Requirements() {
		id, err := extract.ReplicaIdentity(ctx, conn, r.Table.Schema, r.Table.Name)
		if err != nil {
			return nil, err
		}
		if err := r.Check(id); err != nil {
			problems = append(problems, err)
		}
	}
	return problems, nil
}

// ReplicationProblems checks whether the source can feed a sync of the
// mapping: wal_level is logical, and every table's replica identity
// carries the columns that deletes and key changes need. Each problem says
// what to change (the ALTER statement for an identity). Mapping problems
// come back as the error, as mapping.Diagnostics.
func ReplicationProblems(ctx context.Context, m *mapping.Mapping, pgURL string) ([]error, error) {
	conn, err := connect(ctx, pgURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	ss, err := compileForStream(ctx, conn, m)
	if err != nil {
		return nil, err
	}
	return replicationProblems(ctx, conn, ss.graph)
}

func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	if url == "" {
		return nil, configErrorf("no source database URL")
	}
	conn, err := extract.Connect(ctx, url)
	if errors.Is(err, extract.ErrBadURL) {
		return nil, kinded(ErrConfig, err)
	}
	return conn, err
}

// Sync keeps the target table converged with a live source: it creates
// (or reuses) a publication of the mapping's tables and a logical
// replication slot, loads the table inside the slot's exported snapshot
// (Run, with the same state file and resume rules), then streams the
// changes. Every change is applied to every item it affects, re-rendered
// from the rows' current state with the same plan as Run; the slot's
// confirmed position advances only once DynamoDB acknowledged every item
// of every transaction before it, so a crash only repeats work.
//
// DDL on a table the stream reads is followed when it adds columns (or
// changes columns no entity reads): the mapping is compiled anew, and
// items gaining a column with a default are rendered again. Any other
// change stops it with ErrSchemaChanged, also on every later start, since
// the items were rendered from the old definition.
//
// Sync returns when ctx ends (ErrInterrupted: the round in flight is
// finished and confirmed first), when the stream caught up with
// UntilCaughtUp, or on a failure. The slot stays in every case: it keeps
// WAL on the server until DropSync removes it.
func Sync(ctx context.Context, cfg SyncConfig) (_ *SyncResult, err error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	conn, err := connect(ctx, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := checkDDLSinceLastSync(ctx, conn, cfg, nil); err != nil {
		return nil, err
	}
	ss, err := compileForStream(ctx, conn, cfg.Mapping)
	if err != nil {
		return nil, err
	}
	// Replica identities are judged by what the mapping needs.
	if err := checkDDLSinceLastSync(ctx, conn, cfg, ss.graph); err != nil {
		return nil, err
	}
	problems, err := replicationProblems(ctx, conn, ss.graph)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, kinded(ErrNotReplicable, fmt.Errorf("sync: the source is not ready for logical replication; nothing was created:\n  %w", errors.Join(problems...)))
	}

	res := &SyncResult{Slot: SlotInfo{Slot: cfg.Slot, Publication: cfg.Publication}}
	var tables []replicate.Table
	for _, t := range ss.graph.Tables() {
		tables = append(tables, t)
		res.Slot.Tables = append(res.Slot.Tables, t.String())
	}
	if res.Slot.PublicationCreated, err = replicate.EnsurePublication(ctx, conn, cfg.Publication, tables); err != nil {
		return nil, err
	}
	var dbName string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	slot, err := readIdleSlot(ctx, conn, cfg.Slot, log)
	if err != nil {
		return nil, err
	}
	if slot != nil {
		if err := replicate.CheckSlot(slot, dbName); err != nil {
			return nil, err
		}
	}
	repl, err := replicate.Connect(ctx, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer repl.Close(context.WithoutCancel(ctx))

	var snapshot string
	if slot == nil {
		created, err := createSlot(ctx, repl, conn, cfg.Slot, log)
		if err != nil {
			return nil, err
		}
		res.Slot.SlotCreated, res.Slot.ConsistentPoint, snapshot = true, created.ConsistentPoint, created.Snapshot
		res.Slot.ConfirmedFlush, res.Slot.InitialLoadSnapshot = created.ConsistentPoint, true
	} else {
		res.Slot.ConfirmedFlush, res.Slot.RetainedBytes = slot.ConfirmedFlush, slot.RetainedBytes
	}
	cfg.Observer.Slot(res.Slot)

	// From here on the slot holds WAL: the guard watches it, and its
	// stop ends the initial load and the stream alike.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if cfg.MaxSlotWAL > 0 {
		guarded := make(chan struct{})
		defer func() {
			// Whatever step the guard interrupted, the slot goes.
			if errors.Is(context.Cause(ctx), ErrSlotWALLimit) {
				confirmed := res.Slot.ConfirmedFlush
				if res.Final.Confirmed > confirmed {
					confirmed = res.Final.Confirmed
				}
				err = dropForLimit(ctx, cfg, repl, confirmed)
			}
			stop(nil)
			<-guarded
		}()
		go func() {
			defer close(guarded)
			slotGuard{pgURL: cfg.Postgres, slot: cfg.Slot, limit: cfg.MaxSlotWAL, log: log}.run(ctx, stop)
		}()
	}
	if res.Load, err = initialLoad(ctx, cfg, snapshot, res.Slot.SlotCreated, log); err != nil {
		return res, err
	}
	// The table may have changed since the load (a resumed sync): it must
	// still exist and fit the mapping.
	// Its capacity is where each round's writer starts (run's does too).
	target := &tableTarget{client: cfg.DynamoDB, cfg: cfg.writerConfig()}
	if _, err := target.Open(ctx); err != nil {
		return res, err
	}
	// The stream renders items with the shard counts the load used.
	st, err := checkpoint.Load(cfg.StateFile)
	if err != nil {
		return res, kinded(ErrState, fmt.Errorf("sync: read the initial load's state file: %w", err))
	}
	for _, s := range st.Shards {
		ss.plan.SetShardCount(s.Entity, s.Index, s.Count)
	}
	// The definitions the items were rendered with: recorded by an earlier
	// stream, else the ones compiled against before this load (DDL during
	// the load then shows as a change).
	schema := st.Schema
	if len(schema) == 0 {
		st.Schema, schema = ss.schema, ss.schema
		if err := checkpoint.Save(cfg.StateFile, st); err != nil {
			return res, kinded(ErrState, fmt.Errorf("sync: record the table definitions: %w", err))
		}
	}

	if slot, err = replicate.ReadSlot(ctx, conn, cfg.Slot); err != nil || slot == nil {
		return res, errors.Join(err, fmt.Errorf("sync: slot %s disappeared during the initial load", cfg.Slot))
	}
	stream, err := replicate.Start(ctx, repl, replicate.StreamConfig{Slot: cfg.Slot, Publication: cfg.Publication, Start: slot.ConfirmedFlush})
	if err != nil {
		if ctx.Err() != nil {
			return res, kinded(ErrInterrupted, errors.New("sync interrupted before streaming"))
		}
		return res, err
	}
	log.Info("streaming", "slot", cfg.Slot, "from", slot.ConfirmedFlush.String())
	a := &applier{cfg: cfg, log: log, ss: ss, stream: stream, conn: conn, start: start, confirmed: slot.ConfirmedFlush, schema: schema,
		capacity: target.cfg.Capacity}
	err = a.run(ctx)
	res.Final, res.CaughtUp = a.status(ctx, true), a.caughtUp
	if a.caughtUp {
		res.CaughtUpAt = a.catchUpTo
	}
	cfg.Observer.Status(res.Final)
	return res, err
}

// checkDDLSinceLastSync stops a sync that resumes a slot when a table
// changed since the definitions an earlier stream recorded in a way the
// stream cannot follow, before the mapping is compiled against the new
// catalog (which would blame the mapping, or fit it and go on over items
// rendered from the old definition). A new slot means a new load: nothing
// to compare then.
//
// Without g, a changed replica identity is not judged.
func checkDDLSinceLastSync(ctx context.Context, conn *pgx.Conn, cfg SyncConfig, g *affect.Graph) error {
	st, err := checkpoint.Load(cfg.StateFile)
	if err != nil || !st.Complete || len(st.Schema) == 0 || st.MappingSHA256 != cfg.Mapping.Digest || st.Table != cfg.Table {
		return nil // initialLoad judges the state file
	}
	slot, err := replicate.ReadSlot(ctx, conn, cfg.Slot)
	if err != nil || slot == nil {
		return err
	}
	return checkRecordedSchema(ctx, conn, st, g, slot.ConfirmedFlush)
}

// dropForLimit drops the slot once the guard stopped the sync, and says
// how to start again.
func dropForLimit(ctx context.Context, cfg SyncConfig, repl *pgconn.PgConn, confirmed LSN) error {
	cause := context.Cause(ctx)
	_ = repl.Close(context.WithoutCancel(ctx))
	if err := dropAfterLimit(ctx, cfg.Postgres, cfg.Slot); err != nil {
		return fmt.Errorf("sync: %w; dropping the slot failed, drop it now (migrate sync --drop, or SELECT pg_drop_replication_slot('%s')): %v", cause, cfg.Slot, err)
	}
	return fmt.Errorf("sync: %w. The slot %s was dropped to protect the source's disk; the table holds every change up to %s. "+
		"To sync again, run the same command: it creates a new slot and loads the table afresh (then migrate prune removes items of rows deleted meanwhile)", cause, cfg.Slot, confirmed)
}

// slotReleaseWait is how long Sync waits for the server to release a slot
// still held by a stream whose client died (a sync killed a moment ago):
// the server notices the closed connection soon, but not at once.
const slotReleaseWait = 15 * time.Second

// readIdleSlot reads the slot, waiting up to slotReleaseWait while it is
// in use; nil when there is none.
func readIdleSlot(ctx context.Context, conn *pgx.Conn, name string, log *slog.Logger) (*Slot, error) {
	deadline := time.Now().Add(slotReleaseWait)
	for waited := false; ; waited = true {
		slot, err := replicate.ReadSlot(ctx, conn, name)
		if err != nil || slot == nil || !slot.Active || time.Now().After(deadline) {
			return slot, err
		}
		if !waited {
			log.Info("the slot is in use; waiting for the server to release it", "slot", name, "pid", slot.ActivePID)
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, kinded(ErrInterrupted, ctx.Err())
		}
	}
}

// initialLoad loads the table, unless the state file says this slot's
// load is complete: inside the slot's snapshot when the slot was created
// now, else (resuming an interrupted load, or a reused slot without one)
// in a new snapshot, which is as good: the stream replays every change
// since the slot's position, and applying a change re-renders items from
// the rows' current state.
func initialLoad(ctx context.Context, cfg SyncConfig, snapshot string, created bool, log *slog.Logger) (*RunResult, error) {
	run := RunConfig{
		Mapping: cfg.Mapping, Postgres: cfg.Postgres, Snapshot: snapshot,
		DynamoDB: cfg.DynamoDB, Table: cfg.Table, CreateTable: cfg.CreateTable, Writer: cfg.Writer,
		StateFile: cfg.StateFile, ResumeCommand: cfg.ResumeCommand,
		Observer: cfg.Observer, Logger: cfg.Logger,
	}
	prev, err := checkpoint.Load(cfg.StateFile)
	switch {
	case created || errors.Is(err, fs.ErrNotExist):
		run.Fresh = true
		if !created {
			log.Info("the slot exists but no initial load is recorded; loading the table now", "state", cfg.StateFile)
		}
	case err != nil:
		return nil, kinded(ErrState, fmt.Errorf("sync: %w", err))
	case prev.MappingSHA256 != cfg.Mapping.Digest || prev.Table != cfg.Table:
		return nil, stateErrorf("sync: %s records a load of table %s with another mapping (or into another table); the slot's stream cannot continue it. Drop the slot (sync --drop) and start over", cfg.StateFile, prev.Table)
	case prev.Complete:
		log.Info("the table is loaded; streaming from the slot", "state", cfg.StateFile)
		return nil, nil
	default:
		run.Resume = true
		log.Info("resuming the interrupted initial load", "state", cfg.StateFile)
	}
	res, err := Run(ctx, run)
	if err != nil {
		return res, err
	}
	return res, nil
}
