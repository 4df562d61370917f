package load

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffCeiling(t *testing.T) {
	t.Parallel()
	b := newBackoff(50*time.Millisecond, 5*time.Second)
	want := []time.Duration{50, 100, 200, 400, 800, 1600, 3200, 5000, 5000}
	for i, w := range want {
		if got := b.ceiling(i + 1); got != w*time.Millisecond {
			t.Errorf("ceiling(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if got := b.ceiling(1000); got != 5*time.Second {
		t.Errorf("ceiling(1000) = %v (overflow?)", got)
	}
	if got := b.ceiling(0); got != 50*time.Millisecond {
		t.Errorf("ceiling(0) = %v", got)
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	for _, r := range []float64{0, 0.5, 0.999999} {
		b := newBackoff(time.Second, 4*time.Second)
		b.rand = func() float64 { return r }
		for n := 1; n < 10; n++ {
			d := b.delay(n)
			if d < 0 || d > b.ceiling(n) {
				t.Errorf("rand %v, retry %d: delay %v outside [0, %v]", r, n, d, b.ceiling(n))
			}
		}
	}
}

// Full jitter: delays spread uniformly over [0, cap], not bunched near cap.
func TestBackoffFullJitterDistribution(t *testing.T) {
	t.Parallel()
	b := newBackoff(100*time.Millisecond, 2*time.Second)
	const n = 20000
	capD := b.ceiling(6) // 2s
	var buckets [10]int
	var sum time.Duration
	for range n {
		d := b.delay(6)
		if d < 0 || d > capD {
			t.Fatalf("delay %v outside [0, %v]", d, capD)
		}
		sum += d
		buckets[min(9, int(d*10/capD))]++
	}
	mean := sum / n
	if lo, hi := capD*45/100, capD*55/100; mean < lo || mean > hi {
		t.Errorf("mean delay %v, want about %v", mean, capD/2)
	}
	for i, c := range buckets {
		if c < n/10*8/10 || c > n/10*12/10 {
			t.Errorf("decile %d holds %d of %d delays, want about %d", i, c, n, n/10)
		}
	}
}

func TestSleepCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	err := realClock{}.Sleep(ctx, time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Sleep returned %v after cancel", d)
	}
	if err := (realClock{}).Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) on a canceled context = %v", err)
	}
	if err := (realClock{}).Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
}
