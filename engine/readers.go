package engine

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/transform"
)

// Parallel readers (RunConfig.Readers > 1): the run's snapshot is
// exported (pg_export_snapshot) and every reader connection joins it (SET
// TRANSACTION SNAPSHOT), as pg_dump -j does, so that all of them read one
// consistent state. Tables are read concurrently, and a table larger than
// RangeRows (by the planner's estimate) is split into key ranges at
// sampled quantiles of its order key, read concurrently too. Each range is
// a source of its own for the watermark and the state file, with its
// bounds, so a resumed run reads the same ranges, each from its own
// checkpoint, whatever the number of readers then.
//
// The items a run produces do not depend on the number of readers, only
// their order does: every row is in exactly one range, and the items of
// one row still reach the target one after another.

// DefaultRangeRows is RunConfig.RangeRows's default.
const DefaultRangeRows = 1_000_000

// maxRangesPerReader bounds the ranges of one table: enough to keep every
// reader busy to the end, few enough to keep the state file small.
const maxRangesPerReader = 4

// unit is what one reader reads at a time: a table, or one key range of
// it.
type unit struct {
	name        string // the watermark's and the state file's name
	src         *transform.Source
	from, until []any // the range's bounds, exclusive and inclusive; nil: open
	after       []any // where a resumed read starts; nil: at from
	done        bool
}

// parallel says whether the run reads with parallel readers: when asked
// to, or when the run it resumes split tables into ranges (their
// progress is recorded per range, whatever the number of readers now).
func (r *runner) parallel(prev *checkpoint.State) bool {
	if r.cfg.Readers > 1 {
		return true
	}
	if prev != nil {
		for _, s := range prev.Sources {
			if s.Table != "" {
				return true
			}
		}
	}
	return false
}

// planUnits decides what the readers read, and returns the watermark's
// source names: a resumed run takes the units its state file records, a
// new one splits the large tables.
func (r *runner) planUnits(ctx context.Context, prev *checkpoint.State) ([]string, error) {
	r.units = map[string]*unit{}
	var names []string
	add := func(u *unit) {
		r.units[u.name] = u
		r.unitOrder = append(r.unitOrder, u)
		names = append(names, u.name)
	}
	sources := r.src.plan.Sources
	if prev != nil {
		byName := map[string]*transform.Source{}
		for _, s := range sources {
			byName[s.Name] = s
		}
		seen := map[string]bool{}
		for _, ps := range prev.Sources {
			table := cmp.Or(ps.Table, ps.Name)
			s := byName[table]
			if s == nil {
				continue // the mapping's hash matched: the same tables
			}
			seen[table] = true
			u := &unit{name: ps.Name, src: s, from: ps.From, until: ps.Until, done: ps.Done}
			if len(ps.After) > 0 {
				u.after = ps.After
			}
			add(u)
		}
		for _, s := range sources {
			if !seen[s.Name] {
				add(&unit{name: s.Name, src: s})
			}
		}
		return names, nil
	}
	estimates, err := r.src.estimates(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sources {
		n := (estimates[s.Name] + r.cfg.RangeRows - 1) / r.cfg.RangeRows
		k := int(min(n, int64(maxRangesPerReader*r.cfg.Readers)))
		var points [][]any
		if k > 1 {
			if points, err = r.src.snap.SplitPoints(ctx, s.Query, k); err != nil {
				return nil, err
			}
		}
		if len(points) == 0 {
			add(&unit{name: s.Name, src: s})
			continue
		}
		var lower []any
		for i := range len(points) + 1 {
			u := &unit{name: fmt.Sprintf("%s [%d/%d]", s.Name, i+1, len(points)+1), src: s, from: lower}
			if i < len(points) {
				u.until, lower = points[i], points[i]
			}
			add(u)
		}
		r.log.Info("splitting a large table for parallel readers", "table", s.Name, "rows", estimates[s.Name], "ranges", len(points)+1)
	}
	return names, nil
}

// annotate adds the ranges' tables and bounds to the state file's
// sources.
func (r *runner) annotate(sources []checkpoint.Source) {
	for i := range sources {
		u := r.units[sources[i].Name]
		if u == nil || u.name == u.src.Name {
			continue
		}
		sources[i].Table, sources[i].From, sources[i].Until = u.src.Name, u.from, u.until
	}
}

// readParallel is the read side of a parallel run (runner.read): Readers
// connections in the run's snapshot read the units not done, and send
// each row's items together. Once every row is read the snapshot is
// released.
func (r *runner) readParallel(ctx context.Context, out chan<- contract.Item) error {
	var todo []*unit
	for _, u := range r.unitOrder {
		if !u.done {
			todo = append(todo, u)
		}
	}
	id := r.src.snapshotID
	if id == "" && len(todo) > 0 {
		var err error
		if id, err = r.src.snap.Export(ctx); err != nil {
			return err
		}
	}
	next := make(chan *unit, len(todo))
	for _, u := range todo {
		next <- u
	}
	close(next)
	var sendMu sync.Mutex // the items of one row go out together
	g, gctx := errgroup.WithContext(ctx)
	for range min(r.cfg.Readers, len(todo)) {
		g.Go(func() error {
			conn, snap, err := openSnapshotAt(gctx, r.src.url, id)
			if err != nil {
				return fmt.Errorf("parallel reader: %w", err)
			}
			defer closeSnapshot(gctx, conn, snap)
			for u := range next {
				if err := r.readUnit(gctx, snap, u, &sendMu, out); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	r.wm.finishReading()
	r.src.close(ctx)
	r.log.Debug("every source row is read; the snapshot is released", "readers", r.cfg.Readers, "units", len(todo))
	return nil
}

// readUnit reads one unit to its end.
func (r *runner) readUnit(ctx context.Context, snap *extract.Snapshot, u *unit, sendMu *sync.Mutex, out chan<- contract.Item) error {
	for _, es := range r.bySource[u.src.Name] {
		if es.started.Load() == 0 {
			es.touch(&es.started)
		}
	}
	var all []string // the entities of the source, in order: the items of a row without row errors
	for _, es := range r.bySource[u.src.Name] {
		all = append(all, es.name)
	}
	q := u.src.Query
	q.After, q.Until = u.from, u.until
	if u.after != nil {
		q.After = u.after
	}
	for row, err := range snap.Rows(ctx, q) {
		if err != nil {
			return err
		}
		items, rowErrs := u.src.Build(row)
		rr, err := r.readRow(u.src, row, rowErrs)
		if err != nil {
			return err
		}
		rr.unit = u.name
		sendMu.Lock()
		err = r.send(ctx, rr, items, all, out)
		sendMu.Unlock()
		if err != nil {
			return err
		}
	}
	r.wm.sourceRead(u.name)
	return nil
}
