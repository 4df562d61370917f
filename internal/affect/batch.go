package affect

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Batch collects changes and turns them into the writes that make the
// items match the source again. Puts carry the full current items, so
// that applying a batch twice, or after later changes, does no harm.
type Batch struct {
	g       *Graph
	changes []changeRef
	// rows are, per source, the keys of the rows to read and render.
	rows map[*transform.Source]*tuples
	// lookups are, per edge, the values that select affected rows.
	lookups map[*edge]*tuples
	// old are, per source, row versions (KeyColumns and key) whose items
	// may have to go.
	old map[*transform.Source]*tuples
	// checked remembers relations whose identity was checked.
	checked map[*replicate.Relation]error
	// streamed are, per source rendered from the stream (see
	// Graph.streamed), the rows the changes leave, by row key, as the
	// stream sent them; oldRows the typed key columns of row versions
	// whose items may have to go, decoded from the stream (old holds those
	// a query types).
	streamed map[*transform.Source]*streamedRows
	oldRows  map[*transform.Source]*streamedRows
	// layouts remember, per relation and source, where the source's
	// columns are in the relation's and whether the stream's text of
	// each decodes exactly.
	layouts map[layoutKey]*layout
}

// changeRef is a change as the batch remembers it: for messages and its
// fan-out count.
type changeRef struct {
	desc   string
	fanout int64
	paths  map[string]int64
}

// NewBatch starts an empty batch.
func (g *Graph) NewBatch() *Batch {
	return &Batch{g: g, rows: map[*transform.Source]*tuples{}, lookups: map[*edge]*tuples{},
		old: map[*transform.Source]*tuples{}, checked: map[*replicate.Relation]error{},
		streamed: map[*transform.Source]*streamedRows{}, oldRows: map[*transform.Source]*streamedRows{}, layouts: map[layoutKey]*layout{}}
}

// Len is the number of changes added.
func (b *Batch) Len() int { return len(b.changes) }

// Add records a change: the rows whose items it affects directly, the
// lookups that find the rest, and the versions whose items may have to be
// deleted. It fails when the stream did not send an old value the change
// needs (the table's replica identity lacks it): the error says how to
// fix that.
func (b *Batch) Add(c *replicate.Change) error {
	edges := b.g.byTable[c.Rel.Table]
	if len(edges) == 0 {
		return nil // a published table no entity reads
	}
	if err := b.checkIdentity(c.Rel); err != nil {
		return err
	}
	ci := len(b.changes)
	b.changes = append(b.changes, changeRef{desc: describe(c, b.g.rowKey[c.Rel.Table])})
	// The row as it is after the change and as it was before, as far as
	// the stream sent them.
	var versions []func(int) (replicate.Value, bool)
	if c.New != nil {
		versions = append(versions, c.NewValue)
	}
	if c.Old != nil {
		versions = append(versions, c.OldValue)
	}
	for _, e := range edges {
		if e.kind == ownEdge && b.g.streamed[e.src] {
			if err := b.addStreamed(c, ci, e, versions); err != nil {
				return err
			}
			continue
		}
		found := false
		for _, version := range versions {
			t, ok, err := tuple(c, e.cols, version)
			if err != nil {
				return err
			}
			if !ok || slices.Contains(t, nil) {
				continue // not sent; or NULL, which joins nothing
			}
			found = true
			if e.direct != nil {
				b.set(b.rows, e.src).add(permute(t, e.direct), ci)
				b.count(ci, e.via, int64(len(e.src.Entities)))
				continue
			}
			lk := b.lookups[e]
			if lk == nil {
				lk = newTuples()
				b.lookups[e] = lk
			}
			lk.add(t, ci)
		}
		if e.kind != ownEdge {
			continue
		}
		if !found {
			return errNoKey(b.changes[ci].desc)
		}
		if c.Op != replicate.Insert {
			b.addOld(c, ci, e.src, versions)
		}
	}
	return nil
}

