package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/fanout"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// PatternQueryInput asks a query access pattern of a mapping for one set
// of parameter values, as prove asks it: on every shard of a sharded
// index and every partition of its buckets, merged in sort key order,
// the pattern's limit applying to the merged items.
type PatternQueryInput struct {
	Table   string // default: the mapping's table
	Mapping *mapping.Mapping
	Pattern string
	// Params are the pattern's parameter values as text; a whole number
	// is an integer (for {id:8}).
	Params map[string]string
	// Shards is the shard count of the index, when the pattern is sharded.
	Shards     int
	Attributes []string
	Consistent bool
}

// PatternShards is the shard count of the index a sharded query pattern
// reads, for PatternQueryInput.Shards: the largest count of the entities
// sharding the index, as prove queries it, each the one the mapping
// declares or, for "count: auto", the one the run or sync that wrote
// table recorded in its state file (stateFile, default
// .migrate/<table>.state.json). It is 0 for a pattern that is not sharded
// or not in the mapping (QueryPattern says why).
func PatternShards(m *mapping.Mapping, pattern, stateFile, table string) (int, error) {
	ap := patternNamed(m, pattern)
	if ap == nil || !ap.Sharded() {
		return 0, nil
	}
	written, err := WrittenShards("query", m, stateFile, table)
	if err != nil {
		return 0, err
	}
	counts, err := prove.ShardCounts(m, []*mapping.AccessPattern{ap}, nil, written.Map())
	var unknown *prove.UnknownShardsError
	if errors.As(err, &unknown) {
		return 0, configErrorf("query: %s %s has \"count: auto\" shards, and no state file (--state, default %s) has the count the run computed", unknown.Entity, unknown.Index, StatePath(table))
	}
	return counts[ap.Index], err
}

// QueryPattern runs a query access pattern (see PatternQueryInput).
func QueryPattern(ctx context.Context, client Querier, in PatternQueryInput) ([]map[string]types.AttributeValue, error) {
	m := in.Mapping
	ap := patternNamed(m, in.Pattern)
	switch {
	case ap == nil:
		var names []string
		for _, p := range m.AccessPatterns {
			names = append(names, p.Name)
		}
		return nil, configErrorf("query: the mapping has no access pattern %q (its patterns: %s)", in.Pattern, strings.Join(names, ", "))
	case ap.Op != mapping.OpQuery:
		return nil, configErrorf("query: access pattern %s is a %s, not a Query", ap.Name, ap.Op)
	case ap.Sharded() && in.Shards < 1:
		return nil, configErrorf("query: access pattern %s reads every shard of %s, whose shard count is not known", ap.Name, ap.Index)
	}
	var missing []string
	for _, name := range ap.ParamNames() {
		if _, ok := in.Params[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range in.Params {
		if !slices.Contains(ap.ParamNames(), name) {
			return nil, configErrorf("query: access pattern %s has no parameter %s (its parameters: %s)", ap.Name, name, strings.Join(ap.ParamNames(), ", "))
		}
	}
	if len(missing) > 0 {
		return nil, configErrorf("query: access pattern %s needs a value for %s (--param %s=...)", ap.Name, strings.Join(missing, ", "), missing[0])
	}
	pkType, skType := m.PartitionKeyType, m.SortKeyType
	for _, ix := range m.Indexes {
		if ix.Name == ap.Index {
			pkType, skType = ix.PartitionKeyType, ix.SortKeyType
		}
	}
	if pkType != mapping.KeyString && pkType != "" || ap.SK != nil && skType != mapping.KeyString && skType != "" {
		return nil, configErrorf("query: access pattern %s reads keys of type %s/%s; query --pattern builds string keys only (prove asks it)", ap.Name, pkType, skType)
	}
	render := func(t *mapping.Template, at fanout.Point) (string, error) {
		av, present, col, err := transform.RenderKey(t, mapping.KeyString, m.Separator, false, func(i int) (transform.KeyValue, error) {
			part := t.Parts[i]
			if kv, ok := at.Value(part); ok {
				return kv, nil
			}
			s := in.Params[part.Column]
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return transform.KeyValue{V: n, Kind: pgkind.Int}, nil
			}
			return transform.KeyValue{V: s, Kind: pgkind.Text}, nil
		})
		switch {
		case err != nil:
			return "", configErrorf("query: access pattern %s: %q: {%s}: %v", ap.Name, t.Raw, col, err)
		case !present:
			return "", configErrorf("query: access pattern %s: %q: a parameter is empty", ap.Name, t.Raw)
		}
		return av.(*types.AttributeValueMemberS).Value, nil
	}
	q := QueryInput{Table: in.Table, Index: ap.Index, Desc: ap.Descending, Limit: int32(ap.Limit), Attributes: in.Attributes, Consistent: in.Consistent}
	if q.Table == "" {
		q.Table = m.Table
	}
	if ap.SK != nil {
		var vals []string
		for _, t := range ap.SK.Values {
			v, err := render(t, fanout.Point{})
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		switch ap.SK.Op {
		case mapping.CondEq:
			q.SKEquals = vals[0]
		case mapping.CondBeginsWith:
			q.SKPrefix = vals[0]
		case mapping.CondBetween:
			q.SKFrom, q.SKTo = vals[0], vals[1]
		default:
			return nil, configErrorf("query: access pattern %s has the sort key condition %s, which query --pattern does not run (prove asks it)", ap.Name, ap.SK.Op)
		}
	}
	for _, at := range fanout.Points(ap, in.Shards) {
		pk, err := render(ap.PK, at)
		if err != nil {
			return nil, err
		}
		q.PKs = append(q.PKs, pk)
	}
	return Query(ctx, client, q)
}

func patternNamed(m *mapping.Mapping, name string) *mapping.AccessPattern {
	for _, ap := range m.AccessPatterns {
		if ap.Name == name {
			return ap
		}
	}
	return nil
}
