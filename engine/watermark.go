package engine

import (
	"context"
	"slices"
	"sync"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// watermark tracks, per source table, the last row such that every item of
// that row and of every row before it is acknowledged by DynamoDB or
// rejected: the position a resumed run starts after.
//
// Rows are registered in read order with the number of items sent for them;
// acknowledgements arrive in any order (concurrent batches, interleaved
// partitions) and count a row down; the watermark moves over the contiguous
// run of finished rows at the head of the queue. A row that sent no items
// (all rejected, or an entity that produced nothing) is finished at once.
// Reject lines are held by their row and written to the reject file when
// the watermark passes the row, so the reject file always holds exactly the
// lines of the rows up to the watermark, in read order.
//
// Memory is one small record per row between the oldest unfinished row and
// the newest row read, and that is bounded: add waits while limit rows are
// unfinished. Normally the writer's window (which bounds how long an item
// waits in it, skewed keys or not) and the channel hold far fewer; the
// bound holds when a batch keeps retrying while later ones go through.
type watermark struct {
	mu      sync.Mutex
	sources []*sourceMark
	byName  map[string]*sourceMark
	current int // index of the source being read
	// unordered says the sources are read concurrently (parallel readers):
	// a row of one source says nothing of the others, and each is marked
	// read by sourceRead.
	unordered bool
	rejects   *rejectFile
	err       error // first error writing the reject file

	queued int           // rows added and not yet passed, over all sources
	limit  int           // add waits while queued >= limit; 0 = no limit
	room   chan struct{} // closed when queued drops below limit, for a waiting add
}

// DefaultMaxPendingRows is the default bound on rows read ahead of the
// oldest row whose items are not all acknowledged.
const DefaultMaxPendingRows = 1 << 16

type sourceMark struct {
	name    string
	index   int   // in read order
	after   []any // position of the last row done; nil = none yet
	readAll bool
	queue   []*rowMark
	head    int
	rows    int64
	items   map[string]int64
	rejects map[string]int64
}

// rowMark is one row between read and done.
type rowMark struct {
	src     *sourceMark
	pos     []any
	row     *extract.Row // kept while items are pending (reject mode), for their reject lines
	pending int
	sent    []string // entity of each item sent; may be shared, never modified in place
	lines   []RejectLine
}

func newWatermark(names []string, rejects *rejectFile, limit int) *watermark {
	w := &watermark{byName: map[string]*sourceMark{}, rejects: rejects, limit: limit}
	for i, n := range names {
		sm := &sourceMark{name: n, index: i, items: map[string]int64{}, rejects: map[string]int64{}}
		w.sources = append(w.sources, sm)
		w.byName[n] = sm
	}
	return w
}

// restore starts a source from a state file's record of it.
func (w *watermark) restore(s checkpoint.Source) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sm := w.byName[s.Name]
	if sm == nil {
		return
	}
	sm.after = s.After
	sm.rows = s.Rows
	sm.readAll = s.Done
	for _, c := range s.Entities {
		sm.items[c.Entity] = c.Items
		sm.rejects[c.Entity] = c.Rejects
	}
}

// add registers a row read from source name, with the entities of the
// items about to be sent for it and its reject lines. The returned mark is
// counted down by ack. Sources before this one are now read entirely. It
// waits while the limit of unfinished rows is reached, until rows finish
// or ctx ends.
func (w *watermark) add(ctx context.Context, name string, pos []any, row *extract.Row, sent []string, lines []RejectLine) (*rowMark, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.limit > 0 && w.queued >= w.limit {
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			w.mu.Lock()
			return nil, ctx.Err()
		}
		w.mu.Lock()
	}
	sm := w.byName[name]
	if !w.unordered {
		w.readUpTo(sm.index)
	}
	rm := &rowMark{src: sm, pos: pos, pending: len(sent), sent: sent, lines: lines}
	if len(sent) > 0 {
		rm.row = row
	}
	sm.queue = append(sm.queue, rm)
	w.queued++
	w.advance(sm)
	return rm, nil
}

