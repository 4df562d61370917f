// Package extsort sorts more key/value records than fit in memory: an
// external merge sort over temporary files.
//
// A [Sorter] buffers records in one byte arena until Config.MemoryBytes is
// used, sorts the buffer by key and writes it to a run file. [Sorter.Sort]
// merges the runs (at most Config.FanIn files open at once; more runs are
// merged in several passes) and returns an [Iterator] that yields the
// records in key order. When every record fits in memory nothing touches
// the disk.
//
// Memory is about Config.MemoryBytes plus 24 bytes of index per buffered
// record while adding, and FanIn read buffers (64 KB each) while merging:
// it does not grow with the number of records. Disk use is the total size
// of the records plus two varints each.
//
// Records with equal keys come out in the order they were added (the sort
// is stable), so that callers can rely on a deterministic order.
package extsort

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Config configures a Sorter. Zero values mean the documented defaults.
type Config struct {
	// Dir is where run files are created. Default os.TempDir().
	Dir string
	// MemoryBytes is how many bytes of keys and values are buffered before
	// a run is written. Default 64 MiB.
	MemoryBytes int
	// FanIn is how many runs are merged at once. Default 64, at least 2.
	FanIn int
}

// Defaults.
const (
	DefaultMemoryBytes = 64 << 20
	DefaultFanIn       = 64
	readBuffer         = 64 << 10
	writeBuffer        = 256 << 10
)

// WithDefaults returns c with unset fields defaulted.
func (c Config) WithDefaults() Config {
	c.Dir = cmp.Or(c.Dir, os.TempDir())
	c.MemoryBytes = cmp.Or(c.MemoryBytes, DefaultMemoryBytes)
	c.FanIn = cmp.Or(c.FanIn, DefaultFanIn)
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.MemoryBytes < 1 {
		return fmt.Errorf("extsort: memory must be positive, got %d", c.MemoryBytes)
	}
	if c.FanIn < 2 {
		return fmt.Errorf("extsort: fan-in must be at least 2, got %d", c.FanIn)
	}
	return nil
}

// ErrSorted is returned by Add after Sort was called.
var ErrSorted = errors.New("extsort: records added after Sort")

// Stats describes what a Sorter did.
type Stats struct {
	Records      int64 // records added
	Bytes        int64 // bytes of keys and values added
	Runs         int   // run files written while adding
	MergePasses  int   // intermediate merge passes (0 when FanIn covered all runs)
	SpilledBytes int64 // bytes written to run files, intermediate passes included
}

// Sorter collects records and sorts them. It is not safe for concurrent use.
type Sorter struct {
	cfg    Config
	arena  []byte
	recs   []rec
	runs   []*os.File
	sorted bool
	stats  Stats
}

// rec locates one buffered record in the arena.
type rec struct {
	off        int
	klen, vlen uint32
}

// New returns a Sorter. Close it to remove its files.
func New(cfg Config) (*Sorter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Sorter{cfg: cfg}, nil
}

// Add copies a record into the sorter.
func (s *Sorter) Add(key, value []byte) error {
	if s.sorted {
		return ErrSorted
	}
	if len(s.arena) > 0 && len(s.arena)+len(key)+len(value) > s.cfg.MemoryBytes {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if s.arena == nil {
		// One allocation of the whole budget: growing by append would
		// briefly hold up to twice as much. Untouched pages cost no RSS.
		s.arena = make([]byte, 0, s.cfg.MemoryBytes)
	}
	s.recs = append(s.recs, rec{off: len(s.arena), klen: uint32(len(key)), vlen: uint32(len(value))})
	s.arena = append(s.arena, key...)
	s.arena = append(s.arena, value...)
	s.stats.Records++
	s.stats.Bytes += int64(len(key) + len(value))
	return nil
}

func (s *Sorter) key(r rec) []byte { return s.arena[r.off : r.off+int(r.klen)] }
func (s *Sorter) value(r rec) []byte {
	start := r.off + int(r.klen)
	return s.arena[start : start+int(r.vlen)]
}

func (s *Sorter) sortBuffer() {
	slices.SortStableFunc(s.recs, func(a, b rec) int { return bytes.Compare(s.key(a), s.key(b)) })
}

// spill sorts the buffer and writes it as a run file.
func (s *Sorter) spill() error {
	s.sortBuffer()
	f, err := os.CreateTemp(s.cfg.Dir, "extsort-run-*")
	if err != nil {
		return fmt.Errorf("extsort: create run: %w", err)
	}
	s.runs = append(s.runs, f) // owned from here on: Close removes it
	w := newRunWriter(f)
	for _, r := range s.recs {
		w.write(s.key(r), s.value(r))
	}
	if err := w.finish(); err != nil {
		return err
	}
	s.stats.Runs++
	s.stats.SpilledBytes += w.n
	s.arena = s.arena[:0]
	s.recs = s.recs[:0]
	return nil
}

// Sort finishes adding and returns the records in key order. The iterator
// is valid until Close.
func (s *Sorter) Sort() (Iterator, error) {
	if s.sorted {
		return nil, ErrSorted
	}
	s.sorted = true
	if len(s.runs) == 0 {
		s.sortBuffer()
		return &memIter{s: s, i: -1}, nil
	}
	if len(s.recs) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	s.arena, s.recs = nil, nil
	// Merge passes until one merge can take every run.
	for len(s.runs) > s.cfg.FanIn {
		group := s.runs[:s.cfg.FanIn]
		out, err := os.CreateTemp(s.cfg.Dir, "extsort-merge-*")
		if err != nil {
			return nil, fmt.Errorf("extsort: create run: %w", err)
		}
		m, err := newMerger(group)
		if err != nil {
			out.Close()
			os.Remove(out.Name())
			return nil, err
		}
		w := newRunWriter(out)
		for m.Next() {
			w.write(m.Key(), m.Value())
		}
		if err := cmp.Or(m.Err(), w.finish()); err != nil {
			out.Close()
			os.Remove(out.Name())
			return nil, err
		}
		for _, f := range group {
			removeFile(f)
		}
		// The merged run holds the earliest records: keep it first so that
		// equal keys stay in insertion order.
		s.runs = append([]*os.File{out}, s.runs[s.cfg.FanIn:]...)
		s.stats.MergePasses++
		s.stats.SpilledBytes += w.n
	}
	return newMerger(s.runs)
}

// Stats reports what the sorter did so far.
func (s *Sorter) Stats() Stats { return s.stats }

// Close removes the run files. It may be called more than once.
func (s *Sorter) Close() error {
	var errs []error
	for _, f := range s.runs {
		errs = append(errs, removeFile(f))
	}
	s.runs = nil
	s.arena, s.recs = nil, nil
	return errors.Join(errs...)
}

func removeFile(f *os.File) error {
	f.Close()
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("extsort: %w", err)
	}
	return nil
}

