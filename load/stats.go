package load

import (
	"sync"

	"github.com/pgdynamo/migrate/contract"
)

// tally collects Stats from the writer's goroutines.
type tally struct {
	mu sync.Mutex
	s  contract.Stats
}

func newTally() *tally {
	return &tally{s: contract.Stats{Entities: map[string]contract.EntityStats{}}}
}

// items adds per-item counts for each of ps.
func (t *tally) items(ps []*pending, f func(p *pending) contract.EntityStats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range ps {
		d := f(p)
		e := t.s.Entities[p.item.Origin.Entity]
		e.Add(d)
		t.s.Entities[p.item.Origin.Entity] = e
		t.s.Total.Add(d)
	}
}

func (t *tally) update(f func(s *contract.Stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
}

func (t *tally) snapshot() contract.Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s
	s.Entities = make(map[string]contract.EntityStats, len(t.s.Entities))
	for k, v := range t.s.Entities {
		s.Entities[k] = v
	}
	return s
}
