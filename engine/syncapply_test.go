package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/load"
)

func TestSees(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		snapshot string
		xids     []uint32
		want     bool
	}{
		{"before xmin", "100:105:", []uint32{99}, true},
		{"between, not running", "100:105:101,103", []uint32{102, 104}, true},
		{"running", "100:105:101,103", []uint32{103}, false},
		{"at xmax", "100:105:", []uint32{105}, false},
		{"after xmax", "100:105:", []uint32{200}, false},
		{"none", "100:105:", nil, true},
		// Full xids of the second epoch; the stream sends the low bits.
		{"second epoch", "4294967396:4294967401:", []uint32{99}, true},
		{"second epoch, running", "4294967396:4294967401:4294967398", []uint32{102}, false},
		// xmax wrapped into the next epoch, the xid not yet.
		{"across the wrap", "4294967290:4294967300:", []uint32{4294967294}, true},
		{"across the wrap, not yet committed", "4294967290:4294967300:4294967295", []uint32{4294967295}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := sees(c.snapshot, c.xids)
			if err != nil || got != c.want {
				t.Errorf("sees(%q, %v) = %v, %v; want %v", c.snapshot, c.xids, got, err, c.want)
			}
		})
	}
	if _, err := sees("garbage", nil); err == nil {
		t.Error("a malformed snapshot was accepted")
	}
}

// The lag is measured against the source's WAL position, so that it is
// true while nothing arrives (the server decoding old WAL), and errs short.
func TestLagSince(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		name      string
		confirmed replicate.LSN
		samples   []walSample
		first     time.Time // commit time of the oldest received, unapplied transaction
		want      time.Time
	}{
		{"no samples", 100, nil, time.Time{}, time.Time{}},
		{"caught up", 100, []walSample{{at(1), 90}, {at(2), 100}}, time.Time{}, time.Time{}},
		{"waiting since start", 100, []walSample{{at(1), 150}, {at(2), 160}}, time.Time{}, start},
		{"new WAL after a confirmed sample", 100, []walSample{{at(1), 100}, {at(2), 100}, {at(3), 120}, {at(4), 130}}, time.Time{}, at(3)},
		{"older commit wins", 100, []walSample{{at(1), 100}, {at(5), 120}}, at(2), at(2)},
		{"later commit loses", 100, []walSample{{at(1), 100}, {at(5), 120}}, at(7), at(5)},
		{"commit only", 100, []walSample{{at(1), 100}}, at(3), at(3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &applier{start: start, confirmed: c.confirmed, walSamples: c.samples, first: c.first}
			if got := a.lagSince(); !got.Equal(c.want) {
				t.Errorf("lagSince = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRetryingTransientSourceErrors: a round whose read the source ended
// with a deadlock or a serialization failure is tried again; any other
// error ends it at once, and so does the last try.
func TestRetryingTransientSourceErrors(t *testing.T) {
	a := &applier{log: slog.New(slog.DiscardHandler)}
	deadlock := fmt.Errorf("extract public.customers: %w", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"})
	tries := 0
	err := a.retrying(t.Context(), "a test", func(try int) error {
		tries = try
		if try < 3 {
			return deadlock
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Errorf("after two deadlocks: err %v after %d tries, want nil after 3", err, tries)
	}
	other := fmt.Errorf("extract: %w", &pgconn.PgError{Code: "42703", Message: "column does not exist"})
	tries = 0
	err = a.retrying(t.Context(), "a test", func(try int) error { tries = try; return other })
	if !errors.Is(err, other) || tries != 1 {
		t.Errorf("an undefined column: err %v after %d tries, want it after 1", err, tries)
	}
	if testing.Short() {
		return
	}
	tries = 0
	err = a.retrying(t.Context(), "a test", func(try int) error { tries = try; return deadlock })
	if !errors.Is(err, deadlock) || tries != retryAttempts {
		t.Errorf("deadlocks every time: err %v after %d tries, want it after %d", err, tries, retryAttempts)
	}
}

// TestSyncWriterStartsAtCapacity: each round's writer starts at what the
// table takes at once (as run's does), unless the caller set a capacity.
func TestSyncWriterStartsAtCapacity(t *testing.T) {
	table := load.TableCapacity{WCU: 3000, MaxWCU: 3000}
	a := &applier{capacity: table}
	if got := a.writerConfig().Capacity; got != table {
		t.Errorf("writer starts at %+v, want the table's %+v", got, table)
	}
	own := load.TableCapacity{WCU: 50}
	a.cfg.Writer.Capacity = own
	if got := a.writerConfig().Capacity; got != own {
		t.Errorf("writer starts at %+v, want the caller's %+v", got, own)
	}
}
