package load

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/pgdynamo/migrate/internal/peakrate"
)

// Rate control.
//
// The writer paces its calls with a token bucket of write units whose rate
// follows what DynamoDB accepts. Throttling (a whole call refused) and
// partial batches (items returned as UnprocessedItems) are capacity
// signals; 5xx answers and dropped connections are not, and never change
// the rate. Answers are judged per window of at least controlWindow and
// two round trips, so the rate changes at most once per round trip,
// whatever the number of calls in flight:
//
//   - When a share of the units answered in a window was refused, beyond
//     the noise level (below), the rate drops in proportion to that share,
//     and by capacityMargin more, so that the table's own burst capacity
//     refills: from R to R × (1 - share) × capacityMargin.
//   - The window after a decrease tests it. Refusals caused by the rate
//     fall when the rate falls: they stop, or fall by more than chance
//     explains (noiseSigmas standard errors of the share that caused the
//     decrease, from the spread of its calls; a test window waits for
//     testCalls answers). If
//     they did not, the rate is lowered once more (the first
//     decrease may not have reached the capacity, as when a table's burst
//     capacity ran out in the middle of a window); if that did not help
//     either, the refusals are not about the rate (a table that throttles
//     at any rate, or injected faults): both decreases are undone and the
//     refused share becomes the noise level. The noise level and the
//     spread of its calls follow the windows that lower nothing (moving
//     averages), so only a share clearly above it is tested again: by more
//     than noiseSigmas standard errors for the window's number of calls (a
//     few calls at the end of a run prove nothing). A decrease that helped
//     sets the noise level to what is left.
//   - A window without excess refusals raises the rate: quickly (a quarter
//     of the gap per window) while it is below the margin of the capacity
//     found at the last decrease, then by a share that starts at
//     probeStart and doubles every probeDoubling, up to probeMax per
//     window: slow near the capacity just found, and back to full speed
//     within seconds when the throttling passed.
//
// When the table's capacity is known (Config.Capacity, from its
// description), the writer starts at it rather than unlimited: a writer
// that starts unlimited floods the table, is refused most of its first
// calls and takes seconds to settle. A provisioned table's capacity is
// also the highest rate, unless a maximum is configured. An on-demand table is held to
// on-demand's doubling rule: at most twice the peak the writer saw
// accepted in a second within OnDemandPeakWindow, and at least the
// capacity it started with. Without a known capacity or a configured
// maximum the writer starts unlimited and measures what it sends; the
// first decrease starts from that.
const (
	controlWindow  = 250 * time.Millisecond
	minWindowCalls = 8               // answers a window needs, unless it lasts maxWindow
	maxWindow      = 2 * time.Second // a slow writer's window closes anyway
	testCalls      = 32              // answers a window testing a decrease needs, unless it lasts maxTestWindow
	maxTestWindow  = 8 * time.Second
	capacityMargin = 0.85
	minExcess      = 0.01 // refused share above the noise level that is over capacity, at least
	noiseSigmas    = 3    // and at least this many standard deviations of the noise level
	noiseWeight    = 0.1  // of a window in the moving average of the noise level
	recoverShare   = 0.25 // of the gap to the capacity, closed per window
	probeStart     = 0.005
	probeDoubling  = 4 * time.Second
	probeMax       = 0.25
	probeUsed      = 0.8   // share of the rate a window must offer for the rate to grow
	rttSmoothing   = 0.125 // weight of a new round trip in the average
	waitSlice      = 50 * time.Millisecond
)

// errPastDeadline is returned by Wait when the units could not be had
// before the deadline.
var errPastDeadline = errors.New("load: the write rate would not allow the batch before its deadline")

