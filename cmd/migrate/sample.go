package main

import "github.com/spf13/cobra"

func init() { register(newSampleCmd) }

// newSampleCmd groups the commands that build the sample bookstore, which
// the examples, the demo and the tests migrate. They are not part of a
// migration: a real source already has its schema and data.
func newSampleCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Create and fill the sample bookstore database (for trying the tool)",
		Long: `sample builds the sample bookstore in a PostgreSQL database, to try the tool
on before pointing it at your own data:

  migrate sample schema up --pg URL     create the tables (customers, addresses,
                                        authors, books, orders, order_items)
  migrate sample seed --pg URL          fill them with deterministic data
  migrate sample schema down --pg URL   drop them again

The sample's migration history is kept in its own table,
migrate_sample_schema_migrations, so it never mixes with a database's own
golang-migrate history in schema_migrations. testdata/bookstore.yaml is the
mapping for it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usagef("sample: name a subcommand: schema or seed")
		},
	}
	cmd.AddCommand(newSampleSchemaCmd(g), newSampleSeedCmd(g))
	return cmd
}
