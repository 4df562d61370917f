package export

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"math/bits"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// Defaults of TargetConfig.
const (
	DefaultFileSize   = capacity.DefaultExportFileSize // uncompressed bytes per data file
	MinFileSize       = capacity.MinExportFileSize
	DefaultBlockItems = 4096
	DefaultBlockBytes = 4 << 20
)

// TargetConfig configures a Target.
type TargetConfig struct {
	// Mapping gives the keys and indexes the items are checked against,
	// and the digest every file record carries. Required.
	Mapping *mapping.Mapping
	// Store is where files go: a directory or a bucket and prefix (see
	// NewStore). Required.
	Store Store
	// Compression is CompressionGzip (default), CompressionZstd or
	// CompressionNone.
	Compression string
	// FileSize is the uncompressed size at which a data file is committed
	// and the next begins (files end between source rows, so they run a
	// little over). Default 64 MiB. Every item of a file waits for its
	// commit to be acknowledged, so the run's memory grows with it.
	FileSize int64
	// OnDuplicate and RecentKeys as in load.Config.
	OnDuplicate string
	RecentKeys  int
	// StopOnFail makes the first refused item the last thing stored: the
	// file so far is committed without that item's row and nothing after
	// it is stored. Set it when the run stops at the first bad row
	// (engine.OnErrorFail), so that the state file and the committed
	// files agree. Export sets it.
	StopOnFail bool
	// BlockItems and BlockBytes bound the blocks whose lines are
	// interleaved by partition key before they are written: Import from
	// S3 loads a file in order, and a file sorted by partition key makes
	// a rolling hot partition. Defaults 4096 and 4 MiB.
	BlockItems int
	BlockBytes int
	// Logger receives the commits (Debug) and refusals (Warn). Default:
	// discard.
	Logger *slog.Logger
}

// WithDefaults returns c with every unset field set to its default.
func (c TargetConfig) WithDefaults() TargetConfig {
	c.Compression = cmp.Or(c.Compression, CompressionGzip)
	c.FileSize = cmp.Or(c.FileSize, DefaultFileSize)
	c.BlockItems = cmp.Or(c.BlockItems, DefaultBlockItems)
	c.BlockBytes = cmp.Or(c.BlockBytes, DefaultBlockBytes)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every problem with c.
func (c TargetConfig) Validate() error {
	var errs []error
	if c.Mapping == nil {
		errs = append(errs, errors.New("export: a mapping is required"))
	}
	if c.Store.store == nil {
		errs = append(errs, errors.New("export: a destination is required"))
	}
	if p := CompressionProblem(c.Compression); p != "" {
		errs = append(errs, errors.New("export: compression "+p))
	}
	if p := FileSizeProblem(c.FileSize, fmt.Sprintf("%d bytes", c.FileSize)); p != "" {
		errs = append(errs, errors.New("export: file size "+p))
	}
	if c.BlockItems < 1 || c.BlockBytes < 1 {
		errs = append(errs, errors.New("export: block items and bytes must be positive"))
	}
	return errors.Join(errs...)
}

// Target stores a run's items as an export: DYNAMODB_JSON data files, the
// format Import from S3 reads, in a directory or under an S3 prefix. It is
// a contract.Target, and a contract.Starter: every item is acknowledged only
// once the file holding it is committed (renamed into place, or its
// multipart upload completed) and recorded under parts/, all items of a
// file at once, so that the run's state file always ends at a file
// boundary and a resumed export continues after the last committed file
// the state file covers.
//
// Each line is {"Item":{...}} with the item's canonical DynamoDB JSON, so
// the same items make the same bytes; items are interleaved by partition
// key within blocks (see TargetConfig.BlockItems), deterministically.
type Target struct {
	cfg     TargetConfig
	st      store
	checker *load.Checker

	files      []File // committed, in order
	snapshot   time.Time
	atomically func(func())
	started    bool
}

// NewTarget returns a Target for cfg (defaults applied, then validated).
func NewTarget(cfg TargetConfig) (*Target, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, kindedConfig(err)
	}
	t := &Target{cfg: cfg, st: cfg.Store.store, atomically: func(f func()) { f() }}
	if err := t.newChecker(nil); err != nil {
		return nil, kindedConfig(err)
	}
	return t, nil
}

