package load

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a slog handler used concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestLimiter(maxWCU, floor float64) (*limiter, *fakeClock, *syncBuffer) {
	clk := newFakeClock()
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	return newLimiter(clk, log, maxWCU, floor), clk, &logs
}

func mustWait(t *testing.T, l *limiter, units int) time.Duration {
	t.Helper()
	d, err := l.Wait(context.Background(), units)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLimiterTokenBucket(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(100, 10)
	// A full bucket holds one second of writes.
	if d := mustWait(t, l, 100); d != 0 {
		t.Errorf("first 100 units waited %v", d)
	}
	if d := mustWait(t, l, 50); d != 500*time.Millisecond {
		t.Errorf("next 50 units waited %v, want 500ms", d)
	}
	// A request larger than the bucket goes into debt.
	if d := mustWait(t, l, 300); d != 3*time.Second {
		t.Errorf("300 units waited %v, want 3s", d)
	}
	clk.Advance(10 * time.Second) // refills, but never beyond the burst
	if d := mustWait(t, l, 100); d != 0 {
		t.Errorf("after idling, 100 units waited %v", d)
	}
	if d := mustWait(t, l, 10); d != 100*time.Millisecond {
		t.Errorf("after idling, the bucket held more than one second: waited %v", d)
	}
}

func TestLimiterWaitCanceled(t *testing.T) {
	t.Parallel()
	l, _, _ := newTestLimiter(10, 1)
	mustWait(t, l, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Wait(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	// The canceled request's units were given back.
	if d := mustWait(t, l, 10); d != time.Second {
		t.Errorf("waited %v, want 1s", d)
	}
}

func TestLimiterAIMD(t *testing.T) {
	t.Parallel()
	l, clk, logs := newTestLimiter(1000, 100)

	l.Throttled()
	if r := l.Rate(); r != 500 {
		t.Fatalf("rate after throttle = %v, want 500", r)
	}
	// Calls in flight report the same throttling: one decrease per cooldown.
	l.Throttled()
	clk.Advance(aimdCooldown / 2)
	l.Throttled()
	if r := l.Rate(); r != 500 {
		t.Errorf("rate after throttles within the cooldown = %v, want 500", r)
	}
	clk.Advance(aimdCooldown)
	l.Throttled()
	l.Throttled()
	clk.Advance(aimdCooldown)
	l.Throttled()
	clk.Advance(aimdCooldown)
	l.Throttled()
	if r := l.Rate(); r != 100 {
		t.Errorf("rate = %v, want the floor 100", r)
	}

	// Success right after throttling does not raise the rate.
	l.Succeeded()
	if r := l.Rate(); r != 100 {
		t.Errorf("rate = %v right after throttling", r)
	}
	// Sustained success adds 10% of MaxWCU per interval, up to MaxWCU.
	for i := range 20 {
		clk.Advance(aimdIncreaseInterval)
		l.Succeeded()
		l.Succeeded() // at most one increase per interval
		want := min(1000, 100+100*float64(i+1))
		if r := l.Rate(); r != want {
			t.Fatalf("after %d intervals rate = %v, want %v", i+1, r, want)
		}
	}
	out := logs.String()
	for _, want := range []string{"lowering write rate", "from_wcu=1000 to_wcu=500", "raising write rate", "to_wcu=1000"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs do not mention %q:\n%s", want, out)
		}
	}
}

func TestLimiterUnlimitedEngagesOnThrottle(t *testing.T) {
	t.Parallel()
	l, clk, logs := newTestLimiter(0, 25)
	// Unlimited: no waiting, whatever the volume.
	for range 20 {
		if d := mustWait(t, l, 500); d != 0 {
			t.Fatalf("unlimited limiter waited %v", d)
		}
		clk.Advance(100 * time.Millisecond)
	}
	// 10,000 units over 2s: 5,000/s measured. The first throttle halves that.
	l.Throttled()
	if r := l.Rate(); r < 2000 || r > 3000 {
		t.Fatalf("rate after the first throttle = %v, want about 2500", r)
	}
	if !strings.Contains(logs.String(), "from_wcu=unlimited") {
		t.Errorf("logs: %s", logs)
	}
	engaged := l.Rate()
	clk.Advance(aimdIncreaseInterval)
	l.Succeeded()
	if r := l.Rate(); r <= engaged {
		t.Errorf("rate did not grow after sustained success: %v", r)
	}
}

func TestLimiterFloorWhenNothingMeasured(t *testing.T) {
	t.Parallel()
	l, _, _ := newTestLimiter(0, 25)
	l.Throttled()
	if r := l.Rate(); r != 25 {
		t.Errorf("rate = %v, want the floor", r)
	}
}
