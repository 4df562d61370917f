package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/transform"
)

// runner is one migration run: the stages between the snapshot and the
// target.
type runner struct {
	cfg    RunConfig
	log    *slog.Logger
	src    *source
	wm     *watermark
	keys   *keyCheck // nil when every entity's keys are proven unique
	reject bool
	// targetKind is the target's TargetInfo.Kind, for messages.
	targetKind string
	// target reports its writer's counts to progress reports, when it can.
	target contract.Target
	// stopReading ends the read side of the pipeline (fail mode: on the
	// first refused item).
	stopReading func(error)
	// failStop is every item's Fail in fail mode: stop reading; the items
	// already read are still written, so the checkpoint reaches the row
	// before the refused one, which never settles. Write reports the item
	// error when it returns.
	failStop func(*contract.ItemError)
	// read, when set, replaces reading the database in turn: it sends the
	// items of another source (an export's files, see runExport), or reads
	// with parallel readers (readParallel).
	read func(ctx context.Context, out chan<- contract.Item) error
	// units are what parallel readers read, by watermark name and in
	// order (readers.go).
	units     map[string]*unit
	unitOrder []*unit
	// stats by entity, in read order, and the entities of each source table.
	stats    map[string]*entityStats
	order    []*entityStats
	bySource map[string][]*entityStats
}

// pipeline reads, checks and writes until the sources are done, the
// context ends (the first signal) or something fails, and returns the
// target's stats and the failure, if any. Reading stops on the signal or
// when writing failed. On the signal the target stops too: what it has in
// flight is acknowledged (load.Config.StopGrace), the items it buffered
// are not written, and the caller saves the checkpoint, which stays before
// their rows. So a run stops within seconds even when the whole source is
// already read into the window. The state file is saved every
// CheckpointEvery meanwhile.
func (r *runner) pipeline(ctx context.Context, target contract.Target, toRead []*transform.Source, after map[string][]any, save func(bool) (mark, error)) (contract.Stats, error) {
	readCtx, cancelRead := context.WithCancelCause(ctx)
	defer cancelRead(nil)
	r.stopReading = cancelRead
	r.failStop = func(ie *contract.ItemError) { r.stopReading(ie) }
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			r.cfg.Observer.Interrupted()
		case <-finished:
		}
	}()

	// A few batches: the writer's window does the buffering.
	items := make(chan contract.Item, 16*load.MaxBatchItems)
	var produceErr error
	var producer sync.WaitGroup
	producer.Go(func() {
		defer close(items)
		if r.read != nil {
			produceErr = r.read(readCtx, items)
			return
		}
		produceErr = r.produce(readCtx, toRead, after, items)
	})
	var saveErr error
	stopSaving := make(chan struct{})
	var saver sync.WaitGroup
	saver.Go(func() {
		t := time.NewTicker(r.cfg.CheckpointEvery)
		defer t.Stop()
		for {
			select {
			case <-stopSaving:
				return
			case <-t.C:
				if _, err := save(false); err != nil {
					saveErr = fmt.Errorf("save checkpoint: %w", err)
					cancelRead(saveErr)
					return
				}
			}
		}
	})
	ls, writeErr := target.Write(ctx, items)
	var writeFatal error
	if writeErr != nil {
		writeFatal = writeErr
		itemErrs, rest := splitItemErrors(writeErr)
		if ctx.Err() != nil && rest != nil && errors.Is(rest, context.Canceled) {
			// Stopped by the signal: an interruption, not a failure.
			rest, writeFatal = nil, nil
			for _, ie := range itemErrs {
				writeFatal = errors.Join(writeFatal, ie)
			}
		}
		if r.reject {
			// Each refused item was already turned into a reject line by
			// its Fail callback; only what is not about one item is fatal.
			writeFatal = rest
		}
		if writeFatal != nil {
			cancelRead(writeFatal)
		}
	}
	producer.Wait()
	close(stopSaving)
	saver.Wait()
	return ls, r.outcome(ctx, produceErr, writeFatal, saveErr)
}

// outcome picks the error a run ends with, if any: a bad row in fail mode,
// a write that could not be done, a read or checkpoint failure. Errors that
// only follow from the interruption (reading canceled) are not failures.
func (r *runner) outcome(ctx context.Context, produceErr, writeFatal, saveErr error) error {
	var re *transform.RowError
	var ie *contract.ItemError
	switch {
	case writeFatal != nil:
		if items, rest := splitItemErrors(writeFatal); len(items) > 0 && rest == nil {
			more := ""
			if len(items) > 1 {
				more = fmt.Sprintf(" (and %s)", plural(int64(len(items)-1), "more bad row"))
			}
			return &badRow{msg: fmt.Sprintf("bad row: %s%s", describeItemError(items[0]), more), cause: items[0]}
		}
		return writeFatal
	case saveErr != nil:
		return saveErr
	case errors.As(produceErr, &re):
		return &badRow{msg: "bad row: " + re.Error(), cause: re}
	case errors.As(produceErr, &ie):
		return &badRow{msg: "bad row: " + describeItemError(ie), cause: ie}
	case produceErr != nil && ctx.Err() != nil:
		return nil // reading stopped on the signal
	}
	return produceErr
}

