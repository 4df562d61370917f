package prove

import (
	"fmt"

	"github.com/pgdynamo/migrate/mapping"
)

// shardCounts finds, for every index a sharded pattern fans out over, how
// many shards to query: the largest count of the entities sharding it,
// each fixed in the mapping, given in cfg.Shards, or (count: auto) given in
// cfg.AutoShards.
func shardCounts(cfg Config, patterns []*mapping.AccessPattern) (map[string]int, error) {
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
	for _, ix := range auto {
		found := false
		for key, n := range cfg.AutoShards {
			if key[1] == ix {
				out[ix], found = max(out[ix], n), true
			}
		}
		if !found {
			return nil, fmt.Errorf("prove: the \"count: auto\" shard count of index %s is not known: give it in Shards or AutoShards (engine.Prove computes it as run does)", ix)
		}
	}
	return out, nil
}
