package load

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/pgdynamo/migrate/contract"
)

// writeBatch writes one batch and stops the run if it cannot.
func (r *run) writeBatch(ctx context.Context, batch []*pending) {
	if err := r.send(ctx, batch); err != nil {
		r.fail(err)
	}
}

// send writes ps (one call's worth) until every item is acknowledged, turned
// into a row error, or the batch fails: retries, re-sent UnprocessedItems,
// backoff and waiting for the rate limiter are bounded by MaxBatchElapsed
// from when the batch is first sent. It returns nil when ctx ends, the
// run's cancellation cause being reported by Write.
//
// The writer owns the retries of its calls (the SDK's retryer makes one
// attempt for them): every throttled attempt reaches the rate limiter at
// once, and every re-send waits for it.
func (r *run) send(ctx context.Context, ps []*pending) error {
	w := r.w
	cfg := w.cfg
	var first, deadline time.Time // set when the batch is first sent
	calls := 0                    // calls made for the batch, the last one included
	var lastErr error
	giveUp := func(why string) error {
		err := fmt.Errorf("%w: %d items (first: %s) still not written %v after they were first sent, in %s: %s; last error: %w",
			ErrBatchTimeout, len(ps), ps[0].item.Origin, w.clk.Now().Sub(first).Round(time.Millisecond), plural(calls, "call"), why, lastErr)
		cfg.Logger.Error("load: giving up on a batch", "items", len(ps), "calls", calls, "err", lastErr)
		return err
	}
	for {
		units := 0
		for _, p := range ps {
			units += p.wcu
		}
		if _, err := w.limiter.Wait(ctx, units, deadline); err != nil {
			if errors.Is(err, errPastDeadline) {
				return giveUp(err.Error())
			}
			return nil
		}
		sentAt := w.clk.Now()
		if deadline.IsZero() {
			first, deadline = sentAt, sentAt.Add(cfg.MaxBatchElapsed)
		}
		r.tally.items(ps, func(p *pending) contract.EntityStats {
			p.sent++
			if p.sent > 1 {
				return contract.EntityStats{Retries: 1}
			}
			return contract.EntityStats{}
		})

		// The call may outlast neither CallTimeout nor the batch's
		// deadline. It runs under r.calls, not ctx: a run that stops lets
		// it finish (StopGrace) so that what DynamoDB took is acknowledged.
		limit := min(cfg.CallTimeout, deadline.Sub(sentAt))
		callCtx, cancel := context.WithTimeout(r.calls, limit)
		out, err := w.call(callCtx, ps)
		timedOut := err != nil && callCtx.Err() != nil && r.calls.Err() == nil
		cancel()
		calls++
		r.tally.update(func(s *contract.Stats) { s.Calls++ })
		if timedOut {
			// The SDK reports the call's own deadline as a cancellation.
			err = &CallTimeoutError{Operation: "BatchWriteItem", Limit: limit}
		}
		if err == nil && out == nil {
			return fmt.Errorf("load: write to table %q: BatchWriteItem returned neither output nor error", cfg.Table)
		}
		var answered interface{ HTTPStatusCode() int }
		if err == nil || errors.As(err, &answered) && answered.HTTPStatusCode() > 0 {
			w.reached.Store(true) // DynamoDB answered: a later dial error is transient
		}
		if err == nil {
			r.sdkAttempts(sentAt, ps, units, out)
			done, rest := w.split(ps, out.UnprocessedItems)
			refused := 0
			for _, p := range rest {
				refused += p.wcu
			}
			w.limiter.Answered(sentAt, units, refused)
			r.ack(done)
			if len(rest) == 0 {
				return nil
			}
			r.tally.update(func(s *contract.Stats) { s.ThrottledCalls++ })
			r.tally.items(rest, func(*pending) contract.EntityStats { return contract.EntityStats{Throttled: 1} })
			lastErr = fmt.Errorf("%d of %d items returned as UnprocessedItems", len(rest), len(ps))
			ps = rest
		} else {
			switch classify(ctx, err) {
			case classCanceled:
				if ctx.Err() != nil || r.calls.Err() != nil {
					return nil
				}
				return fmt.Errorf("load: write to table %q canceled: %w", cfg.Table, err)
			case classValidation:
				return r.rejected(ctx, ps, err)
			case classThrottle:
				w.limiter.Answered(sentAt, units, units)
				r.tally.update(func(s *contract.Stats) { s.ThrottledCalls++ })
				r.tally.items(ps, func(*pending) contract.EntityStats { return contract.EntityStats{Throttled: 1} })
			case classTransient:
				// A 5xx, a dropped connection or a call that timed out says
				// nothing about capacity: retry without touching the rate.
				// (Timeouts reported as refusals cut the rate to a few
				// hundred units/s after DynamoDB Local's slow first calls
				// on a loaded machine: the window of stuck calls measured
				// almost nothing offered.)
			case classUnreachable:
				if !w.reached.Load() {
					return fmt.Errorf("%w (table %q): %w", ErrUnreachable, cfg.Table, err)
				}
			default:
				return fmt.Errorf("load: write to table %q: %w", cfg.Table, err)
			}
			if !timedOut || limit == cfg.CallTimeout || lastErr == nil {
				lastErr = err // (a call cut short by the batch's deadline says less than the one before it)
			}
		}

		remaining := deadline.Sub(w.clk.Now())
		if remaining <= 0 {
			return giveUp(fmt.Sprintf("a batch may take %v from when it is first sent", cfg.MaxBatchElapsed))
		}
		sleep := min(w.backoff.delay(calls), remaining)
		cfg.Logger.Debug("load: retrying batch", "items", len(ps), "calls", calls, "sleep", sleep, "reason", lastErr)
		if err := r.backOff(ctx, sleep); err != nil {
			return nil
		}
	}
}

