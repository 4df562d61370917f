package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/mapdoc"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/mapping"
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
		Long: `docs writes what a team reviews when the design changes: the table's keys, a key
table per entity, the indexes and the entities they serve, the shard count a
reader of every sharded index must query, and the access patterns.

Without --pg it reads the mapping file only, and a "count: auto" shard count
is given by its inputs. With --pg (or MIGRATE_PG_URL / DATABASE_URL) it
also checks the mapping against the source catalog and computes every auto
shard count from the source, as run does. With --plan FILE (the JSON of
migrate plan --format json for this mapping) it adds each entity's capacity
figures: items, average and largest item size, write units. It writes
nothing else.`,
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
			var opts mapdoc.Options
			if url := pgURL(o.pg); url != "" {
				counts, err := engine.ShardCounts(cmd.Context(), m, url)
				if err != nil {
					return err
				}
				opts.ShardCounts = map[[2]string]int{}
				for _, c := range counts {
					opts.ShardCounts[[2]string{c.Entity, c.Index}] = c.Count
				}
			}
			if o.plan != "" {
				if opts.Capacity, err = planCapacity(o.plan, m); err != nil {
					return err
				}
			}
			var buf bytes.Buffer
			if err := mapdoc.Markdown(&buf, m, opts); err != nil {
				return err
			}
			if o.output == "" {
				_, err = g.stdout.Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(o.output, buf.Bytes(), 0o644); err != nil {
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

// planCapacity reads the per-entity figures of a JSON plan for the docs.
// A plan of another mapping (an entity this one lacks) is refused: its
// figures would be shown against the wrong design.
func planCapacity(path string, m *mapping.Mapping) (*mapdoc.Capacity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("docs: --plan: %v", err)
	}
	var p report.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, usagef("docs: --plan %s: not a plan in JSON (migrate plan --format json): %v", path, err)
	}
	if p.Schema != report.PlanSchema {
		return nil, usagef("docs: --plan %s: schema %q, want %q (migrate plan --format json)", path, p.Schema, report.PlanSchema)
	}
	c := &mapdoc.Capacity{From: fmt.Sprintf("%s, made %s", filepath.Base(path), p.GeneratedAt.UTC().Format("2006-01-02 15:04 MST")),
		Entities: map[string]mapdoc.EntityCapacity{}}
	for _, e := range p.Entities {
		if m.Entity(e.Entity) == nil {
			return nil, usagef("docs: --plan %s has entity %s, which the mapping %s lacks: make the plan with this mapping", path, e.Entity, m.File)
		}
		c.Entities[e.Entity] = mapdoc.EntityCapacity{Items: e.Expected, Bytes: e.Bytes, MaxItemBytes: e.MaxItemBytes, WriteUnits: e.WriteUnits,
			PartitionKeys: e.PartitionKeys, Estimated: e.PartitionKeysMethod == "hyperloglog"}
	}
	return c, nil
}