// limiter is the token bucket and its controller. It is safe for
// concurrent use.
type limiter struct {
	// turn is held by the one waiter that may take units from the bucket;
	// the others queue for it, served in the order they came (a channel's
	// blocked senders are). Without it a batch of many units could starve:
	// smaller ones would take the units as soon as they trickle in, and
	// the checkpoint, which waits for the oldest rows, would fall behind
	// the writes without bound.
	turn chan struct{}

	mu    sync.Mutex
	clk   clock
	log   *slog.Logger
	max   float64 // configured cap; 0 = none
	floor float64
	start TableCapacity    // what the table takes at once; zero = unknown
	peaks peakrate.Tracker // accepted units per second, for on-demand's doubling rule

	rate   float64 // current rate in units/s; 0 = not limiting
	tokens float64
	filled time.Time // last refill

	rtt time.Duration // smoothed duration of the calls DynamoDB took (in whole or in part)
	// early are refusals that came back sooner than rtt (or before any
	// write was answered), counted only at their send time plus rtt, when
	// the writes sent with them are answered: a window then compares calls
	// sent at the same time.
	early []earlyRefusal

	// The current window: units answered (accepted or refused) by calls
	// that completed in it, and units let through to be sent.
	winStart  time.Time
	answered  float64
	refused   float64
	calls     int
	sumSq     float64 // of each call's refused share, for the spread of the window's
	sentUnits float64

	noise        float64 // refused share that does not follow the rate
	noiseSpread  float64 // standard deviation of the refused share of one call at the noise level
	capacity     float64 // estimated at the last decrease, units/s
	lastDecrease time.Time
	probeFrom    time.Time // when the rate last reached the capacity: growth starts slow from there
	lastLogged   float64   // rate at the last increase logged at Info

	// After a decrease, the next window tests it (step 1, then 2 after a
	// second decrease). Answers to calls sent before the last decrease are
	// no evidence.
	step        int
	beforeRate  float64 // the rate before the first decrease, restored if neither helped
	stepRefused float64 // the refused share that caused the decrease under test
	stepSpread  float64 // and the standard deviation of its calls' shares
}

type earlyRefusal struct {
	sentAt time.Time
	units  int
}

func newLimiter(clk clock, log *slog.Logger, maxWCU, floor float64, start TableCapacity) *limiter {
	now := clk.Now()
	l := &limiter{turn: make(chan struct{}, 1), clk: clk, log: log, max: maxWCU, floor: floor, start: start, filled: now, winStart: now, probeFrom: now}
	r := l.ceiling(now)
	if start.WCU > 0 {
		r = max(floor, min(r, start.WCU))
	}
	if !math.IsInf(r, 1) {
		l.rate = r
		l.tokens = l.burst()
		l.lastLogged = r
	}
	return l
}

// ceiling is the highest rate increases reach at now: the configured
// maximum, an on-demand table's maximum and its doubling rule.
func (l *limiter) ceiling(now time.Time) float64 {
	c := math.Inf(1)
	switch {
	case l.max > 0:
		c = l.max
	case !l.start.OnDemand && l.start.WCU > 0:
		// A provisioned table throttles beyond its capacity once its burst
		// is spent: probing above it only costs refusals (behind 3,000
		// WCU/s the rate drifted to 4,000-4,800 and 18% of the calls were
		// refused). Under auto scaling a configured maximum replaces it.
		c = l.start.WCU
	}
	if l.start.MaxWCU > 0 {
		c = min(c, l.start.MaxWCU)
	}
	if l.start.OnDemand && l.start.WCU > 0 {
		c = min(c, max(l.start.WCU, 2*l.peaks.Peak(now, OnDemandPeakWindow)))
	}
	return c
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
// request larger than the bucket waits for a full bucket and goes into
// debt that later requests wait out. It sleeps in slices of at most
// waitSlice and looks again, so that a rate lowered meanwhile holds back
// requests already waiting (a decrease must not be undone by the calls it
// should have slowed). When the wait would end after deadline (unless it
// is zero), Wait takes nothing, sleeps until the deadline and returns
// errPastDeadline. Waiters take their units first come, first served. It
// returns how long it slept.
func (l *limiter) Wait(ctx context.Context, units int, deadline time.Time) (time.Duration, error) {
	u := float64(units)
	start := l.clk.Now()
	l.mu.Lock()
	if l.rate == 0 { // not limiting: no queue
		l.sentUnits += u
		l.mu.Unlock()
		return 0, ctx.Err()
	}
	l.mu.Unlock()
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return l.clk.Now().Sub(start), ctx.Err()
	}
	defer func() { <-l.turn }()
	if now := l.clk.Now(); !deadline.IsZero() && !now.Before(deadline) {
		return now.Sub(start), fmt.Errorf("%w (it waited %v for the batches before it)", errPastDeadline, now.Sub(start).Round(time.Millisecond))
	}
	for {
		l.mu.Lock()
		now := l.clk.Now()
		l.refill(now)
		if need := min(u, l.burst()); l.rate == 0 || l.tokens >= need {
			if l.rate > 0 {
				l.tokens -= u
			}
			l.sentUnits += u
			l.mu.Unlock()
			return now.Sub(start), ctx.Err()
		}
		rate := l.rate
		wait := time.Duration(math.Ceil((min(u, l.burst()) - l.tokens) / rate * float64(time.Second)))
		l.mu.Unlock()
		if !deadline.IsZero() && now.Add(wait).After(deadline) {
			if err := l.clk.Sleep(ctx, deadline.Sub(now)); err != nil {
				return l.clk.Now().Sub(start), err
			}
			return l.clk.Now().Sub(start), fmt.Errorf("%w (%.0f write units at %.1f WCU/s take %v more)", errPastDeadline, u, rate, wait.Round(time.Millisecond))
		}
		if err := l.clk.Sleep(ctx, min(wait, waitSlice)); err != nil {
			return l.clk.Now().Sub(start), err
		}
	}
}

