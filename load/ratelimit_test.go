package load

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
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
	return newLimiter(clk, log, maxWCU, floor, TableCapacity{}), clk, &logs
}

func mustWait(t *testing.T, l *limiter, units int) time.Duration {
	t.Helper()
	d, err := l.Wait(context.Background(), units, time.Time{})
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
	// A request larger than the bucket waits for a full bucket and goes
	// into debt, which the next request waits out.
	if d := mustWait(t, l, 300); d != time.Second {
		t.Errorf("300 units waited %v, want 1s", d)
	}
	if d := mustWait(t, l, 10); d != 2100*time.Millisecond {
		t.Errorf("10 units after 300 waited %v, want 2.1s", d)
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
	if _, err := l.Wait(ctx, 10, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	// The canceled request's units were given back.
	if d := mustWait(t, l, 10); d != time.Second {
		t.Errorf("waited %v, want 1s", d)
	}
}

// A wait that would end after the deadline takes nothing and fails at the
// deadline.
func TestLimiterWaitDeadline(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(10, 1)
	mustWait(t, l, 10) // the bucket is empty: 10 more units take 1s
	start := clk.Now()
	if _, err := l.Wait(context.Background(), 10, start.Add(600*time.Millisecond)); !errors.Is(err, errPastDeadline) {
		t.Fatalf("err = %v, want errPastDeadline", err)
	}
	if slept := clk.Now().Sub(start); slept != 600*time.Millisecond {
		t.Errorf("Wait slept %v before failing, want until the deadline", slept)
	}
	// Nothing was taken: the bucket refilled 6 units meanwhile.
	if d, err := l.Wait(context.Background(), 10, clk.Now().Add(400*time.Millisecond)); err != nil || d != 400*time.Millisecond {
		t.Errorf("a wait that ends at the deadline: %v, %v", d, err)
	}
}

// A large request is served in its turn while small ones keep coming: if
// the small ones could take the units as they trickle in, the large one
// would wait until its deadline (and the checkpoint, which waits for its
// rows, would stand still meanwhile). Real time, with a deadline ten
// times what the large request needs in its turn.
func TestLimiterServesWaitersInOrder(t *testing.T) {
	t.Parallel()
	l := newLimiter(realClock{}, slog.New(slog.DiscardHandler), 1000, 1, TableCapacity{})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	if _, err := l.Wait(ctx, 1000, time.Time{}); err != nil { // empty the bucket
		t.Fatal(err)
	}
	var small sync.WaitGroup
	for range 4 {
		small.Go(func() {
			for ctx.Err() == nil {
				l.Wait(ctx, 50, time.Time{})
			}
		})
	}
	defer small.Wait()
	time.Sleep(100 * time.Millisecond) // the small ones are queued
	start := time.Now()
	_, err := l.Wait(ctx, 500, start.Add(7*time.Second))
	stop()
	if err != nil {
		t.Fatalf("a 500-unit request among 50-unit ones, at 1000 units/s: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
}

// A request already waiting when the rate drops waits for the new rate.
func TestLimiterWaitFollowsRateChanges(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(100, 1)
	mustWait(t, l, 100) // the bucket is empty
	slow := &slowerClock{fakeClock: clk, after: 100 * time.Millisecond, change: func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.setRate(clk.Now(), 50)
	}}
	l.clk = slow
	// 50 units take 500 ms at 100/s; after 100 ms (10 units) the rate drops
	// to 50/s: the 40 left take 800 ms more.
	if d := mustWait(t, l, 50); d != 900*time.Millisecond {
		t.Errorf("waited %v, want 900ms", d)
	}
}

// slowerClock calls change once, when its sleeps have added up to after.
type slowerClock struct {
	*fakeClock
	after, slept time.Duration
	change       func()
}

func (c *slowerClock) Sleep(ctx context.Context, d time.Duration) error {
	err := c.fakeClock.Sleep(ctx, d)
	if c.slept < c.after && c.slept+d >= c.after {
		c.change()
	}
	c.slept += d
	return err
}

// drive runs the limiter for dur of fake time as a writer would: calls of
// 25 units, each answered after rtt with the refused share that answer
// gives for the rate the call was sent at. Without a limit the writer
// sends at speed units/s. It returns the units sent and the calls with
// refusals, counted after skip.
type driveResult struct {
	sent, accepted     float64
	calls, refusedCall int
}

func drive(l *limiter, clk *fakeClock, dur, skip time.Duration, speed float64, answer func(offered float64) float64) driveResult {
	const units, rtt = 25, 20 * time.Millisecond
	var r driveResult
	start := clk.Now()
	for clk.Now().Sub(start) < dur {
		before := clk.Now()
		if _, err := l.Wait(context.Background(), units, time.Time{}); err != nil {
			panic(err)
		}
		if clk.Now().Equal(before) {
			clk.Advance(time.Duration(units / speed * float64(time.Second)))
		}
		offered := speed
		if rate := l.Rate(); rate > 0 {
			offered = min(speed, rate)
		}
		sentAt := clk.Now()
		share := answer(offered)
		refused := int(math.Round(share * units))
		l.Answered(sentAt.Add(-rtt), units, refused)
		if clk.Now().Sub(start) >= skip {
			r.sent += units
			r.accepted += float64(units - refused)
			r.calls++
			if refused > 0 {
				r.refusedCall++
			}
		}
	}
	return r
}

// Behind a capacity it cannot see, the limiter settles below it: close to
// it, with few refusals.
func TestLimiterFindsCapacity(t *testing.T) {
	t.Parallel()
	l, clk, logs := newTestLimiter(0, 25)
	const capacity = 1000.0
	overCapacity := func(offered float64) float64 { return max(0, 1-capacity/offered) }
	r := drive(l, clk, 120*time.Second, 10*time.Second, 5000, overCapacity)
	rate := r.accepted / 110
	if rate < 0.8*capacity || rate > capacity {
		t.Errorf("accepted %.0f units/s after the first 10 s behind a capacity of %.0f", rate, capacity)
	}
	if share := float64(r.refusedCall) / float64(r.calls); share > 0.05 {
		t.Errorf("%.1f%% of calls refused after the first 10 s", 100*share)
	}
	if !strings.Contains(logs.String(), "lowering the write rate") || !strings.Contains(logs.String(), "from_wcu=unlimited") {
		t.Errorf("logs:\n%s", logs)
	}
}

// The decrease is in proportion to what was refused: 20% refused at 1,000
// units/s lowers the rate to 800 (and the margin), not to half.
func TestLimiterDecreasesInProportion(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(1000, 25)
	drive(l, clk, 300*time.Millisecond, 0, 1e9, func(float64) float64 { return 0.2 })
	if got, want := l.Rate(), 1000*0.8*capacityMargin; math.Abs(got-want) > 1 {
		t.Errorf("rate after 20%% refused = %v, want %v", got, want)
	}
}

// Many refusing answers of one window, or answers to calls sent before the
// decrease, lower the rate once.
func TestLimiterDecreasesOncePerWindow(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(1000, 25)
	// Until a write is answered, a window lasts maxWindow (refusals come
	// back before the writes sent with them).
	for range 20 + maxWindow/(20*time.Millisecond) {
		clk.Advance(20 * time.Millisecond)
		l.Answered(clk.Now().Add(-10*time.Millisecond), 25, 25)
	}
	once := l.Rate()
	if once >= 1000 || once < 25 {
		t.Fatalf("rate after a window of refusals = %v", once)
	}
	// The calls sent before the decrease come back refused too: no evidence.
	sent := clk.Now().Add(-time.Millisecond)
	for range 50 {
		clk.Advance(20 * time.Millisecond)
		l.Answered(sent, 25, 25)
	}
	if l.Rate() != once {
		t.Errorf("answers to calls sent before the decrease lowered the rate again: %v, then %v", once, l.Rate())
	}
}

// Refusals that do not follow the rate (injected faults, a table that
// throttles a share of calls whatever the rate) do not pin the rate down:
// after two decreases that did not help, the rate goes back, and the same
// share of refusals is then noise.
func TestLimiterIgnoresRefusalsThatDoNotFollowTheRate(t *testing.T) {
	t.Parallel()
	l, clk, logs := newTestLimiter(0, 25)
	const speed = 8000.0
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(float64) float64 { // 15% of calls refused whole
		if rng.Float64() < 0.15 {
			return 1
		}
		return 0
	}
	r := drive(l, clk, 60*time.Second, 0, speed, random)
	if rate := r.sent / 60; rate < 0.8*speed {
		t.Errorf("sent %.0f units/s under 15%% random refusals, want at least %.0f", rate, 0.8*speed)
	}
	if !strings.Contains(logs.String(), "whatever the rate") {
		t.Errorf("logs:\n%s", logs)
	}
	// The end of a run: a few calls over seconds, two of four refused,
	// prove nothing against that noise and change nothing.
	before := l.Rate()
	for i := range 4 {
		clk.Advance(600 * time.Millisecond)
		refused := 0
		if i%2 == 0 {
			refused = 25
		}
		l.Answered(clk.Now().Add(-20*time.Millisecond), 25, refused)
	}
	if l.Rate() != before {
		t.Errorf("a window of 4 calls at the end lowered the rate from %v to %v", before, l.Rate())
	}
}

// After a decrease, the rate comes back within seconds once DynamoDB
// accepts everything again, and grows beyond the old capacity.
func TestLimiterRecovers(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(0, 25)
	capacity := 1000.0
	answer := func(offered float64) float64 { return max(0, 1-capacity/offered) }
	drive(l, clk, 20*time.Second, 0, 1e6, answer)
	low := l.Rate()
	if low == 0 || low > capacity {
		t.Fatalf("rate behind a capacity of 1000: %v", low)
	}
	capacity = 1e6 // the table scaled up
	drive(l, clk, 10*time.Second, 0, 1e6, answer)
	if l.Rate() < 2*low {
		t.Errorf("rate 10 s after the throttling stopped: %.0f, from %.0f", l.Rate(), low)
	}
	drive(l, clk, 20*time.Second, 0, 1e6, answer)
	if l.Rate() < 10*low {
		t.Errorf("rate 30 s after the throttling stopped: %.0f, from %.0f", l.Rate(), low)
	}
}

// A configured maximum caps the rate; the floor bounds it below.
func TestLimiterBounds(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(500, 100)
	drive(l, clk, 30*time.Second, 0, 1e6, func(float64) float64 { return 0 })
	if l.Rate() != 500 {
		t.Errorf("rate without refusals = %v, want the maximum 500", l.Rate())
	}
	drive(l, clk, 30*time.Second, 0, 1e6, func(o float64) float64 { return max(0, 1-10/o) })
	if l.Rate() != 100 {
		t.Errorf("rate behind a capacity of 10 = %v, want the floor 100", l.Rate())
	}
}

// Refusals come back at once, writes after their turn in the engine's
// queue: a window must wait for the writes sent with the refusals, or it
// sees refusals only and cuts the rate to the floor. 64 calls are sent at
// once, 30% of them refused (answered within milliseconds), the others
// written in 500 ms: the rate may drop by about that share, not to the
// floor.
func TestLimiterWaitsForSlowWrites(t *testing.T) {
	t.Parallel()
	l, clk, _ := newTestLimiter(0, 25)
	start := clk.Now()
	for i := range 64 {
		if i%10 < 3 {
			clk.Advance(time.Millisecond)
			l.Answered(start, 25, 25)
		}
	}
	clk.Advance(500*time.Millisecond - 20*time.Millisecond)
	for i := range 64 {
		if i%10 >= 3 {
			l.Answered(start, 25, 0)
		}
	}
	clk.Advance(time.Millisecond)
	l.Answered(start, 25, 0)
	// offered: 64 calls of 25 units in half a second, 3,200 units/s.
	if r := l.Rate(); r != 0 && r < 0.5*3200 {
		t.Errorf("rate after 30%% fast refusals and 70%% slow writes = %.0f, want unlimited or at least half of 3,200", r)
	}
}
