package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
)

func init() { register(newValidateCmd) }

type validateOpts struct {
	mapping string
	pg      string
}

func newValidateCmd(g *globals) *cobra.Command {
	var o validateOpts
	cmd := &cobra.Command{
		Use:   "validate [MAPPING] [--pg URL]",
		Short: "Check a mapping file, and with --pg against the live source catalog",
		Long: `validate parses the mapping file and reports every problem at once as
file:line:col: message. With --pg (or MIGRATE_PG_URL / DATABASE_URL) it also
checks the mapping against the source database's catalog: tables and columns
exist, key templates use sortable columns, keys identify rows and cannot
collide. It reads only the catalog and writes nothing. Exit code 2 when the
mapping has problems.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			if o.mapping == "" {
				return usagef("validate: --mapping is required")
			}
			m, err := engine.LoadMapping(o.mapping)
			if err != nil {
				return err
			}
			url := pgURL(o.pg)
			if url == "" {
				fmt.Fprintf(g.stdout, "%s: syntax ok (%s); pass --pg to check it against the source database\n", o.mapping, plural(len(m.Entities), "entity"))
				return nil
			}
			if err := engine.Validate(cmd.Context(), m, url); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s: ok (%s checked against the source catalog)\n", o.mapping, plural(len(m.Entities), "entity"))
			return nil
		},
	}
	addMappingFlag(cmd, &o.mapping)
	cmd.Flags().StringVar(&o.pg, "pg", "", "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	return cmd
}