// addOld records the key columns of a changed row's versions, whose items
// may have to go: from its old version, and from the new one in case the
// row no longer produces them. They are decoded from the stream where its
// text is exact, else typed by a query in Resolve.
func (b *Batch) addOld(c *replicate.Change, ci int, src *transform.Source, versions []func(int) (replicate.Value, bool)) {
	keyCols := b.g.keyCols[src]
	cols := columnNames(keyCols)
	for _, version := range versions {
		t, ok, err := tuple(c, cols, version)
		if err != nil || !ok {
			continue
		}
		if row, ok := keyRow(c, src, keyCols, version); ok {
			rowsOf(b.oldRows, src).set(t, row)
		} else {
			b.set(b.old, src).add(t, ci)
		}
	}
}

func errNoKey(desc string) error {
	return fmt.Errorf("affect: %s: the stream sent no key of the row", desc)
}

func (b *Batch) set(m map[*transform.Source]*tuples, src *transform.Source) *tuples {
	t := m[src]
	if t == nil {
		t = newTuples()
		m[src] = t
	}
	return t
}

// checkIdentity fails when the relation's replica identity, as the stream
// describes it, lacks columns old versions must carry: the table was
// altered after the stream started.
func (b *Batch) checkIdentity(rel *replicate.Relation) error {
	if err, ok := b.checked[rel]; ok {
		return err
	}
	var err error
	if r, ok := b.g.required[rel.Table]; ok && rel.Identity != 'f' {
		id := extract.Identity{Mode: extract.IdentityMode(string(rel.Identity))}
		for _, c := range rel.Columns {
			if c.Key {
				id.Columns = append(id.Columns, c.Name)
			}
		}
		err = r.Check(id)
	}
	b.checked[rel] = err
	return err
}

// tuple picks the named columns of one version of a changed row. ok is
// false when the version lacks one of them.
func tuple(c *replicate.Change, cols []string, value func(int) (replicate.Value, bool)) (t []*string, ok bool, err error) {
	t = make([]*string, len(cols))
	for i, name := range cols {
		idx := c.Rel.Column(name)
		if idx < 0 {
			return nil, false, fmt.Errorf("affect: table %s has no column %s any more; restart the sync after changing the schema", c.Rel.Table, name)
		}
		v, known := value(idx)
		if !known {
			return nil, false, nil
		}
		if !v.Null {
			s := v.Text
			t[i] = &s
		}
	}
	return t, true, nil
}

func permute(t []*string, pos []int) []*string {
	out := make([]*string, len(pos))
	for i, p := range pos {
		out[i] = t[p]
	}
	return out
}

