package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/transform"
)

// PruneConfig configures Prune. Its Mode must be CompareScan: stale items
// are found only by a full read.
type PruneConfig struct {
	CompareConfig
	// Delete deletes the stale items; without it Prune only lists them.
	Delete bool
}

// WithDefaults returns c with every unset field set to its default.
func (c PruneConfig) WithDefaults() PruneConfig {
	c.CompareConfig = c.CompareConfig.withDefaults(ConsistencyStrong)
	return c
}

// Validate reports every problem with c, each wrapping ErrConfig. Call it
// on WithDefaults().
func (c PruneConfig) Validate() error {
	if err := c.CompareConfig.validate("prune"); err != nil {
		return err
	}
	if c.Mode != CompareScan {
		return configErrorf("prune: stale items are found only by a full read; --compare must be scan")
	}
	return nil
}

// PruneResult is what Prune found, and deleted; report renders it.
type PruneResult = report.Prune

// EntityCount is a count of items of one entity.
type EntityCount = report.EntityCount

// Prune compares the source with the table, like Plan, and deletes the
// stale items: items whose entity attribute names an entity of this
// mapping but whose key the mapping no longer produces (rows deleted from
// the source, keys that changed). Items of other entities are never
// touched. It refuses to delete anything while a source row cannot be
// transformed: that row's item would look stale while it is only
// unreadable.
func Prune(ctx context.Context, cfg PruneConfig) (*PruneResult, error) {
	cfg = cfg.WithDefaults()
	src, tgt, err := openBoth(ctx, cfg.Validate(), &cfg.CompareConfig)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)
	res := &PruneResult{Table: tgt.name, Exists: tgt.exists, Deleted: cfg.Delete, Entities: []EntityCount{}, Listed: []report.ItemRef{}, ForeignListed: []report.ItemRef{}}
	if !tgt.exists {
		return res, nil
	}
	if len(tgt.problems) > 0 {
		return nil, kinded(ErrTable, (&load.TableMismatchError{Table: tgt.name, Problems: tgt.problems}))
	}

	var w *load.Writer
	if cfg.Delete {
		w, err = load.NewWriter(tgt.client, load.Config{
			Table: tgt.name, PartitionKey: cfg.Mapping.PartitionKey, SortKey: cfg.Mapping.SortKey,
			Indexes: src.indexes(), Concurrency: cfg.Concurrency, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
	}
	deletes := make(chan contract.Item, 4*load.MaxBatchItems)
	var writeErr error
	var deleted sync.Map // entity -> *atomic.Int64 acknowledged
	var wg sync.WaitGroup
	if w != nil {
		wg.Go(func() { _, writeErr = w.Write(context.WithoutCancel(ctx), deletes) })
	}

	var problems []report.Problem
	stale := map[string]int64{}
	owns := ownedBy(src)
	c := &comparison{
		src: src, target: tgt, mode: CompareScan, cfg: &cfg.CompareConfig, sample: 1,
		expected: func(transform.Item, []byte) {},
		rowError: func(p report.Problem) { problems = append(problems, p) },
		visit: func(pr diff.Pair) error {
			if len(problems) > 0 {
				return fmt.Errorf("prune: %s in the source (first: %s %s: %s); nothing was deleted, since their items would look stale",
					plural(int64(len(problems)), "row error"), problems[0].Entity, problems[0].Origin, problems[0].Message)
			}
			switch kind, _ := diff.Classify(pr, owns); kind {
			case diff.KindStale:
			case diff.KindForeign:
				for _, rec := range pr.Target {
					res.Foreign++
					if len(res.ForeignListed) < cfg.MaxDetails {
						res.ForeignListed = append(res.ForeignListed, report.ItemRef{Key: reportKey(pr.Key), Entity: rec.Entity})
					}
				}
				return nil
			default:
				return nil
			}
			for _, rec := range pr.Target {
				stale[rec.Entity]++
				if len(res.Listed) < cfg.MaxDetails {
					res.Listed = append(res.Listed, report.ItemRef{Key: reportKey(pr.Key), Entity: rec.Entity})
				}
				if w == nil {
					continue
				}
				counter, _ := deleted.LoadOrStore(rec.Entity, new(atomic.Int64))
				it := contract.Item{Attrs: rec.Attrs, Delete: true, Origin: contract.Origin{Entity: rec.Entity, Table: tgt.name}}
				it.Ack = func() { counter.(*atomic.Int64).Add(1) }
				select {
				case deletes <- it:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		},
	}
	runErr := c.run(ctx)
	close(deletes)
	wg.Wait()
	if runErr != nil {
		return nil, errors.Join(interrupted(ctx, "prune", runErr), writeErr)
	}
	if writeErr != nil {
		return nil, fmt.Errorf("prune: deleting stale items: %w", writeErr)
	}
	for e, n := range stale {
		res.Total += n
		if cfg.Delete {
			n = 0
			if v, ok := deleted.Load(e); ok {
				n = v.(*atomic.Int64).Load()
			}
		}
		res.Entities = append(res.Entities, EntityCount{Entity: e, Items: n})
	}
	slices.SortFunc(res.Entities, func(a, b EntityCount) int { return cmp.Compare(a.Entity, b.Entity) })
	return res, nil
}