// newChecker makes the item checks of a writer into the mapping's table,
// with no duplicate check for the unique entities, as a run has.
func (t *Target) newChecker(unique []string) error {
	lc := tableconf.For(t.cfg.Mapping, "")
	lc.OnDuplicate, lc.RecentKeys, lc.Logger = t.cfg.OnDuplicate, t.cfg.RecentKeys, t.cfg.Logger
	lc.UniqueEntities = unique
	checker, err := load.NewChecker(lc)
	if err != nil {
		return err
	}
	t.checker = checker
	return nil
}

var (
	_ contract.Target  = (*Target)(nil)
	_ contract.Starter = (*Target)(nil)
)

// partName matches the names of data files and their records.
var partName = regexp.MustCompile(`^part-(\d{6})(\.json(\.gz|\.zst)?)$`)

func (t *Target) dataName(n int) string {
	return fmt.Sprintf("%s/part-%06d%s", dataDir, n, extension[t.cfg.Compression])
}

func recordName(n int) string { return fmt.Sprintf("%s/part-%06d.json", partsDir, n) }

// fileNumber is the number in a data file's or record's name, or 0.
func fileNumber(name string) int {
	_, base, _ := cutLast(name, "/")
	mm := partName.FindStringSubmatch(base)
	if mm == nil {
		return 0
	}
	n, _ := strconv.Atoi(mm[1])
	return n
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return "", s, false
}

// Start reconciles the destination with the state file: a new export
// refuses a destination that holds another one unless ts.Fresh (then it
// is deleted); a resumed one keeps the files its state file covers and
// deletes the ones committed after the last checkpoint (their items are
// sent again).
func (t *Target) Start(ctx context.Context, ts contract.TargetStart) error {
	t.snapshot = ts.SnapshotTime.UTC()
	if ts.Atomically != nil {
		t.atomically = ts.Atomically
	}
	if len(ts.UniqueEntities) > 0 {
		if err := t.newChecker(ts.UniqueEntities); err != nil {
			return kindedConfig(err)
		}
	}
	if err := t.st.cleanup(ctx); err != nil {
		return err
	}
	records, err := t.readRecords(ctx)
	if err != nil {
		return err
	}
	data, err := t.st.list(ctx, dataDir)
	if err != nil {
		return err
	}
	for _, name := range data {
		if fileNumber(name) == 0 {
			return kindedState(fmt.Errorf("%s/%s was not written by an export: Import from S3 reads every object under %s/%s/, so the export must have that prefix to itself; choose another destination", t.st.where(), name, t.st.where(), dataDir))
		}
	}
	_, _, manifestErr := readManifest(ctx, t.st)
	hasManifest := !errors.Is(manifestErr, fs.ErrNotExist) // complete, or unreadable: either way not ours to keep
	holds := len(records) > 0 || len(data) > 0 || hasManifest
	keep := 0
	switch {
	case ts.Resumed:
		if keep, err = t.resumePoint(records, ts.Done); err != nil {
			return err
		}
	case holds && !ts.Fresh:
		what := fmt.Sprintf("%d data files", len(data))
		if hasManifest {
			what = "a complete export (" + what + ")"
		}
		return kindedState(fmt.Errorf("%s already holds %s: pass --fresh to delete it and export again, or choose another destination", t.st.where(), what))
	}
	t.files = nil
	for _, r := range records[:keep] {
		t.files = append(t.files, r.File)
	}
	// Delete what is not kept: after a crash, files committed after the
	// last checkpoint; on a fresh start, everything of the old export.
	if hasManifest {
		if err := t.st.remove(ctx, manifestName); err != nil {
			return err
		}
	}
	for _, name := range data {
		if n := fileNumber(name); n > keep {
			if err := t.st.remove(ctx, name); err != nil {
				return err
			}
		}
	}
	for _, r := range records[keep:] {
		if err := t.st.remove(ctx, recordName(fileNumber(r.Name))); err != nil {
			return err
		}
	}
	if dropped := len(records) - keep; dropped > 0 {
		t.cfg.Logger.Info("export: deleted the files committed after the checkpoint; their items are exported again", "files", dropped)
	}
	t.started = true
	return nil
}

