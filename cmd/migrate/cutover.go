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
	slot, publication, state string
	quiet                    time.Duration
	sample                   float64
	wait                     time.Duration
	drop                     bool
	calls                    callFlags
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
			cc := engine.CutoverConfig{Sync: engine.SyncConfig{Postgres: o.pg, Table: o.table},
				Quiet: cmp.Or(o.quiet, -1), Sample: cmp.Or(o.sample, -1), WaitInactive: cmp.Or(o.wait, -1)}
			if err := checks(
				flagProblemIn("cutover", pgNames(o.pgFrom), cc.Validate()),
				flagProblem("cutover", o.calls.problems(o.endpoint, o.region)),
			); err != nil {
				return err
			}
			return runCutover(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.StringVar(&o.slot, "slot", "", "the sync's replication slot (default migrate_<table>)")
	f.StringVar(&o.publication, "publication", "", "the sync's publication (default migrate_<table>)")
	f.StringVar(&o.state, "state", "", "the sync's state file (default .migrate/<table>.state.json)")
	f.DurationVar(&o.quiet, "quiet-period", 10*time.Second, "how long the source must take no write to a mapped table once caught up (longer than any writer's pause)")
	f.Float64Var(&o.sample, "sample", 1, "fraction of the keys verify checks (0 < P <= 1)")
	f.DurationVar(&o.wait, "wait-for-sync", 30*time.Second, "how long to wait for a sync still streaming from the slot to stop")
	f.BoolVar(&o.drop, "drop", false, "on GO, drop the slot and the publication")
	o.calls.register(f, true)
	return cmd
}

func runCutover(ctx context.Context, g *globals, o cutoverOpts) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	slot, pub := syncNames(syncOpts{slot: o.slot, publication: o.publication}, table)
	client, err := o.client(ctx, o.calls, 0, g.logger)
	if err != nil {
		return err
	}
	res, err := engine.Cutover(ctx, engine.CutoverConfig{
		Sync: engine.SyncConfig{
			Mapping: m, Postgres: o.pg, DynamoDB: client, Table: table,
			Slot: slot, Publication: pub, StateFile: o.state, Logger: g.logger,
		},
		Quiet: o.quiet, Sample: o.sample, WaitInactive: o.wait,
	})
	if err != nil {
		return err
	}
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
