package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

func init() { register(newValidateCmd) }

type validateOpts struct {
	mapping string
	pg      string
	forSync bool
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
collide. It also checks what sync needs of the source: wal_level = logical, and
replica identities that carry the columns deletes and key changes need (each
problem prints the ALTER statement that fixes it); those are notes, or errors
with --for-sync. It reads only the catalog and writes nothing. Exit code 2 when
the mapping has problems. Warnings (a key template reading a nullable column,
whose NULL rows a run would reject) are printed but do not fail it.

It also says which entities' keys are proven unique: their key templates
contain a NOT NULL unique key of the source table, with the separator (or
zero padding) between placeholders, and no other entity's keys can look
the same. A run keeps no record of those keys; it checks the keys of the
other entities for duplicates, in bounded memory and on disk.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			if o.mapping == "" {
				return usagef("validate: --mapping is required")
			}
			pg, pgFrom := pgURLFrom(o.pg)
			if err := checkPostgres("validate", pg, pgFrom); err != nil {
				return err
			}
			url := pgURL(o.pg)
			if url == "" {
				m, err := engine.LoadMapping(o.mapping)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "%s: syntax ok (%s); pass --pg to check it against the source database\n", o.mapping, render.Plural(len(m.Entities), "entity"))
				return nil
			}
			// The file's problems and the catalog's, in one pass.
			m, proof, ws, err := engine.ValidateFile(cmd.Context(), o.mapping, url)
			if err != nil {
				return err
			}
			// Warnings are advice: printed, never a failure.
			if ws != nil {
				fmt.Fprintln(g.stderr, ws.Error())
			}
			fmt.Fprintf(g.stdout, "%s: ok (%s checked against the source catalog; %s)\n", o.mapping, render.Plural(len(m.Entities), "entity"), render.Plural(len(ws), "warning"))
			_ = render.KeyProof(g.stdout, proof)
			return checkForSync(cmd.Context(), g, m, url, o.forSync)
		},
	}
	addMappingFlag(cmd, &o.mapping)
	cmd.Flags().StringVar(&o.pg, "pg", "", pgUsage)
	cmd.Flags().BoolVar(&o.forSync, "for-sync", false, "fail (exit 2) when the source cannot feed sync, instead of noting why")
	return cmd
}
