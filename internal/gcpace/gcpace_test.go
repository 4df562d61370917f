package gcpace

import (
	"context"
	"runtime/debug"
	"testing"
)

// Start sets the floor as the memory limit, and Hold raises it; with GOGC
// in the environment the runtime's settings are left alone.
func TestStartAndHold(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	beforePercent := debug.SetGCPercent(-1)
	debug.SetGCPercent(beforePercent)
	t.Cleanup(func() {
		debug.SetMemoryLimit(before)
		debug.SetGCPercent(beforePercent)
		gcHeld.Store(0)
		paced.Store(false)
	})

	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "")
	Start(t.Context())
	if got := debug.SetMemoryLimit(-1); got != before || paced.Load() {
		t.Fatalf("with GOGC set, the limit became %d (was %d)", got, before)
	}

	t.Setenv("GOGC", "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	Start(ctx)
	if got := debug.SetMemoryLimit(-1); got != gcFloor {
		t.Errorf("limit after Start = %d, want the floor %d", got, gcFloor)
	}
	if got := debug.SetGCPercent(gcPercent); got != gcPercent {
		t.Errorf("GC percent = %d, want %d", got, gcPercent)
	}
	Hold(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != gcFloor+64<<20 {
		t.Errorf("limit after Hold(64 MiB) = %d, want %d", got, gcFloor+64<<20)
	}
}
