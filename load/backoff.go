package load

import (
	"context"
	"math/rand/v2"
	"time"
)

// clock is the writer's view of time, replaced by a fake in tests.
type clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// backoff computes exponential backoff with full jitter: before retry n
// (n >= 1) sleep a uniformly random duration in [0, min(max, base·2ⁿ⁻¹)].
type backoff struct {
	base, max time.Duration
	rand      func() float64 // uniform in [0, 1); math/rand/v2 by default
}

func newBackoff(base, max time.Duration) backoff {
	return backoff{base: base, max: max, rand: rand.Float64}
}

// ceiling is the upper bound of the sleep before retry n.
func (b backoff) ceiling(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := b.base
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// delay is the jittered sleep before retry n.
func (b backoff) delay(n int) time.Duration {
	return time.Duration(b.rand() * float64(b.ceiling(n)))
}
