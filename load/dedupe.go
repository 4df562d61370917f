package load

import (
	"hash/maphash"

	"github.com/pgdynamo/migrate/contract"
)

// dedupe remembers the primary keys of the most recent items of one run,
// with their origins: a bounded ring, so that its memory does not grow with
// the table. It finds duplicates that arrive within that many items of
// each other, before the second is written; a caller that must find every
// duplicate checks the keys of all written items afterwards (package
// engine sorts them on disk). It is used by one goroutine.
type dedupe struct {
	seed  maphash.Seed
	ring  []recentKey
	next  int
	index map[string]int // key -> position in ring
}

type recentKey struct {
	key    string
	origin contract.Origin
}

// dupState is the outcome of dedupe.add.
type dupState int

const (
	dupNone        dupState = iota // first time this key is seen
	dupConfirmed                   // same key as a recent item, whose origin is returned
	dupUnconfirmed                 // not reported by dedupe (kept for callers that report it)
)

func newDedupe(recent int) *dedupe {
	return &dedupe{
		seed:  maphash.MakeSeed(),
		ring:  make([]recentKey, 0, min(recent, 1024)),
		index: make(map[string]int),
	}
}

// add records key (with its origin) and says whether it was seen before.
// capacity bounds the ring of recent keys.
func (d *dedupe) add(key string, o contract.Origin, capacity int) (dupState, contract.Origin) {
	if i, ok := d.index[key]; ok {
		return dupConfirmed, d.ring[i].origin
	}
	o = o.Resolved() // keep the key, not the row it came from
	if len(d.ring) < capacity {
		d.index[key] = len(d.ring)
		d.ring = append(d.ring, recentKey{key, o})
		return dupNone, contract.Origin{}
	}
	old := d.ring[d.next]
	delete(d.index, old.key)
	d.ring[d.next] = recentKey{key, o}
	d.index[key] = d.next
	d.next = (d.next + 1) % capacity
	return dupNone, contract.Origin{}
}
