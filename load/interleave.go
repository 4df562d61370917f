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
type window struct {
	buckets [numBuckets]fifo
	active  fifoInt // non-empty buckets, in round-robin order
	n       int     // items buffered
	bytes   int     // their request bytes
}

func (w *window) push(p *pending) {
	b := int(p.pkHash % numBuckets)
	if w.buckets[b].len() == 0 {
		w.active.pushBack(b)
	}
	w.buckets[b].pushBack(p)
	w.n++
	w.bytes += p.wire
}

// next removes and returns up to maxItems items whose request bytes add up to
// at most maxBytes (a single item is always returned, whatever its size).
func (w *window) next(maxItems, maxBytes int) []*pending {
	var out []*pending
	size := 0
	for len(out) < maxItems && w.active.len() > 0 {
		b := w.active.popFront()
		p := w.buckets[b].front()
		if len(out) > 0 && size+p.wire > maxBytes {
			w.active.pushFront(b) // its turn comes first next time
			break
		}
		w.buckets[b].popFront()
		out = append(out, p)
		size += p.wire
		w.n--
		w.bytes -= p.wire
		if w.buckets[b].len() > 0 {
			w.active.pushBack(b)
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
	}
	return p
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