func columnNames(cols []mapping.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// describe names a change for messages by the row's key columns (those
// of the replica identity when key is empty): "update of
// public.addresses (address_id=17)".
func describe(c *replicate.Change, key []string) string {
	var parts []string
	for i, col := range c.Rel.Columns {
		if len(key) > 0 && !slices.Contains(key, col.Name) || len(key) == 0 && !col.Key {
			continue
		}
		v, ok := c.NewValue(i)
		if !ok {
			v, ok = c.OldValue(i)
		}
		switch {
		case !ok:
			parts = append(parts, col.Name+"=?")
		case v.Null:
			parts = append(parts, col.Name+"=NULL")
		default:
			parts = append(parts, col.Name+"="+v.Text)
		}
	}
	return fmt.Sprintf("%s of %s (%s)", c.Op, c.Rel.Table, strings.Join(parts, ", "))
}

// tuples is a set of value tuples, each with the changes that asked for
// it.
type tuples struct {
	index  map[string]int
	values [][]*string
	owners [][]int
}

func newTuples() *tuples { return &tuples{index: map[string]int{}} }

func (s *tuples) has(key string) bool {
	_, ok := s.index[key]
	return ok
}

func (s *tuples) add(t []*string, owner int) {
	k := tupleKey(t)
	i, ok := s.index[k]
	if !ok {
		i = len(s.values)
		s.index[k] = i
		s.values = append(s.values, t)
		s.owners = append(s.owners, nil)
	}
	if n := len(s.owners[i]); n == 0 || s.owners[i][n-1] != owner {
		s.owners[i] = append(s.owners[i], owner)
	}
}

func tupleKey(t []*string) string {
	var b strings.Builder
	for _, v := range t {
		if v == nil {
			b.WriteString("\x00")
			continue
		}
		b.WriteString(strconv.Itoa(len(*v)))
		b.WriteByte(':')
		b.WriteString(*v)
	}
	return b.String()
}

// FanoutError is a change that affects more items than the bound allows.
type FanoutError struct {
	Change string
	Items  int64 // at least; the lookup stopped once over Max
	Max    int
	Paths  map[string]int64 // items by the way the change reaches them
}

func (e *FanoutError) Error() string {
	var paths []string
	for p, n := range e.Paths {
		paths = append(paths, fmt.Sprintf("%s: %d", p, n))
	}
	slices.Sort(paths)
	return fmt.Sprintf("%s affects more than %d items (at least %d: %s)", e.Change, e.Max, e.Items, strings.Join(paths, "; "))
}

// Fanout counts the items the changes of a batch affect.
type Fanout struct {
	Changes int64 // changes counted
	Items   int64 // items affected, summed over the changes
	// Max is the largest number of items one change affected, and
	// MaxChange that change.
	Max       int64
	MaxChange string
}

// Result is what a batch comes to.
type Result struct {
	// Puts are the current items of every affected row, whole.
	Puts []transform.Item
	// Deletes are items (key attributes only) the affected rows had and
	// no longer produce.
	Deletes []transform.Item
	Fanout  Fanout
}

// Querier runs queries; pgx.Tx fits. Resolve must run inside one snapshot
// (a repeatable-read transaction) so that the items agree with each other.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// NeedsRead says whether Resolve reads the source: false when every
// change is rendered from the stream, and Resolve may be given no
// Querier.
func (b *Batch) NeedsRead() bool {
	return len(b.rows) > 0 || len(b.lookups) > 0 || len(b.old) > 0
}

// Resolve finds every affected row, reads it as it is now and builds its
// items with the plan. maxFanout > 0 bounds the items one change may
// affect: a change over it fails the batch with a *FanoutError. A row that
// cannot be transformed fails it with its *transform.RowError.
func (b *Batch) Resolve(ctx context.Context, q Querier, maxFanout int) (*Result, error) {
	res := &Result{}
	if err := b.lookup(ctx, q, maxFanout); err != nil {
		return nil, err
	}
	puts := map[string]transform.Item{}
	var order []string
	var gone []transform.Item
	render := func(src *transform.Source, row extract.Row) error {
		items, errs := src.Apply(row)
		if len(errs) > 0 {
			return errs[0]
		}
		for _, it := range items {
			k := itemKey(b.g.plan.Mapping, it)
			if _, dup := puts[k]; !dup {
				order = append(order, k)
			}
			puts[k] = it
		}
		// An entity whose where clause no longer accepts the row has an
		// item to delete, at the key the row gives it.
		keys, _ := src.ItemKeys(row)
		gone = append(gone, keys...)
		return nil
	}
	for _, src := range b.g.plan.Sources {
		rows := b.rows[src]
		if rows != nil {
			qry := src.Query
			qry.Match = &extract.Match{Ref: -1, Columns: b.g.key[src], Values: rows.values}
			for row, err := range extract.Rows(ctx, q, qry) {
				if err != nil {
					return nil, err
				}
				if err := render(src, row); err != nil {
					return nil, err
				}
			}
		}
		// Rows from the stream, but for those read back: what was read is
		// at least as new.
		for _, r := range b.streamed[src].all() {
			if r.row == nil || rows != nil && rows.has(r.key) {
				continue
			}
			if err := render(src, *r.row); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range order {
		res.Puts = append(res.Puts, puts[k])
	}
	dels := map[string]bool{}
	del := func(it transform.Item) {
		k := itemKey(b.g.plan.Mapping, it)
		if _, put := puts[k]; !put && !dels[k] {
			dels[k] = true
			res.Deletes = append(res.Deletes, it)
		}
	}
	for _, it := range gone {
		del(it)
	}
	for _, src := range b.g.plan.Sources {
		for _, r := range b.oldRows[src].all() {
			keys, _ := src.ItemKeys(*r.row) // a key that cannot be built named no item
			for _, it := range keys {
				del(it)
			}
		}
		old := b.old[src]
		if old == nil {
			continue
		}
		cols := b.g.keyCols[src]
		for vals, err := range extract.Values(ctx, q, cols, old.values) {
			if err != nil {
				return nil, err
			}
			row := extract.Row{Values: make([]any, src.Query.Width())}
			for k, c := range cols {
				row.Values[slices.IndexFunc(src.Query.Columns, func(qc mapping.Column) bool { return qc.Name == c.Name })] = vals.Values[k]
			}
			keys, _ := src.ItemKeys(row) // a key that cannot be built named no item
			for _, it := range keys {
				del(it)
			}
		}
	}
	res.Fanout = b.fanout()
	if maxFanout > 0 && res.Fanout.Max > int64(maxFanout) {
		for _, c := range b.changes {
			if c.fanout > int64(maxFanout) {
				return nil, &FanoutError{Change: c.desc, Items: c.fanout, Max: maxFanout, Paths: c.paths}
			}
		}
	}
	return res, nil
}

// lookup finds the rows each lookup value selects, adds them to the rows
// to read and counts them against the changes that asked.
func (b *Batch) lookup(ctx context.Context, q Querier, maxFanout int) error {
	for _, edges := range b.g.byTable {
		for _, e := range edges {
			lk := b.lookups[e]
			if lk == nil {
				continue
			}
			src := e.src
			qry := extract.Query{Schema: src.Query.Schema, Table: src.Query.Table}
			for _, k := range src.Query.OrderBy {
				qry.Columns = append(qry.Columns, mapping.Column{Name: k, Type: keyText})
			}
			for _, j := range src.Query.Joins[:e.joins] {
				j.Columns = nil
				qry.Joins = append(qry.Joins, j)
			}
			qry.Match = &extract.Match{Ref: e.ref, Columns: e.refCols, Values: lk.values}
			if maxFanout > 0 {
				// Over max·n rows, one value has more than max of them.
				qry.Limit = maxFanout*len(lk.values) + 1
			}
			counts := make([]int64, len(lk.values))
			n := 0
			for row, err := range extract.Rows(ctx, q, qry) {
				if err != nil {
					return err
				}
				n++
				key := make([]*string, len(src.Query.OrderBy))
				for i := range key {
					s, _ := row.Values[i].(string)
					key[i] = &s
				}
				vi := int(row.Values[len(row.Values)-1].(int64))
				counts[vi]++
				for _, ci := range lk.owners[vi] {
					b.set(b.rows, src).add(key, ci)
				}
			}
			for vi, c := range counts {
				for _, ci := range lk.owners[vi] {
					b.count(ci, e.via, c*int64(len(src.Entities)))
				}
			}
			if maxFanout > 0 && n == qry.Limit {
				for vi, c := range counts {
					if items := c * int64(len(src.Entities)); items > int64(maxFanout) {
						ch := b.changes[lk.owners[vi][0]]
						return &FanoutError{Change: ch.desc, Items: items, Max: maxFanout, Paths: ch.paths}
					}
				}
			}
		}
	}
	return nil
}

func (b *Batch) count(ci int, path string, items int64) {
	c := &b.changes[ci]
	c.fanout += items
	if c.paths == nil {
		c.paths = map[string]int64{}
	}
	c.paths[path] += items
}

func (b *Batch) fanout() Fanout {
	var f Fanout
	for _, c := range b.changes {
		f.Changes++
		f.Items += c.fanout
		if c.fanout > f.Max {
			f.Max, f.MaxChange = c.fanout, c.desc
		}
	}
	return f
}

// itemKey is an item's primary key as one string: per key attribute its
// type, length and value, so that two keys are equal only when their
// attributes are. Both sides of every comparison are rendered by the same
// plan, so no number needs a canonical form here. (It was a JSON encoding
// once: the largest CPU cost of a sync's round.)
func itemKey(m *mapping.Mapping, it transform.Item) string {
	b := make([]byte, 0, 64)
	for _, name := range []string{m.PartitionKey, m.SortKey} {
		if name == "" {
			continue
		}
		switch v := it.Attrs[name].(type) {
		case *types.AttributeValueMemberS:
			b = appendKeyPart(b, 'S', v.Value)
		case *types.AttributeValueMemberN:
			b = appendKeyPart(b, 'N', v.Value)
		case *types.AttributeValueMemberB:
			b = appendKeyPart(b, 'B', v.Value)
		default:
			b = appendKeyPart(b, '-', "") // missing or not a key type: load rejects the item
		}
	}
	return string(b)
}

func appendKeyPart[T string | []byte](b []byte, tag byte, v T) []byte {
	b = append(b, tag)
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, ':')
	return append(b, v...)
}
