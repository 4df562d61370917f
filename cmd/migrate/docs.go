package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
)

func init() { register(newDocsCmd) }

type docsOpts struct {
	mapping, pg, output, plan string
}

func newDocsCmd(g *globals) *cobra.Command {
	var o docsOpts
	cmd := &cobra.Command{
		Use:   "docs [MAPPING] [--pg URL] [--plan FILE] [--output FILE]",
		Short: "Write the design's documentation as markdown: entities, keys, indexes, shards, access patterns",
		Long:  longHelp("docs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			if o.mapping == "" {
				return usagef("docs: --mapping is required")
			}
			pg, pgFrom := pgURLFrom(o.pg)
			if err := checks(checkPostgres("docs", pg, pgFrom), checkOutput("docs", "--output", o.output)); err != nil {
				return err
			}
			m, err := engine.LoadMapping(o.mapping)
			if err != nil {
				return err
			}
			doc, err := engine.Docs(cmd.Context(), engine.DocsConfig{Mapping: m, Postgres: pg, PlanFile: o.plan})
			if err != nil {
				return err
			}
			if o.output == "" {
				_, err = g.stdout.Write(doc)
				return err
			}
			if err := os.WriteFile(o.output, doc, 0o644); err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			return nil
		},
	}
	addMappingFlag(cmd, &o.mapping)
	cmd.Flags().StringVar(&o.pg, "pg", "", "source database URL, to compute auto shard counts (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "write to this file instead of stdout")
	cmd.Flags().StringVar(&o.plan, "plan", "", "JSON plan of this mapping (migrate plan --format json), for each entity's capacity figures")
	return cmd
}