// plural is "1 call", "2 calls".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// backOff sleeps before a retry. If few other batches are backing off, it
// gives its slot to a new batch meanwhile (calls in flight stay within
// Concurrency), and takes one back before returning, even when ctx ended:
// the caller releases it.
func (r *run) backOff(ctx context.Context, d time.Duration) error {
	select {
	case r.backing <- struct{}{}:
	default:
		return r.w.clk.Sleep(ctx, d) // enough batches are out of their slots
	}
	<-r.slots
	err := r.w.clk.Sleep(ctx, d)
	r.slots <- struct{}{}
	<-r.backing
	return err
}

// rejected handles a ValidationException. A single item is a row error; a
// larger batch is re-sent one item per call to find the culprits (each such
// call with its own MaxBatchElapsed); the others are written and acked.
func (r *run) rejected(ctx context.Context, ps []*pending, err error) error {
	if len(ps) == 1 {
		p := ps[0]
		reason := err.Error()
		var api smithy.APIError
		if errors.As(err, &api) {
			reason = fmt.Sprintf("DynamoDB rejected the item: %s: %s", api.ErrorCode(), api.ErrorMessage())
		}
		r.itemError(p.item, &contract.ItemError{Origin: p.item.Origin, Key: r.w.displayKey(p.item), Reason: reason, Err: err})
		return nil
	}
	r.w.cfg.Logger.Debug("load: batch rejected, re-sending its items one by one", "items", len(ps), "err", err)
	for _, p := range ps {
		if ctx.Err() != nil {
			return nil
		}
		if err := r.send(ctx, []*pending{p}); err != nil {
			return err
		}
	}
	return nil
}

// sdkAttempts counts the attempts a retrying client made inside a
// successful call (the SDK's retryer makes none for the writer's calls,
// but a caller's client may), and tells the limiter about throttled ones.
func (r *run) sdkAttempts(sentAt time.Time, ps []*pending, units int, out *dynamodb.BatchWriteItemOutput) {
	res, ok := retry.GetAttemptResults(out.ResultMetadata)
	if !ok {
		return
	}
	var retries, throttles int64
	for _, a := range res.Results {
		if a.Err == nil {
			continue
		}
		retries++
		if isThrottle(a.Err) {
			throttles++
		}
	}
	if retries == 0 {
		return
	}
	if throttles > 0 {
		r.w.limiter.Answered(sentAt, units*int(throttles), units*int(throttles))
	}
	r.tally.update(func(s *contract.Stats) {
		s.SDKRetries += retries
		s.ThrottledCalls += throttles
	})
	r.tally.items(ps, func(*pending) contract.EntityStats {
		return contract.EntityStats{Retries: retries, Throttled: throttles}
	})
}

// ack acknowledges written items.
func (r *run) ack(done []*pending) {
	if len(done) == 0 {
		return
	}
	for _, p := range done {
		if p.item.Ack != nil {
			p.item.Ack()
		}
	}
	r.tally.items(done, func(p *pending) contract.EntityStats { return contract.EntityStats{Written: 1, WCU: int64(p.wcu)} })
}

