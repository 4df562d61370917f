package prove

import (
	"container/heap"
	"context"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/fanout"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// paramSet is one set of parameter values, by name.
type paramSet struct {
	names   []string
	vals    []any
	types   []pgkind.Type
	missing bool // made up to not exist in the source
}

func (s paramSet) value(name string) (any, pgkind.Type, bool) {
	for i, n := range s.names {
		if n == name {
			return s.vals[i], s.types[i], true
		}
	}
	return nil, pgkind.Type{}, false
}

func (s paramSet) report() []Param {
	out := make([]Param, len(s.names))
	for i, n := range s.names {
		out[i] = Param{Name: n, Value: valueText(s.vals[i])}
	}
	return out
}

// namedArgs passes the set to the pattern's SQL as @name parameters.
func (s paramSet) namedArgs() pgx.NamedArgs {
	args := pgx.NamedArgs{}
	for i, n := range s.names {
		args[n] = argValue(s.vals[i])
	}
	return args
}

// argValue turns a decoded value back into a query argument.
func argValue(v any) any {
	switch v := v.(type) {
	case extract.Decimal:
		return string(v)
	case extract.JSON:
		return string(v)
	case extract.Infinity:
		if v.Sign < 0 {
			return "-infinity"
		}
		return "infinity"
	}
	return v
}

// valueText is a value as reports print it.
func valueText(v any) string {
	switch v := widen(v).(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case extract.Decimal:
		return string(v)
	case extract.JSON:
		return string(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case extract.Infinity:
		return argValue(v).(string)
	case []byte:
		return base64.StdEncoding.EncodeToString(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// draw is the parameter sets of one pattern.
type draw struct {
	sets    []paramSet
	domain  int64
	sampled bool
}

// sampler keeps the k entries with the smallest seeded hash: a sample
// that depends on the seed and the data, not on the order rows arrive in.
type sampler struct {
	k    int
	seed uint64
	h    sampleHeap
}

type sampleEntry struct {
	hash uint64
	text string
	vals []any
}

// sampleHeap is a max-heap on (hash, text): the root is dropped first.
type sampleHeap []sampleEntry

func (h sampleHeap) Len() int { return len(h) }
func (h sampleHeap) Less(i, j int) bool {
	if h[i].hash != h[j].hash {
		return h[i].hash > h[j].hash
	}
	return h[i].text > h[j].text
}
func (h sampleHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)   { *h = append(*h, x.(sampleEntry)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *sampler) offer(vals []any) {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(valueText(v))
	}
	text := b.String()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", s.seed, text)
	e := sampleEntry{hash: h.Sum64(), text: text, vals: vals}
	if s.h.Len() < s.k {
		heap.Push(&s.h, e)
		return
	}
	top := s.h[0]
	if e.hash < top.hash || e.hash == top.hash && e.text < top.text {
		s.h[0] = e
		heap.Fix(&s.h, 0)
	}
}

// sorted returns the kept entries by hash: the sample's order.
func (s *sampler) sorted() [][]any {
	out := make([][]any, s.h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&s.h).(sampleEntry).vals
	}
	return out
}

// extremes tracks the largest value of each ordered kind, to make up
// values that do not exist.
type extremes struct {
	num  *big.Rat
	time time.Time
	seen bool
}

func (x *extremes) add(v any) {
	switch v := widen(v).(type) {
	case int64:
		x.addNum(new(big.Rat).SetInt64(v))
	case extract.Decimal:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			x.addNum(r)
		}
	case float64:
		if r := new(big.Rat); r.SetFloat64(v) != nil {
			x.addNum(r)
		}
	case time.Time:
		if !x.seen || v.After(x.time) {
			x.time = v
		}
		x.seen = true
	}
}

func (x *extremes) addNum(r *big.Rat) {
	if x.num == nil || r.Cmp(x.num) > 0 {
		x.num = r
	}
}

// drawParams draws the pattern's parameter sets from the source: every
// one when there are at most Samples, else a seeded sample of Samples.
func (p *prover) drawParams(ctx context.Context) (*draw, error) {
	ap := p.ap
	if ap.ParamsSQL != "" {
		return p.drawRows(ctx)
	}
	if len(ap.Params) == 0 {
		return &draw{sets: []paramSet{{}}, domain: 1}, nil
	}
	type column struct {
		vals   [][]any
		typ    pgkind.Type
		domain int64
		ext    extremes
	}
	cols := make([]*column, len(ap.Params))
	for i, prm := range ap.Params {
		c := &column{}
		s := &sampler{k: p.cfg.Samples, seed: p.cfg.Seed + uint64(i)}
		id := pgx.Identifier{prm.Column}.Sanitize()
		sql := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL", id, pgx.Identifier{prm.Schema, prm.Table}.Sanitize(), id)
		err := extract.Each(ctx, p.db, sql, nil, func(rc []extract.ResultColumn, vals []any) error {
			c.typ = rc[0].Type
			c.domain++
			c.ext.add(vals[0])
			s.offer(vals)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("parameter %s from %s.%s.%s: %w", prm.Name, prm.Schema, prm.Table, prm.Column, err)
		}
		c.vals = s.sorted()
		if c.typ.Kind == 0 && c.typ.Name == "" {
			if t := p.cfg.Catalog.Lookup(prm.Schema, prm.Table); t != nil && t.Column(prm.Column) != nil {
				c.typ = t.Column(prm.Column).Type
			}
		}
		cols[i] = c
	}
	d := &draw{domain: 1}
	names := ap.ParamNames()
	types := make([]pgkind.Type, len(cols))
	for i, c := range cols {
		types[i] = c.typ
		d.domain = saturatingMul(d.domain, c.domain)
	}
	if d.domain == 0 {
		return d, nil
	}
	if d.domain <= int64(p.cfg.Samples) {
		// Small: every combination.
		var walk func(i int, vals []any)
		walk = func(i int, vals []any) {
			if i == len(cols) {
				d.sets = append(d.sets, paramSet{names: names, vals: append([]any(nil), vals...), types: types})
				return
			}
			for _, v := range cols[i].vals {
				walk(i+1, append(vals, v[0]))
			}
		}
		walk(0, nil)
	} else {
		d.sampled = true
		rng := rand.New(rand.NewPCG(p.cfg.Seed, uint64(len(names))))
		for range p.cfg.Samples {
			vals := make([]any, len(cols))
			for i, c := range cols {
				vals[i] = c.vals[rng.IntN(len(c.vals))][0]
			}
			d.sets = append(d.sets, paramSet{names: names, vals: vals, types: types})
		}
	}
	ext := make([]extremes, len(cols))
	for i, c := range cols {
		ext[i] = c.ext
	}
	d.sets = append(d.sets, missingSets(d.sets, ext, p.cfg.Missing)...)
	return d, nil
}

// drawRows draws parameter sets from the rows of the pattern's params SQL.
func (p *prover) drawRows(ctx context.Context) (*draw, error) {
	d := &draw{}
	s := &sampler{k: p.cfg.Samples, seed: p.cfg.Seed}
	var names []string
	var types []pgkind.Type
	var ext []extremes
	err := extract.Each(ctx, p.db, p.ap.ParamsSQL, nil, func(rc []extract.ResultColumn, vals []any) error {
		if names == nil {
			for _, c := range rc {
				names = append(names, c.Name)
				types = append(types, c.Type)
			}
			ext = make([]extremes, len(rc))
		}
		d.domain++
		for i, v := range vals {
			ext[i].add(v)
		}
		s.offer(vals)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for _, vals := range s.sorted() {
		d.sets = append(d.sets, paramSet{names: names, vals: vals, types: types})
	}
	d.sampled = d.domain > int64(len(d.sets))
	d.sets = append(d.sets, missingSets(d.sets, ext, p.cfg.Missing)...)
	return d, nil
}

// missingSets makes n parameter sets that the source does not have: each
// starts from a drawn set and replaces every value by one beyond the
// largest drawn (numbers, times) or one no key holds (text, uuid, bytes,
// booleans flipped).
func missingSets(sets []paramSet, ext []extremes, n int) []paramSet {
	if len(sets) == 0 || len(sets[0].names) == 0 {
		return nil
	}
	var out []paramSet
	for j := range n {
		base := sets[j%len(sets)]
		vals := make([]any, len(base.vals))
		for i, v := range base.vals {
			vals[i] = missingValue(v, base.types[i], ext[i], j)
		}
		out = append(out, paramSet{names: base.names, vals: vals, types: base.types, missing: true})
	}
	return out
}

// widen turns a real (float32) into the double nearest to the decimal
// PostgreSQL prints for it, which prints as that same decimal: prove
// compares and reports values as decimals. Other values are returned as
// they are.
func widen(v any) any {
	if f, ok := v.(float32); ok {
		d, _ := strconv.ParseFloat(transform.FloatString(float64(f), 32), 64)
		return d
	}
	return v
}

func missingValue(v any, t pgkind.Type, x extremes, j int) any {
	v = widen(v)
	beyond := func() *big.Rat {
		r := new(big.Rat).SetInt64(int64(j) + 1)
		if x.num != nil {
			r.Add(r, x.num)
		}
		return r
	}
	switch v := v.(type) {
	case int64:
		r := beyond()
		if r.IsInt() && r.Num().IsInt64() {
			return r.Num().Int64()
		}
		return v
	case extract.Decimal:
		return extract.Decimal(beyond().FloatString(0))
	case float64:
		f, _ := beyond().Float64()
		return f
	case time.Time:
		return x.time.Add(time.Duration(j+1) * 24 * time.Hour)
	case bool:
		return !v
	case []byte:
		return append(append([]byte(nil), v...), 0xff, byte(j))
	case string:
		if t.Kind == pgkind.UUID {
			return fmt.Sprintf("ffffffff-ffff-4fff-bfff-%012x", j)
		}
		return fmt.Sprintf("%szzmissing%d", v, j)
	}
	return v
}

// noParamError is a template placeholder that names no parameter of the
// set (a params query that does not return it).
type noParamError struct {
	name string
	have []string
}

func (e noParamError) Error() string {
	return fmt.Sprintf("no parameter %q (the params query returns %s)", e.name, strings.Join(e.have, ", "))
}

func saturatingMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

// keyValues gives transform.RenderKey the values of a pattern template's
// placeholders from a parameter set; shard is the shard number for
// {shard}.
func keyValues(t *mapping.Template, set paramSet, at fanout.Point) func(i int) (kv keyValue, err error) {
	return func(i int) (keyValue, error) {
		part := t.Parts[i]
		if kv, ok := at.Value(part); ok {
			return kv, nil
		}
		v, typ, ok := set.value(part.Column)
		if !ok {
			return keyValue{}, noParamError{part.Column, set.names}
		}
		return keyValue{V: v, Kind: typ.Kind}, nil
	}
}
