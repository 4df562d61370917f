package load

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// BatchWriter is the part of the DynamoDB client the Writer uses.
type BatchWriter interface {
	BatchWriteItem(ctx context.Context, params *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ BatchWriter = (*dynamodb.Client)(nil)

// maxReportedItemErrors bounds the row errors Write keeps to report; the
// rest are counted.
const maxReportedItemErrors = 1000

// Writer writes items to one table. Create it with NewWriter; use one per
// run (it remembers the keys it has seen). Write must not be called
// concurrently on the same Writer.
type Writer struct {
	client   BatchWriter
	direct   *direct // the client's calls without its per-call middleware, when NewClient built it
	cfg      Config
	clk      clock
	backoff  backoff
	limiter  *limiter
	checks   itemChecks
	seed     maphash.Seed
	envelope []byte // {"RequestItems":{"<table>":[
	slab     []byte // holds the encoded requests of accepted items
	scratch  []byte

	running atomic.Bool
	// live is the tally of the running (or last) Write, for Stats.
	live    atomic.Pointer[tally]
	reached atomic.Bool // DynamoDB answered at least once
}

// NewWriter returns a Writer for cfg (defaults applied, then validated).
func NewWriter(client BatchWriter, cfg Config) (*Writer, error) {
	if client == nil {
		return nil, errors.New("load: nil DynamoDB client")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newWriter(client, cfg, realClock{}), nil
}

func newWriter(client BatchWriter, cfg Config, clk clock) *Writer {
	checks := newItemChecks(cfg)
	w := &Writer{
		client:  client,
		cfg:     cfg,
		clk:     clk,
		backoff: newBackoff(cfg.RetryBaseDelay, cfg.RetryMaxDelay),
		limiter: newLimiter(clk, cfg.Logger, cfg.MaxWCU, cfg.MinWCU),
		checks:  checks,
		seed:    checks.dedupe.seed,
	}
	if c, ok := client.(*dynamodb.Client); ok && !cfg.SDKMiddleware && ownClient(c) {
		w.direct = newDirect(c)
	}
	w.envelope = append(ddbvalue.AppendString([]byte(`{"RequestItems":{`), cfg.Table), ":["...)
	return w
}

// pending is an accepted item on its way to DynamoDB.
type pending struct {
	item     contract.Item
	req      []byte // the item's request in the body: {"PutRequest":{"Item":{...}}}
	key      string // canonical primary key; computed when needed (see key)
	pkHash   uint64 // hash of the partition key alone, for interleaving
	seq      uint64 // arrival order in the window
	waitFrom uint64 // items handed out of the window when it arrived
	wcu      int    // write units, table plus indexes
	sent     int    // times sent so far
}

// wire is how many bytes p adds to a request body (its comma included).
func (p *pending) wire() int { return len(p.req) + 1 }

// run is the state of one Write call.
type run struct {
	w      *Writer
	tally  *tally
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	slots  chan struct{} // Concurrency of them: a batch holds one to be sent
	// calls is the context of each BatchWriteItem call: it outlives the
	// run's context by StopGrace, so that a call in flight when the run
	// stops can still be acknowledged.
	calls   context.Context
	backing chan struct{} // batches backing off without a slot

	mu        sync.Mutex
	fatal     error
	itemErrs  []error
	itemCount int
}

// Write consumes items until the channel is closed or ctx is done, and
// returns when every accepted item is acknowledged or an error stops it.
// Once ctx is done no batch is started or retried: the calls in flight
// finish (within StopGrace) and acknowledge what DynamoDB took, and the
// items still buffered are dropped. On error or when ctx ends, items not
// acknowledged by then are never acknowledged, and Write
// stops reading the channel: the producer must also watch its context. The
// returned error wraps the first fatal error (or, if ctx ended first, its
// cause) and every row error ([*contract.ItemError]) collected, the first 1000 of
// them; with the default MaxItemErrors it is the first row error itself.
func (w *Writer) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	if !w.running.CompareAndSwap(false, true) {
		return contract.Stats{}, errors.New("load: Write called while another Write on the same Writer is running")
	}
	defer w.running.Store(false)

	start := w.clk.Now()
	r := &run{w: w, tally: newTally(),
		slots:   make(chan struct{}, w.cfg.Concurrency),
		backing: make(chan struct{}, backoffFactor*w.cfg.Concurrency)}
	w.live.Store(r.tally)
	runCtx, cancel := context.WithCancelCause(ctx)
	r.cancel = cancel
	defer cancel(nil)
	calls, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	r.calls = calls
	defer context.AfterFunc(runCtx, func() {
		grace := time.NewTimer(w.cfg.StopGrace)
		defer grace.Stop()
		select {
		case <-grace.C:
			cancelCalls()
		case <-calls.Done(): // Write returned
		}
	})()

	var sent0, fallbacks0 int64 // the direct path's counts are the Writer's
	if w.direct != nil {
		sent0, fallbacks0 = w.direct.sent.Load(), w.direct.fallbacks.Load()
	}
	r.dispatch(runCtx, items)
	r.wg.Wait()

	s := r.tally.snapshot()
	s.Elapsed = w.clk.Now().Sub(start)
	if w.direct != nil {
		s.DirectCalls, s.DirectFallbacks = w.direct.sent.Load()-sent0, w.direct.fallbacks.Load()-fallbacks0
	}
	return s, r.result(ctx)
}

// dispatch reads items into the window and hands batches to at most
// Concurrency goroutines at a time (a batch backing off before a retry
// gives its slot up, see send). A batch is formed when a goroutine is free
// and the window is full, the input is closed, or the input has been idle
// for Linger (so a producer that waits for acknowledgements is never
// stuck).
func (r *run) dispatch(ctx context.Context, items <-chan contract.Item) {
	cfg := r.w.cfg
	// Sorted input makes items wait about one window's worth of sends
	// anyway (one turn per round of the buckets); four bounds the wait
	// without disturbing that.
	win := window{maxWait: 4 * uint64(cfg.Window)}
	// Concurrency workers send the batches. They live as long as the
	// Write: a goroutine per batch would grow a new stack through the
	// SDK's deep call chain every time. A batch backing off before a
	// retry gives its slot up (see backOff), but not its worker: a batch
	// that finds no idle worker then gets a goroutine of its own.
	slots := r.slots
	work := make(chan []*pending)
	var waiting atomic.Int64 // idle workers, counted before their slot is free
	for range cfg.Concurrency {
		r.wg.Go(func() {
			waiting.Add(1)
			for batch := range work {
				r.writeBatch(ctx, batch)
				waiting.Add(1)
				<-slots
			}
		})
	}
	defer close(work)
	start := func(batch []*pending) {
		if waiting.Load() > 0 {
			waiting.Add(-1)
			work <- batch // an idle worker takes it at once
			return
		}
		r.wg.Go(func() {
			defer func() { <-slots }()
			r.writeBatch(ctx, batch)
		})
	}
	// Idleness is seen by a ticker and a count of items received rather
	// than a timer reset for every item: input is idle once a tick saw no
	// item since the one before (between Linger and twice that).
	linger := time.NewTicker(cfg.Linger)
	defer linger.Stop()
	received, seen := 0, -1
	stale := time.NewTicker(staleFactor * cfg.Linger)
	defer stale.Stop()
	closed := items == nil
	idle := false // no input for Linger: send what is buffered
	flush := 0    // batches to send now, whatever the window holds
	lastSend := time.Now()
	maxBytes := MaxBatchBytes - len(r.w.envelope) - len("]}}")

	send := func() {
		batch := win.next(MaxBatchItems, maxBytes)
		flush = max(0, flush-1)
		lastSend = time.Now()
		start(batch)
	}

	for !closed || win.n > 0 {
		full := win.n >= cfg.Window || win.bytes >= cfg.WindowBytes
		ready := win.n > 0 && (full || closed || idle || flush > 0)
		if ready {
			if ctx.Err() != nil {
				return
			}
			select { // a slot is free most of the time: no need to wait on five
			case slots <- struct{}{}:
				send()
				continue
			default:
			}
		}
		var recv <-chan contract.Item
		if !closed && !full {
			recv = items
		}
		var slot chan<- struct{}
		if ready {
			slot = slots
		}
		select {
		case <-ctx.Done():
			return
		case it, ok := <-recv:
			if !ok {
				closed = true
				continue
			}
			idle = false
			received++
			r.accept(&win, it)
			// Take what else is waiting without a select on five cases
			// per item, until the window fills.
			for drain := 0; drain < 64 && win.n < cfg.Window && win.bytes < cfg.WindowBytes; drain++ {
				select {
				case it, ok := <-recv:
					if !ok {
						closed = true
						drain = 64
						continue
					}
					received++
					r.accept(&win, it)
					continue
				default:
				}
				break
			}
		case slot <- struct{}{}:
			send()
		case <-linger.C:
			idle = received == seen
			seen = received
		case <-stale.C:
			// A slow but steady producer never idles and may take long to
			// fill the window: send the window's content now and then, so
			// that no item waits much longer than staleFactor × Linger.
			if win.n > 0 && time.Since(lastSend) >= staleFactor*cfg.Linger {
				flush = (win.n + MaxBatchItems - 1) / MaxBatchItems
			}
		}
	}
}

// staleFactor × Linger is how long items may wait in a window that neither
// fills nor idles.
const staleFactor = 10

// backoffFactor × Concurrency batches may back off before a retry without
// holding a slot, so that unlucky batches do not stall the writer: with 30%
// of calls failing, a batch spends about ten times as long backing off as
// in calls. Beyond that, a batch backs off in its slot. (The rate limiter,
// not this bound, keeps what is sent within what DynamoDB takes.)
const backoffFactor = 16

// accept checks an item and buffers it, or records a row error. It walks
// the item's attributes once: encoding its request, which also measures
// its size and finds nil values (encode.go); the checks (itemChecks, a
// Checker's too) look up a few attributes.
func (r *run) accept(win *window, it contract.Item) {
	w := r.w
	var req []byte
	var size int
	var err error
	if len(it.Attrs) > 0 {
		req, size, err = w.encode(it)
	}
	key, ie, skip := w.checks.check(it, size, err)
	switch {
	case ie != nil:
		r.itemError(it, ie)
		return
	case skip:
		r.tally.update(func(s *contract.Stats) { s.Duplicates++ })
		if it.Ack != nil {
			it.Ack()
		}
		return
	}
	p := &pending{item: it, key: key, pkHash: w.pkHash(it.Attrs), wcu: itemWriteUnits(it.Attrs, size, w.cfg)}
	p.req = w.keep(req)
	win.push(p)
}

// encode encodes it's request into the writer's scratch buffer (valid
// until the next call) and returns it with the item's size.
func (w *Writer) encode(it contract.Item) ([]byte, int, error) {
	if it.Delete {
		buf, err := appendDeleteRequest(w.scratch[:0], it.Attrs, w.cfg.PartitionKey, w.cfg.SortKey)
		w.scratch = buf
		return buf, ItemSize(w.keyAttrs(it.Attrs)), err
	}
	buf, size, err := appendPutRequest(w.scratch[:0], it.Attrs)
	w.scratch = buf
	return buf, size, err
}

// slabSize is the size of the blocks encoded requests are kept in: one
// allocation for a few hundred items instead of one each.
const slabSize = 256 << 10

// keep copies an encoded request into the slab.
func (w *Writer) keep(req []byte) []byte {
	if len(req) > slabSize/4 {
		return append([]byte(nil), req...)
	}
	if cap(w.slab)-len(w.slab) < len(req) {
		w.slab = make([]byte, 0, slabSize)
	}
	start := len(w.slab)
	w.slab = append(w.slab, req...)
	return w.slab[start:len(w.slab):len(w.slab)]
}

// key returns the canonical primary key of p's item, computed once.
func (w *Writer) key(p *pending) string {
	if p.key == "" {
		p.key, _ = w.keyOfAttrs(p.item.Attrs)
	}
	return p.key
}

// pkHash hashes an item's partition key value, for interleaving.
func (w *Writer) pkHash(attrs map[string]types.AttributeValue) uint64 {
	_, val, _ := ddbvalue.KeyTag(attrs[w.cfg.PartitionKey])
	return maphash.String(w.seed, val)
}

func (w *Writer) displayKey(it contract.Item) string {
	return displayKey(it.Attrs, w.cfg.PartitionKey, w.cfg.SortKey)
}

// itemError records a row error of item it, tells the item's owner, and
// stops the run once there are more than MaxItemErrors of them.
func (r *run) itemError(it contract.Item, e *contract.ItemError) {
	if it.Fail != nil {
		it.Fail(e)
	}
	r.w.cfg.Logger.Warn("load: item not written", "origin", e.Origin.String(), "key", e.Key, "reason", e.Reason)
	r.tally.update(func(s *contract.Stats) { s.ItemErrors++ })
	r.mu.Lock()
	r.itemCount++
	n := r.itemCount
	if len(r.itemErrs) < maxReportedItemErrors {
		r.itemErrs = append(r.itemErrs, e)
	}
	r.mu.Unlock()
	if limit := r.w.cfg.MaxItemErrors; limit >= 0 && n > limit {
		r.fail(fmt.Errorf("%w: %d item errors, more than the %d allowed", ErrTooManyItemErrors, n, limit))
	}
}

// fail records the first fatal error and cancels the run.
func (r *run) fail(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.cancel(err)
}

// result is the error Write returns.
func (r *run) result(parent context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	switch {
	case r.fatal != nil && errors.Is(r.fatal, ErrTooManyItemErrors):
		if r.w.cfg.MaxItemErrors > 0 {
			errs = append(errs, r.fatal) // with the default 0 the item error says it all
		}
	case r.fatal != nil:
		errs = append(errs, r.fatal)
	case parent.Err() != nil:
		errs = append(errs, fmt.Errorf("load: write interrupted: %w", context.Cause(parent)))
	}
	errs = append(errs, r.itemErrs...)
	if more := r.itemCount - len(r.itemErrs); more > 0 {
		errs = append(errs, fmt.Errorf("load: and %d more item errors", more))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// Stats returns the counts of the Write running now, or of the last one,
// so far: a progress report reads it while Write goes on.
func (w *Writer) Stats() contract.Stats {
	t := w.live.Load()
	if t == nil {
		return contract.Stats{}
	}
	return t.snapshot()
}
