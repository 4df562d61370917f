package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	sqlschema "github.com/pgdynamo/migrate/sql"
)

// newSampleSchemaCmd is `migrate sample schema up|down`.
func newSampleSchemaCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema up|down",
		Short: "Create or drop the sample bookstore schema in PostgreSQL",
		Long:  longHelp("sample-schema"),
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usagef("sample schema: name a subcommand: up or down")
		},
	}
	cmd.AddCommand(
		newSchemaOpCmd(g, "up", "Apply the bookstore migrations not yet applied", sqlschema.Up),
		newSchemaOpCmd(g, "down", "Drop the bookstore tables and types (all their data)", sqlschema.Down),
	)
	return cmd
}

func newSchemaOpCmd(g *globals, op, short string, do func(context.Context, string) error) *cobra.Command {
	var pg string
	cmd := &cobra.Command{
		Use:   op + " --pg URL",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pg, _ = pgURLFrom(pg); pg == "" {
				return errNoPG("sample schema " + op)
			}
			if err := checkPostgres("sample schema "+op, pg, ""); err != nil {
				return err
			}
			start := time.Now()
			ctx := cmd.Context()
			if err := do(ctx, pg); err != nil {
				if ctx.Err() != nil {
					return interruptedError(err)
				}
				return err
			}
			fmt.Fprintf(g.stdout, "sample schema %s: done in %.1fs\n", op, time.Since(start).Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&pg, "pg", "", "postgres:// URL of the database (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	return cmd
}