// readUpTo marks the sources before index i as read entirely.
func (w *watermark) readUpTo(i int) {
	for ; w.current < i; w.current++ {
		w.sources[w.current].readAll = true
	}
}

// sourceRead marks one source as read entirely (unordered sources).
func (w *watermark) sourceRead(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if sm := w.byName[name]; sm != nil {
		sm.readAll = true
	}
}

// finishReading marks every source as read entirely: the walk ended.
func (w *watermark) finishReading() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readUpTo(len(w.sources))
}

// ack counts one acknowledged item of rm down.
func (w *watermark) ack(rm *rowMark) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rm.pending--
	if rm.pending == 0 {
		rm.row = nil
		w.advance(rm.src)
	}
}

// reject turns one sent item of rm into a reject line (an item error the
// writer reported instead of an acknowledgement).
func (w *watermark) reject(rm *rowMark, entity string, line RejectLine) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, e := range rm.sent {
		if e == entity {
			rm.sent = append(rm.sent[:i:i], rm.sent[i+1:]...)
			break
		}
	}
	rm.lines = append(rm.lines, line)
	rm.pending--
	if rm.pending == 0 {
		rm.row = nil
		w.advance(rm.src)
	}
}

// advance moves sm's watermark over the finished rows at the head of its
// queue. Called with w.mu held.
func (w *watermark) advance(sm *sourceMark) {
	for sm.head < len(sm.queue) && sm.queue[sm.head].pending == 0 {
		rm := sm.queue[sm.head]
		sm.queue[sm.head] = nil
		sm.head++
		w.queued--
		sm.after = rm.pos
		sm.rows++
		for _, e := range rm.sent {
			sm.items[e]++
		}
		for _, l := range rm.lines {
			sm.rejects[l.Entity]++
			if w.rejects != nil && w.err == nil {
				w.err = w.rejects.write(l)
			}
		}
	}
	if sm.head > 1024 && sm.head*2 > len(sm.queue) {
		sm.queue = append(sm.queue[:0], sm.queue[sm.head:]...)
		sm.head = 0
	}
	if w.room != nil && w.queued < w.limit {
		close(w.room)
		w.room = nil
	}
}

// mark is the watermark at one moment, ready for the state file.
type mark struct {
	sources     []checkpoint.Source
	complete    bool  // every source read and done
	rejectBytes int64 // length of the reject file holding the lines of the rows done
	err         error
}

// snapshot returns the watermark with the reject file flushed and synced
// up to it, so that a state file recording it never refers to lines that a
// crash could lose.
func (w *watermark) snapshot() mark {
	w.mu.Lock()
	defer w.mu.Unlock()
	var m mark
	m.complete = true
	for _, sm := range w.sources {
		done := sm.readAll && sm.head == len(sm.queue)
		m.complete = m.complete && done
		s := checkpoint.Source{Name: sm.name, Done: done, After: sm.after, Rows: sm.rows}
		for _, e := range sortedKeys(sm.items, sm.rejects) {
			s.Entities = append(s.Entities, checkpoint.Counts{Entity: e, Items: sm.items[e], Rejects: sm.rejects[e]})
		}
		m.sources = append(m.sources, s)
	}
	m.err = w.err
	if w.rejects != nil && m.err == nil {
		m.rejectBytes, m.err = w.rejects.sync()
	}
	return m
}

// rejectTotal is the number of rejects recorded for rows done, over every
// run of the migration.
func (w *watermark) rejectTotal() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, sm := range w.sources {
		for _, c := range sm.rejects {
			n += c
		}
	}
	return n
}

// sortedKeys returns the keys of the maps, sorted, without duplicates.
func sortedKeys(ms ...map[string]int64) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// pendingLimit is the watermark's bound on unfinished rows for a target:
// limit, except for a Starter, which acknowledges its items in groups of
// its own (an export's files) and must receive a whole group before it
// acknowledges any: its group size bounds the rows held instead.
func pendingLimit(t contract.Target, limit int) int {
	if _, ok := t.(contract.Starter); ok {
		return 0
	}
	return limit
}
