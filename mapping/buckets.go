package mapping

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bucket is a declared set of values a query pattern fans out over: the
// partitions of a bucketed key (ORDERS#{id}#{year} for each year of a
// range, or STATUS#{status} for each of a list), each queried and the
// answers merged in sort key order, as {shard} does for the shards of a
// sharded index. The single-table literature calls these time buckets or
// partition buckets; the reader must know the set, so the pattern declares
// it.
type Bucket struct {
	Name   string
	Values []string
	// Int reports whether every value is a whole number, so that a width
	// ({year:4}) applies to it as to an integer column.
	Int bool
	Pos Pos
}

// MaxFanOut bounds the partitions one pattern reads per parameter set:
// buckets' values multiplied (shards come on top).
const MaxFanOut = 1000

// parseBuckets reads buckets: { name: [v, ...] | { from: N, to: M } }.
func (p *parser) parseBuckets(n *yaml.Node, ap *AccessPattern) {
	total := 1
	p.fields(n, "buckets", nil, func(name string, k, v *yaml.Node) {
		what := "bucket " + name
		if name == ShardPlaceholder {
			p.r.errorf(pos(k), "bucket %s: {%s} is the shard number of a sharded index; name the bucket otherwise", name, ShardPlaceholder)
			return
		}
		// Declared even when its values are wrong, so that {name} is
		// not reported again as an unknown parameter.
		b := &Bucket{Name: name, Pos: pos(k)}
		ap.Buckets = append(ap.Buckets, b)
		switch v.Kind {
		case yaml.SequenceNode:
			seen := map[string]bool{}
			for _, c := range v.Content {
				s, ok := p.name(c, what+" value")
				if !ok {
					continue
				}
				if seen[s] {
					p.r.errorf(pos(c), "%s: value %q is listed twice", what, s)
					continue
				}
				seen[s] = true
				b.Values = append(b.Values, s)
			}
			if len(v.Content) == 0 {
				p.r.errorf(pos(v), "%s has no values: list them, or give a range { from: N, to: M }", what)
			}
			b.Int = len(b.Values) > 0
			for _, s := range b.Values {
				if _, err := strconv.ParseInt(s, 10, 64); err != nil {
					b.Int = false
				}
			}
		case yaml.MappingNode:
			var from, to *int64
			bad := false
			p.fields(v, what, []string{"from", "to"}, func(key string, _, w *yaml.Node) {
				x, err := strconv.ParseInt(w.Value, 10, 64)
				if w.Kind != yaml.ScalarNode || err != nil {
					p.r.errorf(pos(w), "%s %s must be a whole number, not %s", what, key, kindName(w))
					bad = true
					return
				}
				if key == "from" {
					from = &x
				} else {
					to = &x
				}
			})
			if bad {
				return
			}
			if from == nil || to == nil {
				p.r.errorf(pos(v), "%s: a range needs from and to (both included)", what)
				return
			}
			if *to < *from || *to-*from >= MaxFanOut {
				p.r.errorf(pos(v), "%s: the range %d to %d must run upwards over at most %d values", what, *from, *to, MaxFanOut)
				return
			}
			for x := *from; x <= *to; x++ {
				b.Values = append(b.Values, strconv.FormatInt(x, 10))
			}
			b.Int = true
		default:
			p.r.errorf(pos(v), "%s must be a list of values or a range { from: N, to: M }, not %s", what, kindName(v))
			return
		}
		if len(b.Values) == 0 {
			return
		}
		if total *= len(b.Values); total > MaxFanOut {
			p.r.errorf(pos(k), "buckets: %d partitions per parameter set, more than %d", total, MaxFanOut)
		}
	})
}

// bucket finds a bucket by name.
func (ap *AccessPattern) bucket(name string) *Bucket {
	for _, b := range ap.Buckets {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// checkBuckets checks that each bucket is used in the pk, where it picks
// the partition, and is not also a parameter.
func (p *parser) checkBuckets(ap *AccessPattern) {
	for _, b := range ap.Buckets {
		if contains(ap.ParamNames(), b.Name) {
			p.r.errorf(b.Pos, "access pattern %s: bucket %s is also a parameter: name one of them otherwise", ap.Name, b.Name)
			continue
		}
		used := false
		if ap.PK != nil {
			for _, part := range ap.PK.Placeholders() {
				used = used || part.Column == b.Name && len(part.Path) == 0
			}
		}
		if !used && ap.PK != nil {
			p.r.errorf(b.Pos, "access pattern %s: bucket %s is not in the pk %q: write {%s} where the partition key holds it", ap.Name, b.Name, ap.PK.Raw, b.Name)
		}
	}
}

// FanOut lists every combination of the buckets' values, the first
// bucket outermost: one map per partition, by bucket name. A pattern
// without buckets has one empty combination.
func (ap *AccessPattern) FanOut() []map[string]string {
	out := []map[string]string{{}}
	for _, b := range ap.Buckets {
		var next []map[string]string
		for _, prev := range out {
			for _, v := range b.Values {
				c := make(map[string]string, len(prev)+1)
				for k, x := range prev {
					c[k] = x
				}
				c[b.Name] = v
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// BucketText describes a pattern's buckets for messages and docs:
// "year in 2024..2025; region in EU, US".
func (ap *AccessPattern) BucketText() string {
	var parts []string
	for _, b := range ap.Buckets {
		vals := strings.Join(b.Values, ", ")
		if b.Int && len(b.Values) > 2 {
			first, _ := strconv.ParseInt(b.Values[0], 10, 64)
			last, _ := strconv.ParseInt(b.Values[len(b.Values)-1], 10, 64)
			if last-first == int64(len(b.Values)-1) {
				vals = fmt.Sprintf("%s..%s", b.Values[0], b.Values[len(b.Values)-1])
			}
		}
		parts = append(parts, b.Name+" in "+vals)
	}
	return strings.Join(parts, "; ")
}
