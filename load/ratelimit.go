package load

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"
)

// AIMD parameters of the write-unit limiter.
const (
	aimdDecrease         = 0.5             // rate multiplier on throttling
	aimdCooldown         = time.Second     // at most one decrease per cooldown (calls in flight report the same event)
	aimdIncreaseInterval = 2 * time.Second // success without throttling for this long earns one increase
	aimdIncreaseFraction = 0.1             // of the ceiling (MaxWCU, or the rate at the first throttle)
	meterWindow          = time.Second     // throughput measurement window while unlimited
	meterMinSpan         = 100 * time.Millisecond
)

// limiter is a token bucket on write units whose rate follows AIMD. With
// max = 0 it lets everything through, measuring throughput, until the first
// throttle; it then starts at half the measured rate. It is safe for
// concurrent use.
type limiter struct {
	mu    sync.Mutex
	clk   clock
	log   *slog.Logger
	max   float64 // configured cap; 0 = none
	floor float64

	rate   float64 // current rate in units/s; 0 = not limiting
	tokens float64
	filled time.Time // last refill

	ceiling      float64 // increases stop here (+Inf when max = 0 and the rate should lift entirely)
	step         float64
	lastDecrease time.Time
	lastChange   time.Time
	lastThrottle time.Time

	meterStart time.Time
	meterUnits float64
	measured   float64 // units/s over the last full meter window
}

func newLimiter(clk clock, log *slog.Logger, maxWCU, floor float64) *limiter {
	now := clk.Now()
	l := &limiter{clk: clk, log: log, max: maxWCU, floor: floor, filled: now, meterStart: now, lastChange: now}
	if maxWCU > 0 {
		l.rate = maxWCU
		l.tokens = l.burst()
		l.ceiling = maxWCU
		l.step = maxWCU * aimdIncreaseFraction
	}
	return l
}

// burst is the bucket's capacity: one second of writes, at least one unit.
func (l *limiter) burst() float64 { return max(1, l.rate) }

func (l *limiter) refill(now time.Time) {
	if l.rate > 0 {
		l.tokens = min(l.burst(), l.tokens+now.Sub(l.filled).Seconds()*l.rate)
	}
	l.filled = now
}

// Rate is the current rate limit, 0 meaning none.
func (l *limiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate
}

// Wait takes units from the bucket, sleeping until they are available. A
// request larger than the bucket goes into debt that later requests wait
// out. It returns how long it slept.
func (l *limiter) Wait(ctx context.Context, units int) (time.Duration, error) {
	u := float64(units)
	l.mu.Lock()
	now := l.clk.Now()
	l.refill(now)
	l.meter(now, u)
	if l.rate == 0 {
		l.mu.Unlock()
		return 0, ctx.Err()
	}
	l.tokens -= u
	var wait time.Duration
	if l.tokens < 0 {
		wait = time.Duration(-l.tokens / l.rate * float64(time.Second))
	}
	l.mu.Unlock()
	if wait == 0 {
		return 0, ctx.Err()
	}
	if err := l.clk.Sleep(ctx, wait); err != nil {
		l.mu.Lock()
		l.tokens += u // not sent: give the units back
		l.mu.Unlock()
		return wait, err
	}
	return wait, nil
}

func (l *limiter) meter(now time.Time, u float64) {
	if d := now.Sub(l.meterStart); d >= meterWindow {
		l.measured = l.meterUnits / d.Seconds()
		l.meterStart, l.meterUnits = now, 0
	}
	l.meterUnits += u
}

// measuredRate is the throughput of the last meter window, or of the
// current partial one when no window has completed yet.
func (l *limiter) measuredRate(now time.Time) float64 {
	if l.measured > 0 {
		return l.measured
	}
	// A partial window shorter than meterMinSpan would overstate the rate.
	return l.meterUnits / max(now.Sub(l.meterStart), meterMinSpan).Seconds()
}

// Throttled reports that DynamoDB throttled a request: the rate is
// multiplied by aimdDecrease, at most once per aimdCooldown, never below the
// floor.
func (l *limiter) Throttled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	l.lastThrottle = now
	if l.rate > 0 && now.Sub(l.lastDecrease) < aimdCooldown {
		return
	}
	old := l.rate
	base := l.rate
	if base == 0 {
		// First throttle without a configured cap: start from what was
		// actually being written.
		base = l.measuredRate(now)
		l.ceiling = math.Inf(1)
		l.step = max(l.floor, base*aimdIncreaseFraction)
	}
	l.refill(now)
	l.rate = max(l.floor, base*aimdDecrease)
	l.tokens = min(l.tokens, l.burst())
	l.lastDecrease, l.lastChange = now, now
	if l.rate != old {
		l.log.Info("load: throttled, lowering write rate", "from_wcu", rateAttr(old), "to_wcu", rateAttr(l.rate))
	}
}

// Succeeded reports a request that went through without throttling. After
// aimdIncreaseInterval without throttling the rate grows by one step, up to
// the ceiling.
func (l *limiter) Succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rate == 0 || l.rate >= l.ceiling {
		return
	}
	now := l.clk.Now()
	if now.Sub(l.lastThrottle) < aimdIncreaseInterval || now.Sub(l.lastChange) < aimdIncreaseInterval {
		return
	}
	old := l.rate
	l.refill(now)
	l.rate = min(l.ceiling, l.rate+l.step)
	l.lastChange = now
	l.log.Info("load: no throttling, raising write rate", "from_wcu", rateAttr(old), "to_wcu", rateAttr(l.rate))
}

func rateAttr(r float64) any {
	if r == 0 {
		return "unlimited"
	}
	return math.Round(r*10) / 10
}
