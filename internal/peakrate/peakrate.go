// Package peakrate keeps the most units counted in one whole second within
// a sliding window: an on-demand DynamoDB table's "previous peak", which
// both the writer's rate control (load) and the test proxy that emulates
// the table (internal/faultproxy) follow.
package peakrate

import "time"

// Tracker counts units per second, the seconds counted from the first Add.
// The zero value is ready; it is not safe for concurrent use.
type Tracker struct {
	slot  time.Time // start of the current second
	units float64   // counted in it
	// maxes holds the seconds that may still be the peak: times
	// increasing, units decreasing (a sliding-window maximum).
	maxes []second
}

type second struct {
	at    time.Time
	units float64
}

// Add counts units at now.
func (p *Tracker) Add(now time.Time, units float64) {
	p.roll(now)
	p.units += units
}

// roll closes the current second if now is past it.
func (p *Tracker) roll(now time.Time) {
	if p.slot.IsZero() {
		p.slot = now
		return
	}
	if now.Sub(p.slot) < time.Second {
		return
	}
	for len(p.maxes) > 0 && p.maxes[len(p.maxes)-1].units <= p.units {
		p.maxes = p.maxes[:len(p.maxes)-1]
	}
	p.maxes = append(p.maxes, second{p.slot, p.units})
	// Seconds without units count as idle.
	p.slot, p.units = p.slot.Add(now.Sub(p.slot).Truncate(time.Second)), 0
}

// Peak is the most units of a whole second within window before now; 0
// before the first whole second.
func (p *Tracker) Peak(now time.Time, window time.Duration) float64 {
	p.roll(now)
	n := 0
	for n < len(p.maxes) && now.Sub(p.maxes[n].at) > window {
		n++
	}
	p.maxes = p.maxes[n:]
	if len(p.maxes) == 0 {
		return 0
	}
	return p.maxes[0].units
}
