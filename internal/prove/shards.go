package prove

import (
	"fmt"

	"github.com/pgdynamo/migrate/mapping"
)

// UnknownShardsError says that the "count: auto" shard count of an
// entity's index was needed and not given.
type UnknownShardsError struct{ Entity, Index string }

func (e *UnknownShardsError) Error() string {
	return fmt.Sprintf("prove: the \"count: auto\" shard count of %s %s is not known: give it in Shards or AutoShards (engine.Prove computes it as run does)", e.Entity, e.Index)
}

// ShardCounts finds, for every index a sharded pattern fans out over, how
// many shards to query: the count given for the index in shards, else the
// largest count of the entities sharding it, each fixed in the mapping or
// (count: auto) given in auto by entity and index. Every reader of a
// sharded index (prove, query --pattern) takes it from here: querying
// fewer shards than one entity wrote would miss its items.
func ShardCounts(m *mapping.Mapping, patterns []*mapping.AccessPattern, shards map[string]int, auto map[[2]string]int) (map[string]int, error) {
	out := map[string]int{}
	for _, ap := range patterns {
		if !ap.Sharded() {
			continue
		}
		if n, ok := shards[ap.Index]; ok {
			out[ap.Index] = n
			continue
		}
		for _, e := range m.Entities {
			for _, ei := range e.Indexes {
				if ei.Index != ap.Index || ei.Shard == nil {
					continue
				}
				n := ei.Shard.Count
				if n == 0 {
					var ok bool
					if n, ok = auto[[2]string{e.Name, ap.Index}]; !ok {
						return nil, &UnknownShardsError{Entity: e.Name, Index: ap.Index}
					}
				}
				out[ap.Index] = max(out[ap.Index], n)
			}
		}
	}
	return out, nil
}
