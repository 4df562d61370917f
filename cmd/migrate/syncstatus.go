package main

import (
	"cmp"
	"context"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

type syncStatusOpts struct {
	sourceFlags
	table             string
	slot, publication string
	state             string
	format            string
}

func newSyncStatusCmd(g *globals) *cobra.Command {
	var o syncStatusOpts
	cmd := &cobra.Command{
		Use:   "status [MAPPING] --pg URL [--table NAME] [--slot S] [--publication P] [--format text|json]",
		Short: "Show a sync's slot, lag, retained WAL, stream and initial load, whether or not it runs",
		Long:  longHelp("sync-status"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if o.pg == "" {
				return errNoPG("sync status")
			}
			if o.format != "text" && o.format != "json" {
				return usagef("sync status: --format must be text or json, not %q", o.format)
			}
			table := o.table
			if o.mapping != "" {
				m, err := engine.LoadMapping(o.mapping)
				if err != nil {
					return err
				}
				table = cmp.Or(table, m.Table)
			}
			if table == "" && (o.slot == "" || o.publication == "") {
				return usagef("sync status: give the mapping (or --table), or both --slot and --publication")
			}
			slot, pub := syncNames(syncOpts{slot: o.slot, publication: o.publication}, table)
			state := o.state
			if state == "" && table != "" {
				state = engine.StatePath(table)
			}
			return runSyncStatus(cmd.Context(), g, o, slot, pub, state)
		},
	}
	f := cmd.Flags()
	o.register(cmd)
	f.StringVar(&o.table, "table", "", tableUsage)
	f.StringVar(&o.slot, "slot", "", "replication slot (default migrate_<table>)")
	f.StringVar(&o.publication, "publication", "", "publication (default migrate_<table>)")
	f.StringVar(&o.state, "state", "", "the initial load's state file (default .migrate/<table>.state.json)")
	f.StringVar(&o.format, "format", "text", "text or json")
	return cmd
}

func runSyncStatus(ctx context.Context, g *globals, o syncStatusOpts, slot, pub, state string) error {
	st, err := engine.ReadSyncState(ctx, engine.SyncStateConfig{Postgres: o.pg, Slot: slot, Publication: pub, StateFile: state})
	if err != nil {
		return err
	}
	if o.format == "json" {
		if err := render.SyncStateJSON(g.stdout, slot, pub, st); err != nil {
			return err
		}
	} else {
		_ = render.SyncState(g.stdout, slot, pub, st)
	}
	if st.Slot == nil {
		return exitError{code: exitDiffers}
	}
	return nil
}
