package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

func init() { register(newCutoverCmd) }

type cutoverOpts struct {
	sourceFlags
	targetFlags
	cfg  engine.CutoverConfig // what the flags set of it
	drop bool
}

func newCutoverCmd(g *globals) *cobra.Command {
	var o cutoverOpts
	cmd := &cobra.Command{
		Use:   "cutover [MAPPING] --pg URL [--table NAME] [--quiet-period D] [--sample P] [--drop]",
		Short: "Finish a sync once writes are frozen, check go/no-go together, and say which",
		Long:  longHelp("cutover"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			switch {
			case o.mapping == "":
				return usagef("cutover: a mapping file is required (the argument or --mapping)")
			case o.pg == "":
				return errNoPG("cutover")
			}
			// The flags show their defaults: 0 there is a mistake, not a
			// request for the default.
			cc := o.cfg
			cc.Sync.Postgres, cc.Sync.Table = o.pg, o.table
			cc.Quiet, cc.Sample, cc.WaitInactive = cmp.Or(cc.Quiet, -1), cmp.Or(cc.Sample, -1), cmp.Or(cc.WaitInactive, -1)
			if err := checks(
				flagProblemIn("cutover", pgNames(o.pgFrom), cc.Validate()),
				o.targetFlags.validate("cutover"),
			); err != nil {
				return err
			}
			return runCutover(cmd.Context(), g, o)
		},
	}
	f, c := cmd.Flags(), &o.cfg
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.StringVar(&c.Sync.Slot, "slot", "", "the sync's replication slot (default migrate_<table>)")
	f.StringVar(&c.Sync.Publication, "publication", "", "the sync's publication (default migrate_<table>)")
	f.StringVar(&c.Sync.StateFile, "state", "", "the sync's state file (default .migrate/<table>.state.json)")
	f.DurationVar(&c.Quiet, "quiet-period", 10*time.Second, "how long the source must take no write to a mapped table once caught up (longer than any writer's pause)")
	f.Float64Var(&c.Sample, "sample", 1, "fraction of the keys verify checks (0 < P <= 1)")
	f.DurationVar(&c.WaitInactive, "wait-for-sync", 30*time.Second, "how long to wait for a sync still streaming from the slot to stop")
	f.BoolVar(&o.drop, "drop", false, "on GO, drop the slot and the publication")
	o.registerCalls(f, true)
	return cmd
}

func runCutover(ctx context.Context, g *globals, o cutoverOpts) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	c := o.cfg
	c.Sync.Table = cmp.Or(o.table, m.Table)
	c.Sync.Slot, c.Sync.Publication = syncNames(c.Sync.Slot, c.Sync.Publication, c.Sync.Table)
	c.Sync.Mapping, c.Sync.Postgres, c.Sync.Logger = m, o.pg, g.logger
	if c.Sync.DynamoDB, err = o.client(ctx, 0, g.logger); err != nil {
		return err
	}
	res, err := engine.Cutover(ctx, c)
	if err != nil {
		return err
	}
	table, slot, pub := c.Sync.Table, c.Sync.Slot, c.Sync.Publication
	_ = render.Cutover(g.stdout, table, res)
	if !res.Go {
		return exitError{code: exitDiffers}
	}
	if o.drop {
		return dropSync(ctx, g, o.pg, slot, pub)
	}
	fmt.Fprintf(g.stderr, "migrate: replication slot %s remains and keeps WAL on the source; once the application reads from DynamoDB, remove it with:\n  migrate sync --drop --mapping %s --slot %s --publication %s\n", slot, render.ShellQuote(o.mapping), slot, pub)
	return nil
}