// readRecords reads the records under parts/, in file order, checking
// that they are numbered 1..n and belong to this mapping.
func (t *Target) readRecords(ctx context.Context) ([]partRecord, error) {
	names, err := t.st.list(ctx, partsDir)
	if err != nil {
		return nil, err
	}
	records := make([]partRecord, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, name := range names {
		g.Go(func() error {
			r, err := t.st.get(gctx, name)
			if err != nil {
				return err
			}
			defer r.Close()
			data, err := io.ReadAll(r)
			if err != nil {
				return fmt.Errorf("export: read %s: %w", name, err)
			}
			if err := json.Unmarshal(data, &records[i]); err != nil {
				return fmt.Errorf("export: %s/%s is not a file record: %w", t.st.where(), name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.SortFunc(records, func(a, b partRecord) int { return cmp.Compare(fileNumber(a.Name), fileNumber(b.Name)) })
	return records, nil
}

// resumePoint returns how many of the committed files the state file
// covers: the files whose acknowledged items add up to what it records.
func (t *Target) resumePoint(records []partRecord, done map[string]int64) (int, error) {
	var want int64
	for _, n := range done {
		want += n
	}
	var sum int64
	for i, r := range records {
		if sum == want {
			return i, nil
		}
		if n := fileNumber(r.Name); n != i+1 {
			return 0, kindedState(fmt.Errorf("%s: the file records are not numbered 1, 2, 3...: %s is number %d of them; pass --fresh to start over", t.st.where(), r.Name, i+1))
		}
		if r.MappingSHA256 != t.cfg.Mapping.Digest {
			return 0, kindedState(fmt.Errorf("%s/%s was exported with another mapping (sha256 %.12s…, now %.12s…); pass --fresh to start over", t.st.where(), r.Name, r.MappingSHA256, t.cfg.Mapping.Digest))
		}
		sum += r.Acknowledged
	}
	if sum == want {
		return len(records), nil
	}
	return 0, kindedState(fmt.Errorf("the state file records %d items exported, but the files committed at %s do not add up to that at any file boundary (%d in all): is it the destination the export was started with? Pass --fresh to start over",
		want, t.st.where(), sum))
}

// ReadsOriginKey tells the engine that the target reads an item's source
// row key through Origin.Key, only for the items it reports, and tells rows
// apart by Origin.Row: the engine then formats no key for every row.
func (t *Target) ReadsOriginKey() bool { return true }

// Open says which target this is. Start has already checked the
// destination.
func (t *Target) Open(context.Context) (contract.TargetInfo, error) {
	return contract.TargetInfo{Kind: "export", Name: t.st.where().String()}, nil
}

// Files returns the data files committed so far.
func (t *Target) Files() []File { return slices.Clone(t.files) }

// line is an item on its way into a file: its encoded line (nil for a
// duplicate skipped, which is only acknowledged), for interleaving the hash
// of its partition key and its place in its partition, and what to count.
type line struct {
	data   []byte
	buf    *lineBuf // data's buffer, released once data is written
	pkHash uint64
	rank   int
	seq    int
	entity string
	hash   [32]byte
	ack    func()
}

// writeState is one Write call.
type writeState struct {
	t     *Target
	ctx   context.Context
	block []line
	bytes int
	ranks map[uint64]int
	// rowStart is where the current source row's lines begin in block.
	rowStart int
	// The source row of the last item: its table and the engine's row
	// (compared by identity: the engine's rows are pointers), or its key
	// where the item has no Row.
	lastTable, lastK string
	lastRow          interface{ SourceKey() string }
	file             *openFile
	stats            contract.Stats
	itemErrs         []error
	itemErrCount     int
	stopped          bool
	order            []lineOrder // flushBlock's, reused
}

// lineOrder is a line's place in the interleaved order: sorting these
// instead of the lines moves 16 bytes a line, not a hundred.
type lineOrder struct {
	rank, seq int32
	pkHash    uint64
}

// openFile is the data file being written.
type openFile struct {
	n            int
	name         string
	pf           pendingFile
	zw           io.WriteCloser
	sha          hash.Hash
	stored       int64
	uncompressed int64
	items        int64
	acked        int64
	entities     map[string]*entityAcc
	order        []string
	acks         []func()
}

type entityAcc struct {
	items int64
	sum   diff.Sum
}

// Write stores the items received until the channel is closed, in files
// of about FileSize, acknowledging each file's items when it is committed.
func (t *Target) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	if !t.started {
		return contract.Stats{}, errors.New("export: Write before Start: run the target with engine.Run or engine.Export")
	}
	w := &writeState{t: t, ctx: ctx, ranks: map[uint64]int{}, stats: contract.Stats{Entities: map[string]contract.EntityStats{}}}
	start := time.Now()
	chunks, stop := t.encodeAhead(ctx, items, runtime.GOMAXPROCS(0))
	fatal := w.consume(chunks)
	stop()
	if fatal == nil && !w.stopped {
		fatal = w.finish()
	}
	if w.file != nil { // not committed: its items are never acknowledged
		w.file.pf.abort()
		w.file = nil
	}
	w.stats.Elapsed = time.Since(start)
	errs := []error{}
	if fatal != nil {
		errs = append(errs, fatal)
	}
	errs = append(errs, w.itemErrs...)
	if more := w.itemErrCount - len(w.itemErrs); more > 0 {
		errs = append(errs, fmt.Errorf("export: and %d more item errors", more))
	}
	return w.stats, errors.Join(errs...)
}

// encodeChunk is the most items one goroutine encodes at a time.
const encodeChunk = 256

// encoded is an item with what can be computed from it alone, ahead of
// the writer and in parallel: its measure (load.Checker.Measure), line,
// hash and partition key's hash.
type encoded struct {
	it     contract.Item
	m      load.Measured
	data   []byte // nil when Measure found a fault: Check refuses the item
	buf    *lineBuf
	sum    [32]byte
	pkHash uint64
}

// chunk is items received one after another, encoded by one goroutine.
type chunk struct {
	items []encoded
	done  chan struct{} // closed when encoded
}

// chunks recycles chunks once the writer has taken their items: a chunk
// is about 60 KB, and most are sent far from full.
var chunks = sync.Pool{New: func() any { return &chunk{items: make([]encoded, 0, encodeChunk)} }}

func newChunk() *chunk {
	c := chunks.Get().(*chunk)
	c.done = make(chan struct{})
	return c
}

// release returns a chunk whose items the writer has taken (their lines
// live on in their own buffer).
func (c *chunk) release() {
	clear(c.items) // no references to items' attributes
	c.items = c.items[:0]
	chunks.Put(c)
}

// lineBuf is the buffer a chunk's lines are encoded into. The writer
// releases each line once it has written it (the compressors copy what
// they are given) or dropped it; the last release puts the buffer back
// for another chunk: a new buffer for every chunk was a fifth of an
// export's allocated bytes, and so of the collector's work. Only the
// writer's goroutine counts, after the encoder handed the chunk over.
type lineBuf struct {
	b     []byte
	lines int // lines not yet released
}

// lineBufs are the buffers free for reuse, by size class: a power of two
// from 4 KiB (chunks hold from one item to encodeChunk).
var lineBufs [lineBufClasses]sync.Pool

const (
	lineBufMinBits = 12
	lineBufClasses = 8
)

// lineBufClass is the class of buffers of n bytes or more, and their size.
func lineBufClass(n int) (int, int) {
	c := max(bits.Len(uint(n-1)), lineBufMinBits) - lineBufMinBits
	return c, 1 << (c + lineBufMinBits)
}

// getLineBuf returns an empty buffer of at least n bytes.
func getLineBuf(n int) *lineBuf {
	c, size := lineBufClass(n)
	if c >= lineBufClasses {
		return &lineBuf{b: make([]byte, 0, n)}
	}
	if lb, ok := lineBufs[c].Get().(*lineBuf); ok {
		lb.b = lb.b[:0]
		return lb
	}
	return &lineBuf{b: make([]byte, 0, size)}
}

// release is called for each of the buffer's lines once the writer is
// done with it.
func (lb *lineBuf) release() {
	if lb == nil {
		return
	}
	if lb.lines--; lb.lines == 0 {
		// Into the largest class it holds (it may have grown past its own).
		if c := bits.Len(uint(cap(lb.b))) - 1 - lineBufMinBits; c >= 0 {
			lineBufs[min(c, lineBufClasses-1)].Put(lb)
		}
	}
}

// encodeAhead encodes the items on n goroutines, in chunks of what the
// channel holds (up to encodeChunk items, never waiting for more), and
// returns the chunks in the order of the items: encoding, hashing and
// measuring are two thirds of the writer's work per item, and one
// goroutine doing them all was an export's bottleneck. stop ends the
// goroutines and waits for them; the items channel is then no longer read.
func (t *Target) encodeAhead(ctx context.Context, items <-chan contract.Item, n int) (<-chan *chunk, func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan *chunk, 2*n)
	work := make(chan *chunk, 2*n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var enc ddbvalue.CanonicalEncoder
			for c := range work {
				t.encode(c, &enc)
				close(c.done)
			}
		})
	}
	send := func(c *chunk) bool {
		// Queued for the encoders before the writer can wait for it.
		select {
		case work <- c:
		case <-ctx.Done():
			return false
		}
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	wg.Go(func() {
		defer close(work)
		defer close(out)
		for {
			var c *chunk
			select {
			case <-ctx.Done():
				return
			case it, ok := <-items:
				if !ok {
					return
				}
				c = newChunk()
				c.items = append(c.items, encoded{it: it})
			}
		more:
			for len(c.items) < encodeChunk {
				select {
				case it, ok := <-items:
					if !ok {
						send(c)
						return
					}
					c.items = append(c.items, encoded{it: it})
				default:
					break more
				}
			}
			if !send(c) {
				return
			}
		}
	})
	return out, func() {
		cancel()
		wg.Wait()
	}
}

// encode measures and encodes a chunk's items, their lines in one buffer.
func (t *Target) encode(c *chunk, enc *ddbvalue.CanonicalEncoder) {
	// The buffer's size from the items' (their canonical JSON adds names'
	// quotes and type tags, some 12 bytes an attribute): one allocation,
	// rarely two.
	need := 0
	for i := range c.items {
		e := &c.items[i]
		e.m = t.checker.Measure(e.it)
		need += e.m.Size + 12*len(e.it.Attrs) + 16
	}
	lb := getLineBuf(need)
	buf := lb.b
	pk := t.cfg.Mapping.PartitionKey
	for i := range c.items {
		e := &c.items[i]
		if e.m.Err != nil || len(e.it.Attrs) == 0 {
			continue
		}
		start := len(buf)
		buf, e.sum = appendLine(enc, buf, e.it.Attrs)
		e.data = buf[start:len(buf):len(buf)] // earlier lines stay valid when buf grows
		e.buf = lb
		lb.lines++
		e.pkHash = keyHash(e.it.Attrs[pk])
	}
	// Reused from here on: lines in an array buf outgrew stay in that
	// array, which is left to the collector.
	lb.b = buf
}

// consume takes the encoded items in order until the channel is closed.
// After StopOnFail stopped the export it only drains it.
func (w *writeState) consume(chunks <-chan *chunk) error {
	interrupted := func() error { return fmt.Errorf("export: write interrupted: %w", context.Cause(w.ctx)) }
	for {
		select {
		case <-w.ctx.Done():
			return interrupted()
		case c, ok := <-chunks:
			if !ok {
				if w.ctx.Err() != nil { // the encoders stopped for it
					return interrupted()
				}
				return nil
			}
			select {
			case <-c.done:
			case <-w.ctx.Done():
				return interrupted()
			}
			for i := range c.items {
				if w.stopped {
					break
				}
				if err := w.add(&c.items[i]); err != nil {
					return err
				}
			}
			c.release()
		}
	}
}

// add takes one item: at a row boundary, a full block is written and a
// full file committed first.
func (w *writeState) add(e *encoded) error {
	cfg := &w.t.cfg
	it := e.it
	if it.Origin.Table != w.lastTable || it.Origin.Row != w.lastRow || it.Origin.SourceKey != w.lastK {
		w.lastTable, w.lastRow, w.lastK = it.Origin.Table, it.Origin.Row, it.Origin.SourceKey
		if w.blockFull() {
			if err := w.flushBlock(len(w.block)); err != nil {
				return err
			}
			if w.file != nil && w.file.uncompressed >= cfg.FileSize {
				if err := w.commit(); err != nil {
					return err
				}
			}
		}
		w.rowStart = len(w.block)
	}
	ie, skip := w.t.checker.CheckMeasured(it, e.m)
	if ie != nil || skip {
		e.buf.release()
	}
	switch {
	case ie != nil:
		w.refused(it, ie)
		if cfg.StopOnFail {
			// Commit what came before this row; store nothing more.
			w.stopped = true
			if err := w.flushBlock(w.rowStart); err != nil {
				return err
			}
			return w.commit()
		}
		return nil
	case skip:
		w.stats.Duplicates++
		w.block = append(w.block, line{seq: len(w.block), entity: it.Origin.Entity, ack: it.Ack})
		return nil
	}
	data, h := e.data, e.pkHash
	w.block = append(w.block, line{data: data, buf: e.buf, pkHash: h, rank: w.ranks[h], seq: len(w.block), entity: it.Origin.Entity, hash: e.sum, ack: it.Ack})
	w.ranks[h]++
	w.bytes += len(data)
	return nil
}

// blockFull says the block is to be written: it holds BlockItems or
// BlockBytes, or it would fill the file.
func (w *writeState) blockFull() bool {
	cfg := &w.t.cfg
	if len(w.block) >= cfg.BlockItems || w.bytes >= cfg.BlockBytes {
		return true
	}
	return w.file != nil && w.file.uncompressed+int64(w.bytes) >= cfg.FileSize || w.file == nil && int64(w.bytes) >= cfg.FileSize
}

// refused reports a refused item to its owner and keeps its error.
func (w *writeState) refused(it contract.Item, ie *contract.ItemError) {
	if it.Fail != nil {
		it.Fail(ie)
	}
	w.t.cfg.Logger.Warn("export: item not exported", "origin", ie.Origin.String(), "key", ie.Key, "reason", ie.Reason)
	w.stats.ItemErrors++
	w.itemErrCount++
	if len(w.itemErrs) < 1000 {
		w.itemErrs = append(w.itemErrs, ie)
	}
}

// flushBlock writes the first n lines of the block to the file,
// interleaved: the first line of each partition key (ordered by the key's
// hash), then the second of each, and so on. The rest of the block stays.
func (w *writeState) flushBlock(n int) error {
	if n == 0 {
		return nil
	}
	out := w.block[:n]
	w.order = w.order[:0]
	for i := range out {
		l := &out[i]
		w.order = append(w.order, lineOrder{rank: int32(l.rank), seq: int32(l.seq), pkHash: l.pkHash})
	}
	slices.SortFunc(w.order, func(a, b lineOrder) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.pkHash, b.pkHash), cmp.Compare(a.seq, b.seq))
	})
	if w.file == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	f := w.file
	for _, o := range w.order {
		l := &out[o.seq] // a line's seq is its place in the block
		f.acks = append(f.acks, l.ack)
		f.acked++
		if l.data == nil {
			continue
		}
		if _, err := f.zw.Write(l.data); err != nil {
			return fmt.Errorf("export: write %s: %w", f.name, err)
		}
		l.buf.release()
		f.uncompressed += int64(len(l.data))
		f.items++
		e := f.entities[l.entity]
		if e == nil {
			e = &entityAcc{}
			f.entities[l.entity] = e
			f.order = append(f.order, l.entity)
		}
		e.items++
		e.sum.Add(l.hash)
	}
	// The rest moves to the front, renumbered.
	total := len(w.block)
	w.block = w.block[:copy(w.block, w.block[n:])]
	clear(w.block[len(w.block):total]) // no references to acks and lines
	clear(w.ranks)
	w.bytes = 0
	for i := range w.block {
		l := &w.block[i]
		l.seq, l.rank = i, w.ranks[l.pkHash]
		w.ranks[l.pkHash]++
		w.bytes += len(l.data)
	}
	w.rowStart = 0
	return nil
}

