package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/load"
)

// itemCheck runs the loader's own pre-send checks (key attributes, key
// lengths, 400 KB size, nil values) and its duplicate-key detection on the
// items of a few rows at a time, in read order, before they are handed to
// the real writer.
//
// Why: load.Writer reports an item it refuses only when Write returns, not
// as it happens, so a refused item would hold the checkpoint back until the
// end of the run, and a reject line could be written only then. Checking
// the row first, with a Writer over a client that accepts everything, uses
// exactly the loader's rules and messages (nothing is re-implemented here)
// and lets run reject or fail on the row at once, in read order. Rows are
// checked in groups (checkRows) to spread the cost of a Write call, about
// 10 µs, over many items. The real
// writer then sees only items that pass; what it can still refuse is what
// only DynamoDB knows (a ValidationException), handled when Write returns.
//
// The checker keeps its own set of keys seen, so a run holds two (see the
// load package documentation for the cost per item).
type itemCheck struct {
	w *load.Writer
}

// acceptAll is a BatchWriter that writes nothing and reports success.
type acceptAll struct{}

func (acceptAll) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func newItemCheck(cfg load.Config) (*itemCheck, error) {
	cfg.Concurrency = 1
	cfg.MaxItemErrors = -1
	cfg.MaxWCU = 0
	cfg.Logger = slog.New(slog.DiscardHandler) // run reports rejects itself
	w, err := load.NewWriter(acceptAll{}, cfg)
	if err != nil {
		return nil, err
	}
	return &itemCheck{w: w}, nil
}

// check returns, for each item, nil if it passed, or its row error. A
// duplicate skipped under OnDuplicate "skip" passes (the real writer skips
// it again and counts it). The items may come from several rows; their
// origins (table, source key, entity) must be distinct, which is how
// errors are matched to items.
func (c *itemCheck) check(ctx context.Context, items []load.Item) ([]*load.ItemError, error) {
	errs := make([]*load.ItemError, len(items))
	if len(items) == 0 {
		return errs, nil
	}
	ok := make([]bool, len(items))
	index := make(map[load.Origin]int, len(items))
	ch := make(chan load.Item, len(items))
	for i, it := range items {
		index[it.Origin] = i
		it.Ack = func() { ok[i] = true }
		ch <- it
	}
	close(ch)
	_, err := c.w.Write(ctx, ch)
	itemErrs, rest := splitItemErrors(err)
	if rest != nil {
		return nil, rest
	}
	for _, ie := range itemErrs {
		i, found := index[ie.Origin]
		if !found {
			return nil, fmt.Errorf("check items: a row error for an item not checked: %w", ie)
		}
		errs[i] = ie
	}
	for i := range items {
		if !ok[i] && errs[i] == nil {
			return nil, fmt.Errorf("check items: %s was neither accepted nor refused", items[i].Origin)
		}
	}
	return errs, nil
}

// splitItemErrors separates the row errors in an error returned by
// load.Writer.Write from the rest (a fatal error, an interruption, or the
// count of row errors beyond those reported).
func splitItemErrors(err error) ([]*load.ItemError, error) {
	var items []*load.ItemError
	var rest []error
	var walk func(error)
	walk = func(err error) {
		if ie, ok := err.(*load.ItemError); ok {
			items = append(items, ie)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if errors.Is(err, load.ErrTooManyItemErrors) && len(items) > 0 {
			return // the limit was reached; the item errors say what happened
		}
		rest = append(rest, err)
	}
	walk(err)
	return items, errors.Join(rest...)
}

func describeItemError(e *load.ItemError) string {
	key := ""
	if e.Key != "" {
		key = " (item " + e.Key + ")"
	}
	return fmt.Sprintf("entity %s, table %s, row %s%s: %s", e.Origin.Entity, e.Origin.Table, e.Origin.SourceKey, key, e.Reason)
}
