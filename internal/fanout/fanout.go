// Package fanout reads one access pattern's partitions and merges them as
// one Query would return them: the shards of a sharded index key
// ({shard}) and the declared buckets of a pattern (ORDERS#{id}#{year} for
// each year), every combination of both. It is the one implementation
// behind `migrate query` and `migrate prove`: which partitions (Points),
// what a fan-out placeholder holds at each (Point.Value), and the merge
// by sort key (ddbvalue.CompareKeys) with the limit applied to the merged
// items (Run).
package fanout

import (
	"context"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Item is one DynamoDB item.
type Item = map[string]types.AttributeValue

// Point is one partition of a pattern's fan-out: a shard number (0 when
// the pattern is not sharded) and a value for each bucket.
type Point struct {
	Shard   int
	Buckets map[string]string
	ints    map[string]bool
}

// Points lists the partitions a pattern reads for one parameter set:
// every combination of its buckets' values, each on every one of shards
// shards when the pattern is sharded (shards is then the index's count).
// A pattern that does not fan out has one point.
func Points(ap *mapping.AccessPattern, shards int) []Point {
	if !ap.Sharded() || shards < 1 {
		shards = 1
	}
	ints := map[string]bool{}
	for _, b := range ap.Buckets {
		ints[b.Name] = b.Int
	}
	var out []Point
	for _, c := range ap.FanOut() {
		for n := range shards {
			out = append(out, Point{Shard: n, Buckets: c, ints: ints})
		}
	}
	return out
}

// Value is the value of a fan-out placeholder at p: {shard}, or a bucket
// (a whole number as an integer, so that {year:4} pads it). ok is false
// for any other placeholder: a parameter.
func (p Point) Value(part mapping.Part) (kv transform.KeyValue, ok bool) {
	if len(part.Path) > 0 {
		return kv, false
	}
	if part.Column == mapping.ShardPlaceholder {
		return transform.KeyValue{V: strconv.Itoa(p.Shard), Kind: pgkind.Text}, true
	}
	v, ok := p.Buckets[part.Column]
	if !ok {
		return kv, false
	}
	if p.ints[part.Column] {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return transform.KeyValue{V: n, Kind: pgkind.Int}, true
		}
	}
	return transform.KeyValue{V: v, Kind: pgkind.Text}, true
}

// Parallel is how many partitions Run reads at once.
const Parallel = 8

// Run reads n partitions with one (partition i, each already in sort key
// order and cut to limit), at most Parallel at once, and merges them: by
// the sort key attribute sk (descending when desc; the partitions' order
// kept among equal keys and when sk is ""), then the first limit items
// (0 = all).
func Run(ctx context.Context, n int, one func(ctx context.Context, i int) ([]Item, error), sk string, desc bool, limit int) ([]Item, error) {
	if n == 1 {
		items, err := one(ctx, 0)
		if limit > 0 && len(items) > limit {
			items = items[:limit]
		}
		return items, err
	}
	parts := make([][]Item, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(Parallel)
	for i := range n {
		g.Go(func() error {
			items, err := one(gctx, i)
			parts[i] = items
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var merged []Item
	for _, items := range parts {
		merged = append(merged, items...)
	}
	// Each partition came sorted; a stable sort of the concatenation is
	// the merge.
	if sk != "" {
		slices.SortStableFunc(merged, func(a, b Item) int {
			c := ddbvalue.CompareKeys(a[sk], b[sk])
			if desc {
				return -c
			}
			return c
		})
	}
	if limit > 0 && len(merged) > limit {
		merged = merged[:limit]
	}
	return merged, nil
}
