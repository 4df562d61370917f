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
	client  BatchWriter
	cfg     Config
	clk     clock
	backoff backoff
	limiter *limiter
	dedupe  *dedupe
	seed    maphash.Seed

	running atomic.Bool
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
	d := newDedupe(cfg.RecentKeys)
	return &Writer{
		client:  client,
		cfg:     cfg,
		clk:     clk,
		backoff: newBackoff(cfg.RetryBaseDelay, cfg.RetryMaxDelay),
		limiter: newLimiter(clk, cfg.Logger, cfg.MaxWCU, cfg.MinWCU),
		dedupe:  d,
		seed:    d.seed,
	}
}

// pending is an accepted item on its way to DynamoDB.
type pending struct {
	item   Item
	key    string // canonical primary key
	pkHash uint64 // hash of the partition key alone, for interleaving
	wire   int    // request bytes (upper bound)
	wcu    int    // write units, table plus indexes
	sent   int    // times sent so far
}

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
// cause) and every row error ([*ItemError]) collected, the first 1000 of
// them; with the default MaxItemErrors it is the first row error itself.
func (w *Writer) Write(ctx context.Context, items <-chan Item) (Stats, error) {
	if !w.running.CompareAndSwap(false, true) {
		return Stats{}, errors.New("load: Write called while another Write on the same Writer is running")
	}
	defer w.running.Store(false)

	start := w.clk.Now()
	r := &run{w: w, tally: newTally(),
		slots:   make(chan struct{}, w.cfg.Concurrency),
		backing: make(chan struct{}, backoffFactor*w.cfg.Concurrency)}
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

	r.dispatch(runCtx, items)
	r.wg.Wait()

	s := r.tally.snapshot()
	s.Elapsed = w.clk.Now().Sub(start)
	return s, r.result(ctx)
}

