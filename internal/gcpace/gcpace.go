// Package gcpace sets the garbage collector's pace for the bulk commands:
// a memory floor under which it does not collect, instead of GOGC=100's
// collection every few thousand items.
package gcpace

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// A run's live heap is small (the writer's
// window, the checkpoint queue: some tens of MB) while it allocates a few
// KB per item, so with the default GOGC=100 it collects every few thousand
// items and spends about a third of the run's CPU on it. Collecting only
// once the heap reaches gcFloor, or 1.5 times the live heap when that is
// more, cuts that by half (the README's Performance section). The floor is what peak
// memory pays for it: with 100 MiB a run of 1M items peaked at ~116 MiB,
// with 128 MiB at ~142 MiB (under the 150 MiB budget) for about 9% less
// CPU per item on a busy machine: a live heap of ~30 MB leaves the
// collector about 75 MB to fill between cycles instead of 45. GOGC or
// GOMEMLIMIT in the environment leave the runtime's defaults alone.
const (
	gcFloor   = 128 << 20 // bytes of Go memory before a collection is due
	gcPercent = 300       // the pace above the floor: at most 4x the live heap
	gcEvery   = 500 * time.Millisecond
	gcSlack   = 16 << 20 // Go memory that is not heap: stacks, runtime metadata
)

// gcHeld is memory a command holds by design on top of a run's, added to
// the floor (see Hold); paced says Start set the pace.
var (
	gcHeld atomic.Int64
	paced  atomic.Bool
)

// Hold adds n bytes to the floor, for a command that holds that much
// more than a run by design: an export keeps the items of the file being
// written until its commit (about --file-size: 60-100 MB of live heap
// with 64 MiB files), and with the run's floor it collected every 30 MB
// it allocated. The floor at 128 MiB + 64 MiB took 12-13% off an export's
// CPU (1M items, zstd and gzip) for 45-55 MiB more peak memory (about 210
// MiB; README.md, Performance).
func Hold(n int64) {
	gcHeld.Store(n)
	if paced.Load() {
		debug.SetMemoryLimit(gcFloor + n)
	}
}

// Start sets the pace until ctx ends: a memory limit of the floor, raised
// to 1.5 times the live heap when the live heap grows, so that a run with
// large items does not collect continuously.
func Start(ctx context.Context) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(gcFloor + gcHeld.Load())
	paced.Store(true)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		t := time.NewTicker(gcEvery)
		defer t.Stop()
		limit := int64(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			live := int64(sample[0].Value.Uint64())
			if want := max(gcFloor+gcHeld.Load(), live*3/2+gcSlack); want != limit {
				limit = want
				debug.SetMemoryLimit(limit)
			}
		}
	}()
}
