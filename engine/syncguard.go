package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/internal/report"
)

// slotWaitReport is how long slot creation may wait before Sync says what
// it waits for, and how often it says it again.
const slotWaitReport = 3 * time.Second

// openTransaction is a transaction open on the source, as an operator
// would want it named: no query text, which may hold row values.
type openTransaction struct {
	PID         int32
	User, App   string
	State       string
	OpenSeconds float64
}

func (o openTransaction) String() string {
	who := o.User
	if o.App != "" {
		who += ", " + o.App
	}
	return fmt.Sprintf("pid %d (%s; %s; open for %s)", o.PID, who, o.State, (time.Duration(o.OpenSeconds) * time.Second).String())
}

// openTransactions lists the oldest transactions with an xid open on the
// source: a slot is made only once every one of them ended.
func openTransactions(ctx context.Context, conn *pgx.Conn) ([]openTransaction, error) {
	rows, err := conn.Query(ctx, `SELECT pid, COALESCE(usename::text, ''), COALESCE(application_name, ''), COALESCE(state, ''),
			EXTRACT(EPOCH FROM clock_timestamp() - xact_start)::float8
		FROM pg_catalog.pg_stat_activity
		WHERE backend_xid IS NOT NULL AND xact_start IS NOT NULL AND pid <> pg_backend_pid() AND backend_type <> 'walsender'
		ORDER BY xact_start LIMIT 3`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (openTransaction, error) {
		var o openTransaction
		err := r.Scan(&o.PID, &o.User, &o.App, &o.State, &o.OpenSeconds)
		return o, err
	})
}

// createSlot creates the slot. The server makes slot creation wait for
// every transaction open on the source (one idle in transaction for hours
// holds it for hours): while it waits, createSlot says every few seconds
// which transactions it waits for, on conn (idle meanwhile).
func createSlot(ctx context.Context, repl *pgconn.PgConn, conn *pgx.Conn, slot string, log *slog.Logger) (*replicate.CreatedSlot, error) {
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		began := time.Now()
		t := time.NewTimer(slotWaitReport)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			open, err := openTransactions(qctx, conn)
			cancel()
			switch {
			case err != nil:
				log.Warn("creating the replication slot takes long; the transactions open on the source could not be listed",
					"slot", slot, "waited", time.Since(began).Round(time.Second).String(), "error", err)
			case len(open) == 0:
				log.Warn("creating the replication slot takes long: the server is still building its snapshot",
					"slot", slot, "waited", time.Since(began).Round(time.Second).String())
			default:
				names := make([]string, len(open))
				for i, o := range open {
					names[i] = o.String()
				}
				log.Warn("creating the replication slot waits until the transactions open on the source end; end them (pg_terminate_backend) or wait",
					"slot", slot, "waited", time.Since(began).Round(time.Second).String(), "oldest", strings.Join(names, "; "))
			}
			t.Reset(10 * time.Second)
		}
	}()
	created, err := replicate.CreateSlot(ctx, repl, slot)
	close(done)
	<-watched
	return created, err
}

// ErrSlotWALLimit says the slot held more WAL than SyncConfig.MaxSlotWAL
// allows: Sync dropped the slot to protect the source's disk.
var ErrSlotWALLimit = errors.New("the replication slot reached --max-slot-wal")

// slotGuardEvery is how often the guard reads the slot's retained WAL.
const slotGuardEvery = 2 * time.Second

// slotGuard watches the WAL the slot holds back, on its own connection,
// whatever the stream is doing (a round may be retrying against a stalled
// target for minutes). Past 80% of the limit it warns at every check; at
// the limit it calls stop with ErrSlotWALLimit.
type slotGuard struct {
	pgURL string
	slot  string
	limit int64
	log   *slog.Logger
}

// run checks until ctx ends or the limit is reached.
func (g slotGuard) run(ctx context.Context, stop context.CancelCauseFunc) {
	conn, err := connect(ctx, g.pgURL)
	if err != nil {
		if ctx.Err() == nil {
			stop(fmt.Errorf("sync: --max-slot-wal: cannot watch the slot: %w", err))
		}
		return
	}
	defer conn.Close(context.WithoutCancel(ctx))
	t := time.NewTicker(slotGuardEvery)
	defer t.Stop()
	warned := int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := replicate.ReadSlot(qctx, conn, g.slot)
		cancel()
		if err != nil || s == nil {
			continue // the stream reports a missing slot itself
		}
		switch {
		case s.RetainedBytes >= g.limit:
			stop(fmt.Errorf("%w: it holds %s of WAL on the source, over the limit of %s", ErrSlotWALLimit, report.Bytes(s.RetainedBytes), report.Bytes(g.limit)))
			return
		case s.RetainedBytes >= g.limit*8/10 && s.RetainedBytes > warned:
			g.log.Warn("the replication slot holds WAL near --max-slot-wal: sync stops and drops the slot at the limit",
				"slot", g.slot, "retained", report.Bytes(s.RetainedBytes), "limit", report.Bytes(g.limit))
			warned = s.RetainedBytes
		}
	}
}

// dropAfterLimit drops the slot once its stream has ended: the source's
// disk comes before the sync. The server may take a moment to release the
// slot of a stream that just closed.
func dropAfterLimit(ctx context.Context, pgURL, slot string) error {
	ctx = context.WithoutCancel(ctx)
	conn, err := connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(slotReleaseWait)
	for {
		_, err = replicate.DropSlot(ctx, conn, slot)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
