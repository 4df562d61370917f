package peakrate

import (
	"testing"
	"time"
)

func TestTracker(t *testing.T) {
	t.Parallel()
	const window = 30 * time.Minute
	var p Tracker
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	p.Add(at(0), 100)
	p.Add(at(500*time.Millisecond), 200) // second 0: 300
	if got := p.Peak(at(900*time.Millisecond), window); got != 0 {
		t.Errorf("peak before a whole second = %v, want 0", got)
	}
	p.Add(at(1200*time.Millisecond), 1000) // second 1: 1000
	p.Add(at(2100*time.Millisecond), 50)   // second 2: 50
	if got := p.Peak(at(3*time.Second), window); got != 1000 {
		t.Errorf("peak = %v, want 1000", got)
	}
	// The peak of second 1 is forgotten a window later; second 2's 50
	// stays until its own window is up.
	if got := p.Peak(at(time.Second+window+time.Second), window); got != 50 {
		t.Errorf("peak after the window = %v, want 50", got)
	}
	if got := p.Peak(at(2*time.Second+window+time.Second), window); got != 0 {
		t.Errorf("peak after every window = %v, want 0", got)
	}
}