// open starts the next data file.
func (w *writeState) open() error {
	t := w.t
	n := len(t.files) + 1
	if n > capacity.MaxImportFiles {
		// Import from S3 would refuse the whole export; better to stop at
		// the limit than to write on.
		var bytes int64
		for _, f := range t.files {
			bytes += f.UncompressedBytes
		}
		return fmt.Errorf("export: %d data files of about %d KiB are written and more are needed, but Import from S3 takes at most %d files per import: export again with a larger --file-size (--fresh; %dMiB would fit twice what is written so far)",
			len(t.files), t.cfg.FileSize>>10, capacity.MaxImportFiles, capacity.FileSizeForImport(2*bytes)>>20)
	}
	name := t.dataName(n)
	pf, err := t.st.create(w.ctx, name)
	if err != nil {
		return err
	}
	f := &openFile{n: n, name: name, pf: pf, sha: sha256.New(), entities: map[string]*entityAcc{}}
	f.zw, err = compressor(io.MultiWriter(countingWriter{pf, &f.stored}, f.sha), t.cfg.Compression)
	if err != nil {
		pf.abort()
		return err
	}
	w.file = f
	return nil
}

type countingWriter struct {
	w io.Writer
	n *int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// commit completes the current file, records it under parts/, and only
// then acknowledges its items, all at once with respect to checkpoints.
func (w *writeState) commit() error {
	f := w.file
	if f == nil {
		return nil
	}
	t := w.t
	if err := f.zw.Close(); err != nil {
		return fmt.Errorf("export: write %s: %w", f.name, err)
	}
	w.file = nil
	if err := f.pf.commit(); err != nil {
		return err
	}
	rec := partRecord{MappingSHA256: t.cfg.Mapping.Digest, File: File{
		Name: f.name, Items: f.items, Bytes: f.stored, UncompressedBytes: f.uncompressed,
		SHA256: hex.EncodeToString(f.sha.Sum(nil)), Snapshot: t.snapshot, Acknowledged: f.acked,
	}}
	for _, e := range f.order {
		acc := f.entities[e]
		rec.Entities = append(rec.Entities, EntityCount{Entity: e, Items: acc.items, ContentHash: acc.sum.String()})
	}
	data, err := marshalIndent(rec)
	if err != nil {
		return err
	}
	if err := t.st.put(w.ctx, recordName(f.n), data); err != nil {
		return err
	}
	t.files = append(t.files, rec.File)
	t.atomically(func() {
		for _, ack := range f.acks {
			if ack != nil {
				ack()
			}
		}
	})
	for _, e := range f.order {
		s := w.stats.Entities[e]
		s.Written += f.entities[e].items
		w.stats.Entities[e] = s
	}
	w.stats.Total.Written += f.items
	w.stats.Calls++
	t.cfg.Logger.Debug("export: committed", "file", f.name, "items", f.items, "bytes", f.stored, "uncompressed", f.uncompressed)
	return nil
}

// finish writes what is left and commits the last file.
func (w *writeState) finish() error {
	if err := w.flushBlock(len(w.block)); err != nil {
		return err
	}
	return w.commit()
}

// Finish writes the manifest of a complete export: the files' totals,
// content hashes, and what the run says about rows and rejects.
func (t *Target) Finish(ctx context.Context, res Summary) (*Manifest, error) {
	m := &Manifest{
		Format: ManifestFormat, Complete: true,
		Mapping: t.cfg.Mapping.File, MappingSHA256: t.cfg.Mapping.Digest, Table: cmp.Or(res.Table, t.cfg.Mapping.Table),
		InputFormat: "DYNAMODB_JSON", Compression: importCompression[t.cfg.Compression], DataPrefix: dataDir + "/",
		StartedAt: res.StartedAt, CompletedAt: time.Now().UTC(),
		Rows: res.Rows, Rejects: res.Rejects,
		Files: slices.Clone(t.files),
	}
	if err := m.totals(); err != nil {
		return nil, err
	}
	data, err := marshalIndent(m)
	if err != nil {
		return nil, err
	}
	if err := t.st.put(ctx, manifestName, data); err != nil {
		return nil, err
	}
	return m, nil
}

// keyHash is a fixed hash of a key value (the same on every run, unlike
// the writer's seeded one), so that interleaving is deterministic: 64-bit
// FNV-1a of a type letter and the value, computed inline (hash/fnv's
// hasher would be allocated for every item).
func keyHash(av types.AttributeValue) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(b byte) { h = (h ^ uint64(b)) * prime }
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		add('S')
		for i := 0; i < len(v.Value); i++ {
			add(v.Value[i])
		}
	case *types.AttributeValueMemberN:
		add('N')
		for i := 0; i < len(v.Value); i++ {
			add(v.Value[i])
		}
	case *types.AttributeValueMemberB:
		add('B')
		for _, b := range v.Value {
			add(b)
		}
	}
	return h
}