// dispatch reads items into the window and hands batches to at most
// Concurrency goroutines at a time (a batch backing off before a retry
// gives its slot up, see send). A batch is formed when a goroutine is free
// and the window is full, the input is closed, or the input has been idle
// for Linger (so a producer that waits for acknowledgements is never
// stuck).
func (r *run) dispatch(ctx context.Context, items <-chan Item) {
	cfg := r.w.cfg
	var win window
	slots := r.slots
	linger := time.NewTimer(cfg.Linger)
	defer linger.Stop()
	stale := time.NewTicker(staleFactor * cfg.Linger)
	defer stale.Stop()
	closed := items == nil
	idle := false // no input for Linger: send what is buffered
	flush := 0    // batches to send now, whatever the window holds
	lastSend := time.Now()
	maxBytes := MaxBatchBytes - envelopeBytes(cfg.Table)

	for !closed || win.n > 0 {
		full := win.n >= cfg.Window || win.bytes >= cfg.WindowBytes
		var recv <-chan Item
		if !closed && !full {
			recv = items
		}
		var slot chan<- struct{}
		if win.n > 0 && (full || closed || idle || flush > 0) {
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
			linger.Reset(cfg.Linger)
			r.accept(&win, it)
		case slot <- struct{}{}:
			batch := win.next(MaxBatchItems, maxBytes)
			flush = max(0, flush-1)
			lastSend = time.Now()
			r.wg.Go(func() {
				defer func() { <-slots }()
				r.writeBatch(ctx, batch)
			})
		case <-linger.C:
			idle = true
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

// envelopeBytes bounds the request body outside the items:
// {"RequestItems":{"<table>":[...]}}.
func envelopeBytes(table string) int {
	return 64 + jsonStringLen(table)
}

// accept checks an item and buffers it, or records a row error.
func (r *run) accept(win *window, it Item) {
	cfg := r.w.cfg
	if len(it.Attrs) == 0 {
		r.itemError(it, &ItemError{Origin: it.Origin, Reason: "item has no attributes", Err: ErrInvalidKey})
		return
	}
	if name := nilAttr(it.Attrs); name != "" {
		r.itemError(it, &ItemError{Origin: it.Origin, Key: r.w.displayKey(it), Reason: fmt.Sprintf("attribute %q has no value (nil)", name), Err: ErrInvalidItem})
		return
	}
	if reason, err := r.w.checkKeys(it); err != nil {
		r.itemError(it, &ItemError{Origin: it.Origin, Key: r.w.displayKey(it), Reason: reason, Err: err})
		return
	}
	size := ItemSize(it.Attrs)
	if size > MaxItemSize {
		r.itemError(it, &ItemError{
			Origin: it.Origin, Key: r.w.displayKey(it), Err: ErrItemTooLarge,
			Reason: fmt.Sprintf("item is %d bytes, over DynamoDB's 400 KB (%d-byte) item limit", size, MaxItemSize),
		})
		return
	}
	key, pkHash := r.w.keyOf(it)
	switch state, first := r.w.dedupe.add(key, it.Origin, cfg.RecentKeys); state {
	case dupConfirmed:
		if cfg.OnDuplicate == OnDuplicateSkip {
			r.tally.update(func(s *Stats) { s.Duplicates++ })
			cfg.Logger.Warn("load: skipping duplicate key", "key", r.w.displayKey(it), "origin", it.Origin.String(), "first", first.String())
			if it.Ack != nil {
				it.Ack()
			}
			return
		}
		r.itemError(it, &ItemError{
			Origin: it.Origin, Key: r.w.displayKey(it), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: %s has the same key; two items of one run must not share a primary key (check the mapping's key templates)", first),
		})
		return
	case dupUnconfirmed:
		r.itemError(it, &ItemError{
			Origin: it.Origin, Key: r.w.displayKey(it), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: an earlier item of this run had the same key, but it is no longer among the %d recent keys kept to name it", cfg.RecentKeys),
		})
		return
	}
	win.push(&pending{
		item:   it,
		key:    key,
		pkHash: pkHash,
		wire:   requestBytes(it.Attrs),
		wcu:    itemWriteUnits(it.Attrs, size, cfg),
	})
}

// checkKeys checks the table's and the indexes' key attributes of an item.
func (w *Writer) checkKeys(it Item) (string, error) {
	cfg := w.cfg
	if reason, err := checkKeyAttr(it.Attrs, cfg.PartitionKey, "partition key", MaxPartitionKeyBytes, true); err != nil {
		return reason, err
	}
	if cfg.SortKey != "" {
		if reason, err := checkKeyAttr(it.Attrs, cfg.SortKey, "sort key", MaxSortKeyBytes, true); err != nil {
			return reason, err
		}
	}
	for _, ix := range cfg.Indexes {
		if reason, err := checkKeyAttr(it.Attrs, ix.PartitionKey, "index "+ix.Name+" partition key", MaxPartitionKeyBytes, false); err != nil {
			return reason, err
		}
		if ix.SortKey != "" {
			if reason, err := checkKeyAttr(it.Attrs, ix.SortKey, "index "+ix.Name+" sort key", MaxSortKeyBytes, false); err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}

// keyOf returns the canonical primary key of an item and the hash of its
// partition key.
func (w *Writer) keyOf(it Item) (string, uint64) {
	return w.keyOfAttrs(it.Attrs)
}

func (w *Writer) displayKey(it Item) string {
	return displayKey(it.Attrs, w.cfg.PartitionKey, w.cfg.SortKey)
}

// itemError records a row error of item it, tells the item's owner, and
// stops the run once there are more than MaxItemErrors of them.
func (r *run) itemError(it Item, e *ItemError) {
	if it.Fail != nil {
		it.Fail(e)
	}
	r.w.cfg.Logger.Warn("load: item not written", "origin", e.Origin.String(), "key", e.Key, "reason", e.Reason)
	r.tally.update(func(s *Stats) { s.ItemErrors++ })
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
