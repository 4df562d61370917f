package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
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
	cc, err := o.config(ctx, g)
	if err != nil {
		return err
	}
	res, err := engine.Prune(ctx, engine.PruneConfig{CompareConfig: cc, Delete: o.yes})
	if err != nil {
		return err
	}
	if !res.Exists {
		fmt.Fprintf(g.stdout, "table %s does not exist: nothing to prune\n", res.Table)
		return nil
	}
	verb := "would delete"
	if res.Deleted {
		verb = "deleted"
	}
	fmt.Fprintf(g.stdout, "prune %s: %s %s\n", res.Table, verb, plural(int(res.Total), "stale item"))
	for _, e := range res.Entities {
		fmt.Fprintf(g.stdout, "  %-14s %d\n", e.Entity, e.Items)
	}
	for _, it := range res.Listed {
		fmt.Fprintf(g.stdout, "  - %-12s %s | %s\n", it.Entity, it.Key.PK, it.Key.SK)
	}
	if int64(len(res.Listed)) < res.Total {
		fmt.Fprintf(g.stdout, "  … %d more not shown (--max-details %d)\n", res.Total-int64(len(res.Listed)), o.maxDetails)
	}
	if !res.Deleted && res.Total > 0 {
		fmt.Fprintln(g.stdout, "nothing was deleted; pass --yes to delete them")
	}
	return nil
}
