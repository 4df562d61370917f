package prove

import (
	"context"
	"fmt"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// shardCounts finds, for every index a sharded pattern fans out over, how
// many shards to query: the largest count of the entities sharding it,
// each fixed in the mapping, given in cfg.Shards, or (count: auto)
// computed from the source as run computes it.
func shardCounts(ctx context.Context, db Querier, cfg Config, patterns []*mapping.AccessPattern) (map[string]int, error) {
	out := map[string]int{}
	var auto []string // indexes with an auto count not given
	for _, ap := range patterns {
		if !ap.Sharded() {
			continue
		}
		if n, ok := cfg.Shards[ap.Index]; ok {
			out[ap.Index] = n
			continue
		}
		for _, e := range cfg.Mapping.Entities {
			for _, ei := range e.Indexes {
				if ei.Index != ap.Index || ei.Shard == nil {
					continue
				}
				if ei.Shard.Count == 0 {
					auto = append(auto, ap.Index)
					continue
				}
				out[ap.Index] = max(out[ap.Index], ei.Shard.Count)
			}
		}
	}
	if len(auto) == 0 {
		return out, nil
	}
	counts, err := AutoShardCounts(ctx, db, cfg.Mapping, cfg.Catalog)
	if err != nil {
		return nil, err
	}
	for _, ix := range auto {
		for key, n := range counts {
			if key[1] == ix {
				out[ix] = max(out[ix], n)
			}
		}
	}
	return out, nil
}

// AutoShardCounts computes every "count: auto" shard count of a mapping
// the way run does (transform.ShardCount over the average size of the
// entity's items, measured by transforming its rows), keyed by entity and
// index. db should be the snapshot the rest of the work reads.
func AutoShardCounts(ctx context.Context, db Querier, m *mapping.Mapping, cat *mapping.Catalog) (map[[2]string]int, error) {
	plan, err := transform.Compile(m, cat)
	if err != nil {
		return nil, err
	}
	autos := plan.AutoShards()
	out := map[[2]string]int{}
	if len(autos) == 0 {
		return out, nil
	}
	sizes := map[string]*[2]int64{} // entity -> bytes, items
	for _, a := range autos {
		plan.SetShardCount(a.Entity, a.Index, 1) // provisional, for sizing
		sizes[a.Entity] = new([2]int64)
	}
	for _, src := range plan.Sources {
		needed := false
		for _, a := range autos {
			needed = needed || src.HasEntity(a.Entity)
		}
		if !needed {
			continue
		}
		for row, err := range extract.Rows(ctx, db, src.Query) {
			if err != nil {
				return nil, fmt.Errorf("measure items for shard counts: %w", err)
			}
			items, _ := src.Apply(row)
			for _, it := range items {
				if sz := sizes[it.Entity]; sz != nil {
					sz[0] += int64(load.ItemSize(it.Attrs))
					sz[1]++
				}
			}
		}
	}
	for _, a := range autos {
		sz := sizes[a.Entity]
		avg := 0.0
		if sz[1] > 0 {
			avg = float64(sz[0]) / float64(sz[1])
		}
		out[[2]string{a.Entity, a.Index}] = transform.ShardCount(avg, a.ReadRate).Count
	}
	return out, nil
}