// Answered reports DynamoDB's answer to a call sent at sentAt: of units
// write units, refused were refused (all of them for a throttling error,
// the unprocessed items' for a partial batch). Calls that got no answer
// (5xx, dropped connections) are not reported: they say nothing about
// capacity.
func (l *limiter) Answered(sentAt time.Time, units, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	if l.start.OnDemand {
		l.peaks.Add(now, float64(units-refused))
	}
	// Only calls that DynamoDB took, in whole or in part, time its round
	// trip: a refusal comes back at once, while the writes sent with it
	// wait their turn in the table's (or an emulator's) queue. Timed by
	// refusals, the first windows closed before any write was answered,
	// saw nothing but refusals (91% of the units where 30% of the calls
	// were faulted, in front of DynamoDB Local) and cut the rate to the
	// floor, which took a minute to climb back from.
	if d := now.Sub(sentAt); d > 0 && refused < units {
		if l.rtt == 0 {
			l.rtt = d
		} else {
			l.rtt += time.Duration(rttSmoothing * float64(d-l.rtt))
		}
	}
	l.countEarly(now)
	if sentAt.Before(l.lastDecrease) {
		return // sent at the old rate: no evidence about the new one
	}
	if d := now.Sub(sentAt); refused == units && (l.rtt == 0 || d < l.rtt) {
		// A refusal overtakes the writes sent with it: counted now, it
		// would make the window's share of refusals look larger than it
		// is, all the more as the engine queues writes longer.
		l.early = append(l.early, earlyRefusal{sentAt: sentAt, units: units})
		l.countEarly(now)
		if l.rtt == 0 && l.calls > 0 && now.Sub(l.winStart) >= maxWindow {
			l.judge(now, now.Sub(l.winStart)) // nothing but refusals for so long
		}
		return
	}
	l.count(units, refused)
	span := now.Sub(l.winStart)
	needCalls, longest := minWindowCalls, maxWindow
	if l.step > 0 {
		needCalls, longest = testCalls, maxTestWindow
	}
	if span < max(controlWindow, 2*l.rtt) || l.calls < needCalls && span < longest {
		return
	}
	if l.rtt == 0 && span < longest {
		return // no write answered yet: the window would hold only refusals
	}
	l.judge(now, span)
}

// count adds an answer to the current window.
func (l *limiter) count(units, refused int) {
	l.answered += float64(units)
	l.refused += float64(refused)
	l.calls++
	if units > 0 {
		x := float64(refused) / float64(units)
		l.sumSq += x * x
	}
}

// countEarly counts the early refusals that are due by now.
func (l *limiter) countEarly(now time.Time) {
	wait := l.rtt
	if wait == 0 {
		wait = maxWindow // no write answered yet: how long the first window waits for one
	}
	// In the order they came back, which is about the order they were
	// sent: stop at the first not yet due (a refusal sent a little
	// earlier than it waits a little longer), so that tens of thousands
	// refused per second cost no more than they do.
	n := 0
	for _, e := range l.early {
		if e.sentAt.Add(wait).After(now) {
			break
		}
		if !e.sentAt.Before(l.lastDecrease) {
			l.count(e.units, e.units)
		}
		n++
	}
	if n > 0 {
		l.early = append(l.early[:0], l.early[n:]...)
	}
}

