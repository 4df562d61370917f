package load

import "hash/maphash"

// dedupe remembers the primary keys of one run: a set of 64-bit hashes of
// every key, and the full key and origin of the most recent ones (see the
// package documentation for the memory cost). It is used by one goroutine.
type dedupe struct {
	seed  maphash.Seed
	seen  map[uint64]struct{}
	ring  []recentKey
	next  int
	index map[string]int // key -> position in ring
}

type recentKey struct {
	key    string
	origin Origin
}

// dupState is the outcome of dedupe.add.
type dupState int

const (
	dupNone        dupState = iota // first time this key is seen
	dupConfirmed                   // same key as a recent item, whose origin is returned
	dupUnconfirmed                 // hash seen before, but the earlier key is no longer held
)

func newDedupe(recent int) *dedupe {
	return &dedupe{
		seed:  maphash.MakeSeed(),
		seen:  make(map[uint64]struct{}),
		ring:  make([]recentKey, 0, min(recent, 1024)),
		index: make(map[string]int),
	}
}

// add records key (with its origin) and says whether it was seen before.
// capacity bounds the ring of recent keys.
func (d *dedupe) add(key string, o Origin, capacity int) (dupState, Origin) {
	h := maphash.String(d.seed, key)
	if _, hit := d.seen[h]; hit {
		if i, ok := d.index[key]; ok {
			return dupConfirmed, d.ring[i].origin
		}
		return dupUnconfirmed, Origin{}
	}
	d.seen[h] = struct{}{}
	if len(d.ring) < capacity {
		d.index[key] = len(d.ring)
		d.ring = append(d.ring, recentKey{key, o})
		return dupNone, Origin{}
	}
	old := d.ring[d.next]
	delete(d.index, old.key)
	d.ring[d.next] = recentKey{key, o}
	d.index[key] = d.next
	d.next = (d.next + 1) % capacity
	return dupNone, Origin{}
}
