package load

import (
	"sync"
	"time"
)

// EntityStats counts the work done for one entity (Origin.Entity) or in total.
type EntityStats struct {
	Written   int64 // items DynamoDB acknowledged
	Retries   int64 // item sends beyond the first (re-sent after a failed call or as UnprocessedItems)
	Throttled int64 // item sends DynamoDB throttled (a throttling error for their call, or returned unprocessed)
	WCU       int64 // write units of the acknowledged items, table plus indexes (see ItemWriteUnits)
}

func (s *EntityStats) add(o EntityStats) {
	s.Written += o.Written
	s.Retries += o.Retries
	s.Throttled += o.Throttled
	s.WCU += o.WCU
}

// Stats describes one Write call.
type Stats struct {
	Total    EntityStats
	Entities map[string]EntityStats // by Origin.Entity ("" for items without one)

	Calls          int64 // BatchWriteItem calls made by the writer (SDK-internal attempts not included)
	SDKRetries     int64 // attempts the SDK retried inside successful calls
	ThrottledCalls int64 // calls that failed with throttling or returned UnprocessedItems, plus SDK-internal throttled attempts
	Duplicates     int64 // duplicates skipped under OnDuplicate "skip"
	ItemErrors     int64 // row errors
	Elapsed        time.Duration

	// DirectCalls are the calls sent without the SDK's per-call
	// middleware (see "Request bodies" in the package documentation);
	// DirectFallbacks, those whose answer would have stopped the run and
	// that were made again through the SDK whole.
	DirectCalls, DirectFallbacks int64
}

// tally collects Stats from the writer's goroutines.
type tally struct {
	mu sync.Mutex
	s  Stats
}

func newTally() *tally {
	return &tally{s: Stats{Entities: map[string]EntityStats{}}}
}

// items adds per-item counts for each of ps.
func (t *tally) items(ps []*pending, f func(p *pending) EntityStats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range ps {
		d := f(p)
		e := t.s.Entities[p.item.Origin.Entity]
		e.add(d)
		t.s.Entities[p.item.Origin.Entity] = e
		t.s.Total.add(d)
	}
}

func (t *tally) update(f func(s *Stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
}

func (t *tally) snapshot() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s
	s.Entities = make(map[string]EntityStats, len(t.s.Entities))
	for k, v := range t.s.Entities {
		s.Entities[k] = v
	}
	return s
}
