package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgdynamo/migrate/internal/mapdoc"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/mapping"
)

// DocsConfig configures Docs.
type DocsConfig struct {
	// Mapping is the design documented. Required.
	Mapping *mapping.Mapping
	// Postgres, if set, is the source database: every "count: auto"
	// shard count is computed from it, as Run computes them. Without it
	// an auto count is documented by its inputs.
	Postgres string
	// PlanFile, if set, is the JSON of a plan of this mapping (`migrate
	// plan --format json`): each entity's capacity figures are added. A
	// file that is not such a plan, or names an entity the mapping lacks,
	// is an ErrConfig whose message names it as the CLI's --plan.
	PlanFile string
}

// Validate reports the first problem with c, wrapping ErrConfig.
func (c DocsConfig) Validate() error {
	if c.Mapping == nil {
		return fieldf("docs", "Mapping", "is required")
	}
	return nil
}

// Docs returns the design's documentation as markdown: the table's keys, a
// key table per entity, the indexes and the entities they serve, the shard
// count a reader of every sharded index must query, the access patterns
// and, with a plan, each entity's capacity figures. It reads the source
// only to count shards, and writes nothing.
func Docs(ctx context.Context, cfg DocsConfig) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := cfg.Mapping
	var opts mapdoc.Options
	if cfg.Postgres != "" {
		counts, err := ShardCounts(ctx, m, cfg.Postgres)
		if err != nil {
			return nil, err
		}
		opts.ShardCounts = map[[2]string]int{}
		for _, c := range counts {
			opts.ShardCounts[[2]string{c.Entity, c.Index}] = c.Count
		}
	}
	if cfg.PlanFile != "" {
		var err error
		if opts.Capacity, err = planCapacity(cfg.PlanFile, m); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := mapdoc.Markdown(&buf, m, opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// planCapacity reads the per-entity figures of a JSON plan for the docs.
// A plan of another mapping (an entity this one lacks) is refused: its
// figures would be shown against the wrong design. The messages name the
// file as the CLI's --plan, as they always have.
func planCapacity(path string, m *mapping.Mapping) (*mapdoc.Capacity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, configErrorf("docs: --plan: %v", err)
	}
	var p report.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, configErrorf("docs: --plan %s: not a plan in JSON (migrate plan --format json): %v", path, err)
	}
	if p.Schema != report.PlanSchema {
		return nil, configErrorf("docs: --plan %s: schema %q, want %q (migrate plan --format json)", path, p.Schema, report.PlanSchema)
	}
	c := &mapdoc.Capacity{From: fmt.Sprintf("%s, made %s", filepath.Base(path), p.GeneratedAt.UTC().Format("2006-01-02 15:04 MST")),
		Entities: map[string]mapdoc.EntityCapacity{}}
	for _, e := range p.Entities {
		if m.Entity(e.Entity) == nil {
			return nil, configErrorf("docs: --plan %s has entity %s, which the mapping %s lacks: make the plan with this mapping", path, e.Entity, m.File)
		}
		c.Entities[e.Entity] = mapdoc.EntityCapacity{Items: e.Expected, Bytes: e.Bytes, MaxItemBytes: e.MaxItemBytes, WriteUnits: e.WriteUnits,
			PartitionKeys: e.PartitionKeys, Estimated: e.PartitionKeysMethod == "hyperloglog"}
	}
	return c, nil
}
