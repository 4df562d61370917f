package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/mapping"
)

func init() { register(newValidateCmd) }

type validateOpts struct {
	mapping string
	pg      string
}

func newValidateCmd(g *globals) *cobra.Command {
	var o validateOpts
	cmd := &cobra.Command{
		Use:   "validate --mapping FILE [--pg URL]",
		Short: "Check a mapping file, and with --pg against the live source catalog",
		Long: `validate parses the mapping file and reports every problem at once as
file:line:col: message. With --pg (or MIGRATE_PG_URL / DATABASE_URL) it also
checks the mapping against the source database's catalog: tables and columns
exist, key templates use sortable columns, keys identify rows and cannot
collide. It reads only the catalog and writes nothing. Exit code 2 when the
mapping has problems.

It also says which entities' keys are proven unique: their key templates
contain a NOT NULL unique key of the source table, with the separator (or
zero padding) between placeholders, and no other entity's keys can look
the same. A run keeps no record of those keys; it checks the keys of the
other entities for duplicates, in bounded memory and on disk.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			proof, err := engine.ValidateKeys(cmd.Context(), m, url)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s: ok (%s checked against the source catalog)\n", o.mapping, plural(len(m.Entities), "entity"))
			printKeyProof(g.stdout, proof)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.mapping, "mapping", "", "mapping file (YAML)")
	cmd.Flags().StringVar(&o.pg, "pg", "", "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	return cmd
}

// printKeyProof says, per entity, whether a run must check its keys for
// duplicates.
func printKeyProof(w io.Writer, p mapping.KeyProof) {
	width := 0
	for _, e := range p.Entities {
		width = max(width, len(e.Entity))
	}
	if p.Proven() {
		fmt.Fprintln(w, "keys: proven unique for every entity; a run keeps no record of them")
	} else {
		fmt.Fprintln(w, "keys: a run checks the keys of the entities not proven unique for duplicates (on disk)")
	}
	for _, e := range p.Entities {
		verdict := "unique:    "
		if !e.Unique {
			verdict = "not proven:"
		}
		fmt.Fprintf(w, "  %-*s  %s %s\n", width, e.Entity, verdict, e.Reason)
	}
}