// Iterator yields records in key order. Key and Value are valid until the
// next call of Next.
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
}

type memIter struct {
	s *Sorter
	i int
}

func (it *memIter) Next() bool {
	if it.i+1 >= len(it.s.recs) {
		it.i = len(it.s.recs)
		return false
	}
	it.i++
	return true
}
func (it *memIter) Key() []byte   { return it.s.key(it.s.recs[it.i]) }
func (it *memIter) Value() []byte { return it.s.value(it.s.recs[it.i]) }
func (it *memIter) Err() error    { return nil }

// A run file is a sequence of records: uvarint key length, uvarint value
// length, key, value.
type runWriter struct {
	f   *os.File
	w   *bufio.Writer
	n   int64
	err error
	buf [2 * binary.MaxVarintLen64]byte
}

func newRunWriter(f *os.File) *runWriter {
	return &runWriter{f: f, w: bufio.NewWriterSize(f, writeBuffer)}
}

func (w *runWriter) write(k, v []byte) {
	if w.err != nil {
		return
	}
	n := binary.PutUvarint(w.buf[:], uint64(len(k)))
	n += binary.PutUvarint(w.buf[n:], uint64(len(v)))
	w.w.Write(w.buf[:n])
	w.w.Write(k)
	_, w.err = w.w.Write(v)
	w.n += int64(n + len(k) + len(v))
}

func (w *runWriter) finish() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("extsort: write run: %w", w.err)
	}
	return nil
}

type runReader struct {
	r    *bufio.Reader
	idx  int // position among the runs: ties go to the earlier run
	k, v []byte
}

func (r *runReader) next() (bool, error) {
	kl, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("extsort: read run: %w", err)
	}
	vl, err := binary.ReadUvarint(r.r)
	if err != nil {
		return false, fmt.Errorf("extsort: read run: %w", noEOF(err))
	}
	r.k = grow(r.k, int(kl))
	r.v = grow(r.v, int(vl))
	if _, err := io.ReadFull(r.r, r.k); err != nil {
		return false, fmt.Errorf("extsort: read run: %w", noEOF(err))
	}
	if _, err := io.ReadFull(r.r, r.v); err != nil {
		return false, fmt.Errorf("extsort: read run: %w", noEOF(err))
	}
	return true, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// merger is a k-way merge of run files with a heap.
type merger struct {
	h    readerHeap
	cur  *runReader
	k, v []byte
	err  error
}

func newMerger(runs []*os.File) (*merger, error) {
	m := &merger{}
	for i, f := range runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("extsort: %w", err)
		}
		r := &runReader{r: bufio.NewReaderSize(f, readBuffer), idx: i}
		ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.h = append(m.h, r)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

func (m *merger) Next() bool {
	if m.err != nil {
		return false
	}
	// Advance the reader whose record was returned last.
	if m.cur != nil {
		ok, err := m.cur.next()
		if err != nil {
			m.err = err
			return false
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		m.cur = nil
	}
	if len(m.h) == 0 {
		return false
	}
	m.cur = m.h[0]
	m.k, m.v = m.cur.k, m.cur.v
	return true
}

func (m *merger) Key() []byte   { return m.k }
func (m *merger) Value() []byte { return m.v }
func (m *merger) Err() error    { return m.err }

type readerHeap []*runReader

func (h readerHeap) Len() int { return len(h) }
func (h readerHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].k, h[j].k); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h readerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *readerHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *readerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