// call makes one BatchWriteItem call writing ps.
func (w *Writer) call(ctx context.Context, ps []*pending) (*dynamodb.BatchWriteItemOutput, error) {
	body := w.body(ps)
	if w.direct != nil {
		return w.direct.write(ctx, body, func() *dynamodb.BatchWriteItemInput { return w.input(ps) }, withBody(body), oneAttempt)
	}
	return w.client.BatchWriteItem(ctx, w.input(ps), withBody(body), oneAttempt)
}

// body is the request body of a call writing ps: the requests encoded
// when the items were accepted, in the envelope.
func (w *Writer) body(ps []*pending) []byte {
	n := len(w.envelope) + len("]}}")
	for _, p := range ps {
		n += p.wire()
	}
	buf := make([]byte, 0, n)
	buf = append(buf, w.envelope...)
	for i, p := range ps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, p.req...)
	}
	return append(buf, "]}}"...)
}

// input is the call's input: the same requests as body, for the SDK's
// validation and endpoint resolution, and for clients that are not the
// SDK's.
func (w *Writer) input(ps []*pending) *dynamodb.BatchWriteItemInput {
	reqs := make([]types.WriteRequest, len(ps))
	puts := make([]types.PutRequest, len(ps)) // one allocation for the batch
	for i, p := range ps {
		if p.item.Delete {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: w.keyAttrs(p.item.Attrs)}}
			continue
		}
		puts[i].Item = p.item.Attrs
		reqs[i] = types.WriteRequest{PutRequest: &puts[i]}
	}
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{w.cfg.Table: reqs}}
}

// split separates the items DynamoDB wrote from those it returned
// unprocessed, matching by primary key (keys are unique within a batch). If
// the response names a request the batch did not send, nothing is taken as
// written and the whole batch is sent again: puts are idempotent, a lost
// write is not.
func (w *Writer) split(ps []*pending, unprocessed map[string][]types.WriteRequest) (done, rest []*pending) {
	n := 0
	for _, reqs := range unprocessed {
		n += len(reqs)
	}
	if n == 0 {
		return ps, nil
	}
	keys := make(map[string]bool, n)
	for _, reqs := range unprocessed {
		for _, req := range reqs {
			switch {
			case req.PutRequest != nil:
				k, _ := w.keyOfAttrs(req.PutRequest.Item)
				keys[k] = true
			case req.DeleteRequest != nil:
				k, _ := w.keyOfAttrs(req.DeleteRequest.Key)
				keys[k] = true
			}
		}
	}
	for _, p := range ps {
		if keys[w.key(p)] {
			rest = append(rest, p)
		} else {
			done = append(done, p)
		}
	}
	if len(rest) != n {
		w.cfg.Logger.Warn("load: UnprocessedItems do not match the request; re-sending the whole batch", "sent", len(ps), "unprocessed", n, "matched", len(rest))
		return nil, ps
	}
	return done, rest
}

// keyAttrs returns just the primary key attributes of an item.
func (w *Writer) keyAttrs(attrs map[string]types.AttributeValue) map[string]types.AttributeValue {
	return keyAttrs(attrs, w.cfg.PartitionKey, w.cfg.SortKey)
}

func keyAttrs(attrs map[string]types.AttributeValue, pk, sk string) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{pk: attrs[pk]}
	if sk != "" {
		key[sk] = attrs[sk]
	}
	return key
}

// keyOfAttrs returns the canonical primary key of an item and the hash of
// its partition key.
func (w *Writer) keyOfAttrs(attrs map[string]types.AttributeValue) (string, uint64) {
	buf := AppendKey(make([]byte, 0, 64), attrs, w.cfg.PartitionKey, "")
	pkLen := len(buf)
	if w.cfg.SortKey != "" {
		buf = appendKeyPart(buf, attrs[w.cfg.SortKey])
	}
	return string(buf), maphash.Bytes(w.seed, buf[:pkLen])
}

// AppendKey appends the canonical form of an item's primary key to dst:
// equal for two items DynamoDB stores under the same key (numbers compare
// by value, so 1.50 and 15e-1 are one key). sortKey is "" for a table
// without one.
func AppendKey(dst []byte, attrs map[string]types.AttributeValue, partitionKey, sortKey string) []byte {
	dst = appendKeyPart(dst, attrs[partitionKey])
	if sortKey != "" {
		dst = appendKeyPart(dst, attrs[sortKey])
	}
	return dst
}

// DisplayKey renders an item's primary key for messages, as row errors
// do: PK="CUSTOMER#42" SK="PROFILE".
func DisplayKey(attrs map[string]types.AttributeValue, partitionKey, sortKey string) string {
	return displayKey(attrs, partitionKey, sortKey)
}
