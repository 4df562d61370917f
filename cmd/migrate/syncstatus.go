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
	table, format string
	cfg           engine.SyncStateConfig // what the flags set of it
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
			c := o.cfg
			if table == "" && (c.Slot == "" || c.Publication == "") {
				return usagef("sync status: give the mapping (or --table), or both --slot and --publication")
			}
			c.Postgres = o.pg
			c.Slot, c.Publication = syncNames(c.Slot, c.Publication, table)
			if c.StateFile == "" && table != "" {
				c.StateFile = engine.StatePath(table)
			}
			return runSyncStatus(cmd.Context(), g, c, o.format)
		},
	}
	f := cmd.Flags()
	o.register(cmd)
	f.StringVar(&o.table, "table", "", tableUsage)
	f.StringVar(&o.cfg.Slot, "slot", "", "replication slot (default migrate_<table>)")
	f.StringVar(&o.cfg.Publication, "publication", "", "publication (default migrate_<table>)")
	f.StringVar(&o.cfg.StateFile, "state", "", "the initial load's state file (default .migrate/<table>.state.json)")
	f.StringVar(&o.format, "format", "text", "text or json")
	return cmd
}

func runSyncStatus(ctx context.Context, g *globals, c engine.SyncStateConfig, format string) error {
	st, err := engine.ReadSyncState(ctx, c)
	if err != nil {
		return err
	}
	if format == "json" {
		if err := render.SyncStateJSON(g.stdout, c.Slot, c.Publication, st); err != nil {
			return err
		}
	} else {
		_ = render.SyncState(g.stdout, c.Slot, c.Publication, st)
	}
	if st.Slot == nil {
		return exitError{code: exitDiffers}
	}
	return nil
}