// readRow is a row read and transformed, on its way to the target. Its
// items' origins point to it: the row's key is formatted only for the few
// that are ever reported.
type readRow struct {
	src   *transform.Source
	row   extract.Row
	lines []RejectLine // transform rejects
	// unit is the watermark's name for the part of the source the row was
	// read in, when the table is split (parallel readers); else "".
	unit string
}

func (rr *readRow) SourceKey() string { return rr.src.SourceKey(rr.row) }

// produce reads the sources, turns rows into items and sends them to the
// target, registering each row with the watermark in read order. Once the
// last row is read it ends the snapshot, so that the source's transaction
// is not held open while the last items are written.
func (r *runner) produce(ctx context.Context, sources []*transform.Source, after map[string][]any, out chan<- contract.Item) error {
	var current *transform.Source
	var all []string // the entities of current, in order: the items of a row without row errors
	err := r.src.walkSources(ctx, sources, after, (*transform.Source).Build, func(s *transform.Source, row extract.Row, items []transform.Item, rowErrs []*transform.RowError) error {
		if s != current {
			current, all = s, nil
			for _, es := range r.bySource[s.Name] {
				es.touch(&es.started)
				all = append(all, es.name)
			}
		}
		rr, err := r.readRow(s, row, rowErrs)
		if err != nil {
			return err
		}
		return r.send(ctx, rr, items, all, out)
	})
	if err == nil {
		r.wm.finishReading()
		r.src.close(ctx)
		r.log.Debug("every source row is read; the snapshot is released")
	}
	return err
}

// readRow counts a row read and prepares its reject lines. In fail mode a
// row error is returned instead: the checkpoint stays before this row.
func (r *runner) readRow(s *transform.Source, row extract.Row, rowErrs []*transform.RowError) (*readRow, error) {
	for _, es := range r.bySource[s.Name] {
		es.rows.Add(1)
	}
	rr := &readRow{src: s, row: row}
	if len(rowErrs) > 0 {
		if !r.reject {
			return nil, rowErrs[0]
		}
		rr.lines = rowRejects(s, row, rowErrs)
		for _, re := range rowErrs {
			r.rejected(re.Entity, re)
		}
	}
	return rr, nil
}

// send registers a row with the watermark and sends its items. Each item
// settles its row once: Ack when the target acknowledged it, or, in reject
// mode, Fail when the target refused it (a reject line for the row). In
// fail mode a refused item stops reading, and the row never settles, so
// the checkpoint stays before it. all lists the entities of a row that
// built an item for each, in order: shared by such rows.
func (r *runner) send(ctx context.Context, rr *readRow, items []transform.Item, all []string, out chan<- contract.Item) error {
	// Rows may come from a buffer without waiting, and items go into a
	// channel with room: nothing else would notice a signal.
	if err := ctx.Err(); err != nil {
		return err
	}
	entities := all
	if len(items) != len(all) {
		entities = make([]string, len(items))
		for i, it := range items {
			entities[i] = it.Entity
		}
	}
	var keep *extract.Row
	if r.reject {
		keep = &rr.row
	}
	rm, err := r.wm.add(ctx, cmp.Or(rr.unit, rr.src.Name), rr.src.Position(rr.row), keep, entities, rr.lines)
	if err != nil {
		return err
	}
	origin := contract.Origin{Row: rr}
	if r.cfg.Target != nil && len(items) > 0 && !readsOriginKey(r.cfg.Target) {
		// Targets of callers read Origin.SourceKey, as they always could.
		origin = contract.Origin{SourceKey: rr.SourceKey()}
	}
	for _, ti := range items {
		origin.Entity, origin.Table = ti.Entity, ti.Table
		it := contract.Item{Attrs: ti.Attrs, Origin: origin}
		it.Ack = r.acker(it, r.stats[ti.Entity], rm)
		if r.reject {
			it.Fail = func(ie *contract.ItemError) {
				r.wm.reject(rm, ie.Origin.Entity, itemReject(r.cfg.Mapping, rr.src, &rr.row, ie))
				r.rejected(ie.Origin.Entity, ie)
			}
		} else {
			it.Fail = r.failStop
		}
		select { // the channel has room most of the time: no need to wait on two
		case out <- it:
			continue
		default:
		}
		select {
		case out <- it:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// readsOriginKey says the target reads a row's key through Origin.Key
// (export's does): formatting every row's key for it was a tenth of an
// export's allocations, for the few keys ever reported.
func readsOriginKey(t contract.Target) bool {
	k, ok := t.(interface{ ReadsOriginKey() bool })
	return ok && k.ReadsOriginKey()
}

func (r *runner) rejected(entity string, err error) {
	if es := r.stats[entity]; es != nil {
		es.rejects.Add(1)
	}
	r.log.Debug("rejected", "entity", entity, "err", err)
}

// acker is the Ack of item it of row rm: it records the item's key for the
// duplicate check when its entity needs one, counts the item written and
// settles it with the watermark. The closure captures the key only when
// there is one to record, as most items have none.
func (r *runner) acker(it contract.Item, es *entityStats, rm *rowMark) func() {
	if r.keys.needs(it.Origin.Entity) {
		key, value := r.keys.record(it)
		return func() {
			r.keys.add(key, value)
			es.written.Add(1)
			es.touch(&es.lastWrite)
			r.wm.ack(rm)
		}
	}
	return func() {
		es.written.Add(1)
		es.touch(&es.lastWrite)
		r.wm.ack(rm)
	}
}
