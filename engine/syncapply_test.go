package engine

import (
	"testing"
	"time"

	"github.com/pgdynamo/migrate/internal/replicate"
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
