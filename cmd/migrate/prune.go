package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/internal/report"
)

func init() { register(newPruneCmd) }

type pruneOpts struct {
	compareFlags
	yes bool
}

func newPruneCmd(g *globals) *cobra.Command {
	var o pruneOpts
	cmd := &cobra.Command{
		Use:   "prune [MAPPING] --pg URL [--table T] [--endpoint URL] [--yes]",
		Short: "Delete stale items: items of this mapping's entities that the source no longer produces",
		Long: `prune compares the source (one snapshot, transformed exactly as run does) with
the target table, like plan, and deletes the stale items: items whose entity
attribute names an entity of this mapping but whose key the mapping no longer
produces (rows deleted from the source, keys that changed). Items of other
entities are never touched, nor items whose keys the mapping could not have
written: every key placeholder must hold a value of its column's type as the
template renders it (CUSTOMER#abc is not a bigint's key; a shard number is
below the count). Those are listed as foreign. Without --yes it only lists
what it would delete.

It refuses to delete anything when a source row cannot be transformed: that
row's item would look stale while it is only unreadable.

It reads the whole table with one parallel Scan (--segments at a time), the
only way to find stale items: the table's total size / 4 KB x 1 read unit
(x 0.5 with --consistent=false). Deletes cost one write unit per item and
per index it is in.

` + sortMemoryHelp + `

Exit codes: 0 done (or nothing to do); 1 failure; 2 usage or mapping errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if err := o.compareFlags.validate("prune", engine.PruneConfig{CompareConfig: o.values()}.Validate()); err != nil {
				return err
			}
			return runPrune(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(cmd, false, true)
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
	return render.Report(g.stdout, o.format,
		func(w io.Writer) error { return report.PruneText(w, res, o.maxDetails) },
		func(w io.Writer) error { return report.PruneMarkdown(w, res) },
		func(w io.Writer) error { return report.PruneJSON(w, res) })
}
