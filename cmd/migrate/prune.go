package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/diff"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/report"
	"github.com/pgdynamo/migrate/transform"
)

func init() { register(newPruneCmd) }

type pruneOpts struct {
	compareFlags
	yes bool
}

func newPruneCmd(g *globals) *cobra.Command {
	var o pruneOpts
	cmd := &cobra.Command{
		Use:   "prune --mapping FILE --pg URL [--table T] [--endpoint URL] [--yes]",
		Short: "Delete stale items: items of this mapping's entities that the source no longer produces",
		Long: `prune compares the source (one snapshot, transformed exactly as run does) with
the target table, like plan, and deletes the stale items: items whose entity
attribute names an entity of this mapping but whose key the mapping no longer
produces (rows deleted from the source, keys that changed). Items of other
entities are never touched. Without --yes it only lists what it would delete.

It refuses to delete anything when a source row cannot be transformed: that
row's item would look stale while it is only unreadable.

It reads the whole table with a parallel Scan (the only way to find stale
items). ` + compareReadCostHelp + `
Exit codes: 0 done (or nothing to do); 1 failure; 2 usage or mapping errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.pg = pgURL(o.pg)
			if err := o.compareFlags.validate("prune"); err != nil {
				return err
			}
			if o.compare != compareScan {
				return usagef("prune: stale items are found only by a full read; --compare must be scan")
			}
			return runPrune(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(f, compareScan, true)
	f.BoolVar(&o.yes, "yes", false, "delete the stale items (without it, only list them)")
	return cmd
}

func runPrune(ctx context.Context, g *globals, o *pruneOpts) error {
	src, tgt, err := openBoth(ctx, &o.compareFlags)
	if err != nil {
		return err
	}
	defer src.close(ctx)
	if !tgt.exists {
		fmt.Fprintf(g.stdout, "table %s does not exist: nothing to prune\n", tgt.name)
		return nil
	}

	var w *load.Writer
	if o.yes {
		w, err = load.NewWriter(tgt.client, load.Config{
			Table: tgt.name, PartitionKey: src.m.PartitionKey, SortKey: src.m.SortKey,
			Indexes: src.indexes(), Concurrency: o.concurrency, Logger: g.logger,
		})
		if err != nil {
			return err
		}
	}
	deletes := make(chan load.Item, 4*load.MaxBatchItems)
	var writeErr error
	var deleted sync.Map // entity -> *atomic.Int64 acknowledged
	var wg sync.WaitGroup
	if w != nil {
		wg.Go(func() { _, writeErr = w.Write(context.WithoutCancel(ctx), deletes) })
	}

	var problems []report.Problem
	stale := map[string]int64{}
	var listed []string
	owns := ownedBy(src)
	c := &comparison{
		src: src, target: tgt, mode: compareScan, opts: &o.compareFlags, sample: 1,
		expected: func(transform.Item, []byte) {},
		rowError: func(p report.Problem) { problems = append(problems, p) },
		visit: func(pr diff.Pair) error {
			if len(problems) > 0 {
				return fmt.Errorf("prune: %s in the source (first: %s %s: %s); nothing was deleted, since their items would look stale",
					plural(len(problems), "row error"), problems[0].Entity, problems[0].Origin, problems[0].Message)
			}
			if kind, _ := diff.Classify(pr, owns); kind != diff.KindStale {
				return nil
			}
			for _, rec := range pr.Target {
				stale[rec.Entity]++
				if len(listed) < o.maxDetails {
					k := reportKey(pr.Key)
					listed = append(listed, fmt.Sprintf("  - %-12s %s | %s", rec.Entity, k.PK, k.SK))
				}
				if w == nil {
					continue
				}
				counter, _ := deleted.LoadOrStore(rec.Entity, new(atomic.Int64))
				it := load.Item{Attrs: rec.Attrs, Delete: true, Origin: load.Origin{Entity: rec.Entity, Table: tgt.name}}
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
	runErr := c.run(ctx, g.logger)
	close(deletes)
	wg.Wait()
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) && ctx.Err() != nil {
			runErr = interruptedError{fmt.Errorf("prune interrupted: %w", runErr)}
		}
		return errors.Join(runErr, writeErr)
	}
	if writeErr != nil {
		return fmt.Errorf("prune: deleting stale items: %w", writeErr)
	}

	var total int64
	entities := make([]string, 0, len(stale))
	for e, n := range stale {
		entities = append(entities, e)
		total += n
	}
	sort.Strings(entities)
	verb := "would delete"
	if o.yes {
		verb = "deleted"
	}
	fmt.Fprintf(g.stdout, "prune %s: %s %s\n", tgt.name, verb, plural(int(total), "stale item"))
	for _, e := range entities {
		n := stale[e]
		if o.yes {
			if v, ok := deleted.Load(e); ok {
				n = v.(*atomic.Int64).Load()
			} else {
				n = 0
			}
		}
		fmt.Fprintf(g.stdout, "  %-14s %d\n", e, n)
	}
	for _, l := range listed {
		fmt.Fprintln(g.stdout, l)
	}
	if int64(len(listed)) < total {
		fmt.Fprintf(g.stdout, "  … %d more not shown (--max-details %d)\n", total-int64(len(listed)), o.maxDetails)
	}
	if !o.yes && total > 0 {
		fmt.Fprintln(g.stdout, "nothing was deleted; pass --yes to delete them")
	}
	return nil
}
