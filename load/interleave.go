package load

// numBuckets is the number of partition-key hash buckets of the window. It
// is well above MaxBatchItems so that a full batch can take one item from 25
// different buckets, and the next batch from the next 25.
const numBuckets = 256

// window buffers accepted items in buckets by partition-key hash and hands
// them out round-robin over the non-empty buckets. A source sorted by
// partition key puts long runs of one key into one bucket; round-robin then
// spreads consecutive requests, and consecutive batches, over different
// partition keys. Items of one bucket leave in arrival order. Used by one
// goroutine.
//
// Round-robin alone would let an item of a crowded bucket wait while
// thousands of later items of other buckets pass it: with skewed partition
// keys one bucket fills most of the window and gets one turn in each round.
// Everything read after such an item waits for it in the checkpoint, so
// the window also bounds waiting: an item that has seen maxWait other items
// leave goes into the next batch first, whatever its bucket.
type window struct {
	buckets  [numBuckets]fifo
	active   fifoInt // buckets in round-robin order; may hold emptied ones
	listed   [numBuckets]bool
	arrivals queue[arrival] // every buffered item in arrival order, and some gone
	n        int            // items buffered
	bytes    int            // their request bytes
	in, out  uint64         // items pushed and handed out so far
	maxWait  uint64         // 0: no bound
}

// arrival records which bucket an item went to. It holds no pointer, so
// that items gone from the window are not kept alive by it.
type arrival struct {
	seq uint64
	b   int
}

func (w *window) push(p *pending) {
	b := int(p.pkHash % numBuckets)
	if !w.listed[b] {
		w.listed[b] = true
		w.active.pushBack(b)
	}
	p.seq, p.waitFrom = w.in, w.out
	w.in++
	w.buckets[b].pushBack(p)
	w.arrivals.pushBack(arrival{p.seq, b})
	w.n++
	w.bytes += p.wire()
}

// overdue returns the bucket of the oldest buffered item if that item has
// waited for maxWait items to leave, or -1. Items of a bucket leave in
// arrival order, so the oldest item of all is at the front of its bucket,
// and an arrival whose bucket's front came later has left.
func (w *window) overdue() int {
	if w.maxWait == 0 {
		return -1
	}
	for w.arrivals.len() > 0 {
		a := w.arrivals.front()
		q := &w.buckets[a.b]
		if q.len() == 0 || q.front().seq != a.seq {
			w.arrivals.popFront() // gone
			continue
		}
		if w.out-q.front().waitFrom >= w.maxWait {
			return a.b
		}
		return -1
	}
	return -1
}

// take removes the front item of bucket b.
func (w *window) take(b int) *pending {
	p := w.buckets[b].popFront()
	w.n--
	w.bytes -= p.wire()
	w.out++
	return p
}

// next removes and returns up to maxItems items whose request bytes add up to
// at most maxBytes (a single item is always returned, whatever its size).
func (w *window) next(maxItems, maxBytes int) []*pending {
	var out []*pending
	size := 0
	// Overdue items first, oldest first: under heavy skew the window
	// degrades to arrival order rather than let waits grow.
	for len(out) < maxItems {
		b := w.overdue()
		if b < 0 || len(out) > 0 && size+w.buckets[b].front().wire() > maxBytes {
			break
		}
		p := w.take(b)
		out = append(out, p)
		size += p.wire()
	}
	for len(out) < maxItems && w.active.len() > 0 {
		b := w.active.popFront()
		if w.buckets[b].len() == 0 {
			w.listed[b] = false
			continue
		}
		p := w.buckets[b].front()
		if len(out) > 0 && size+p.wire() > maxBytes {
			w.active.pushFront(b) // its turn comes first next time
			break
		}
		out = append(out, w.take(b))
		size += p.wire()
		if w.buckets[b].len() > 0 {
			w.active.pushBack(b)
		} else {
			w.listed[b] = false
		}
	}
	return out
}

// fifo is a slice-backed queue that reuses its array once drained.
type fifo struct {
	items []*pending
	head  int
}

func (q *fifo) len() int            { return len(q.items) - q.head }
func (q *fifo) front() *pending     { return q.items[q.head] }
func (q *fifo) pushBack(p *pending) { q.items = append(q.items, p) }
func (q *fifo) popFront() *pending {
	p := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head > len(q.items)/2 {
		// Move the rest to the front and clear what it leaves behind:
		// the array is scanned whole, and a stale pointer would keep a
		// written item alive.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return p
}

// queue is a slice-backed FIFO that compacts as it goes.
type queue[T any] struct {
	items []T
	head  int
}

func (q *queue[T]) len() int     { return len(q.items) - q.head }
func (q *queue[T]) front() T     { return q.items[q.head] }
func (q *queue[T]) pushBack(v T) { q.items = append(q.items, v) }
func (q *queue[T]) popFront() {
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head > len(q.items)/2 {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
}

// fifoInt is a double-ended queue of bucket numbers.
type fifoInt struct {
	items []int
	head  int
}

func (q *fifoInt) len() int       { return len(q.items) - q.head }
func (q *fifoInt) pushBack(v int) { q.items = append(q.items, v) }
func (q *fifoInt) popFront() int {
	v := q.items[q.head]
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head > len(q.items)/2 {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
	return v
}
func (q *fifoInt) pushFront(v int) {
	if q.head > 0 {
		q.head--
		q.items[q.head] = v
		return
	}
	q.items = append([]int{v}, q.items...)
}
