package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The garbage collector's pace. A run's live heap is small (the writer's
// window, the checkpoint queue: some tens of MB) while it allocates a few
// KB per item, so with the default GOGC=100 it collects every few thousand
// items and spends about a third of the run's CPU on it. Collecting only
// once the heap reaches gcFloor, or 1.5 times the live heap when that is
// more, cuts that by half (README.md, Performance). The floor is what peak
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

// paceGC sets the pace until ctx ends: a memory limit of the floor, raised
// to 1.5 times the live heap when the live heap grows, so that a run with
// large items does not collect continuously.
func paceGC(ctx context.Context) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(gcFloor)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		t := time.NewTicker(gcEvery)
		defer t.Stop()
		limit := int64(gcFloor)
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
			if want := max(gcFloor, live*3/2+gcSlack); want != limit {
				limit = want
				debug.SetMemoryLimit(limit)
			}
		}
	}()
}
