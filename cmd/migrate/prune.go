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
		Long:  longHelp("prune"),
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
		func(w io.Writer) error { return report.PruneText(w, res, o.cfg.MaxDetails) },
		func(w io.Writer) error { return report.PruneMarkdown(w, res) },
		func(w io.Writer) error { return report.PruneJSON(w, res) })
}