// judge closes the window that ends at now.
func (l *limiter) judge(now time.Time, span time.Duration) {
	share := 0.0
	if l.answered > 0 {
		share = l.refused / l.answered
	}
	refused, calls := l.refused, float64(max(1, l.calls))
	// The spread of the calls' refused shares (a call is refused whole,
	// in part or not at all).
	callMean := l.refused / max(1, l.answered)
	callSpread := math.Sqrt(max(0, l.sumSq/calls-callMean*callMean))
	// What the writer offered: the limit is only a cap, a writer held back
	// by its source or its calls offers less.
	offered := max(l.answered, l.sentUnits) / span.Seconds()
	l.winStart, l.answered, l.refused, l.calls, l.sumSq, l.sentUnits = now, 0, 0, 0, 0, 0

	step := l.step
	l.step = 0
	if step > 0 {
		// Helped: the refusals stopped (down to the noise level), or the
		// share fell by more than noiseSigmas standard errors of the share
		// that caused the decrease.
		if share <= l.noise+minExcess || share < l.stepRefused-noiseSigmas*l.stepSpread/math.Sqrt(calls) {
			if share < l.noise { // what is left is not about the rate
				l.noise, l.noiseSpread = share, callSpread
			}
			return // the decrease helped: it holds
		}
		if step == 2 && l.rate > l.floor {
			// Two decreases did not reduce the refusals: they are not about
			// the rate. (At the floor, where the test could not go deep
			// enough, the rate holds.)
			if share > l.noise {
				l.noise, l.noiseSpread = share, max(l.noiseSpread, callSpread)
			}
			l.setRate(now, l.beforeRate)
			l.log.Info("load: DynamoDB refuses writes whatever the rate; keeping the write rate",
				"refused_pct", pct(share), "wcu", rateAttr(l.rate))
			return
		}
	}
	excess := share - l.noise
	threshold := max(minExcess, noiseSigmas*l.noiseSpread/math.Sqrt(calls))
	if step == 0 && (excess <= threshold || refused == 0) {
		l.noise += noiseWeight * (share - l.noise)
		l.noiseSpread += noiseWeight * (callSpread - l.noiseSpread)
		l.probe(now, offered)
		return
	}
	base := offered
	if l.rate > 0 {
		base = min(l.rate, offered)
	}
	capacity := base * (1 - max(0, excess))
	to := max(l.floor, capacity*capacityMargin)
	if l.rate > 0 && to >= l.rate {
		return // at the floor already: hold, nothing to test
	}
	if step == 0 {
		l.beforeRate = l.rate
	}
	l.step, l.stepRefused, l.stepSpread = step+1, share, callSpread
	l.lastDecrease, l.probeFrom = now, now
	l.capacity = capacity
	old := l.rate
	l.setRate(now, to)
	l.lastLogged = l.rate
	l.log.Info("load: DynamoDB refused writes, lowering the write rate",
		"refused_pct", pct(share), "from_wcu", rateAttr(old), "to_wcu", rateAttr(l.rate))
}

// probe raises a limited rate after a window without excess refusals, if
// the writer used it (offered units/s): a rate nobody reaches would say
// nothing about the capacity.
func (l *limiter) probe(now time.Time, offered float64) {
	ceiling := l.ceiling(now)
	if l.rate == 0 || l.rate >= ceiling || offered < probeUsed*l.rate {
		return
	}
	old := l.rate
	if target := l.capacity * capacityMargin; l.rate < target {
		// Below what DynamoDB took last time: recover quickly.
		l.setRate(now, min(ceiling, target, l.rate+max(1, (target-l.rate)*recoverShare)))
		l.probeFrom = now
	} else {
		growth := min(probeMax, probeStart*math.Exp2(now.Sub(l.probeFrom).Seconds()/probeDoubling.Seconds()))
		l.setRate(now, min(ceiling, l.rate*(1+growth)))
	}
	if l.rate >= 2*l.lastLogged || l.rate == ceiling {
		l.lastLogged = l.rate
		l.log.Info("load: no throttling, raising the write rate", "from_wcu", rateAttr(old), "to_wcu", rateAttr(l.rate))
	}
}

func (l *limiter) setRate(now time.Time, r float64) {
	l.refill(now)
	l.rate = r
	if r == 0 {
		l.tokens = 0
		return
	}
	l.tokens = min(l.tokens, l.burst())
}

func pct(share float64) float64 { return math.Round(share*1000) / 10 }

func rateAttr(r float64) any {
	if r == 0 {
		return "unlimited"
	}
	return math.Round(r*10) / 10
}
