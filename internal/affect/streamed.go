package affect

import (
	"slices"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Old key columns of any source's rows decode from the stream too
// (keyRow), where its text is exact: no query types them.
//
// A source with neither joins nor embeds renders each item from its own
// row alone: when the stream sent the whole row in a form that decodes
// exactly (extract.StreamDecodable), the row is rendered from the stream
// as the change left it, and not read back. A round of such changes reads
// nothing from the source. A row the stream did not send whole (an
// unchanged TOASTed value), or with a column of a type whose stream text
// is not exact, is read back as for every other source; and a row that is
// read back in a round is rendered only from what was read, which is at
// least as new as any of the round's changes.

// streamedRows are rows by row key, in the order first seen.
type streamedRows struct {
	index map[string]int
	list  []streamedRow
}

// streamedRow is the last version of a row in a round: nil when a change
// took the row away from its key.
type streamedRow struct {
	key string
	row *extract.Row
}

func (s *streamedRows) set(key []*string, row *extract.Row) {
	k := tupleKey(key)
	if i, ok := s.index[k]; ok {
		s.list[i].row = row
		return
	}
	s.index[k] = len(s.list)
	s.list = append(s.list, streamedRow{key: k, row: row})
}

// all is the rows in order; none for a nil set.
func (s *streamedRows) all() []streamedRow {
	if s == nil {
		return nil
	}
	return s.list
}

func rowsOf(m map[*transform.Source]*streamedRows, src *transform.Source) *streamedRows {
	s := m[src]
	if s == nil {
		s = &streamedRows{index: map[string]int{}}
		m[src] = s
	}
	return s
}

// layoutKey and layout: where a source's columns are in a relation as
// the stream describes it, and whether all of them decode exactly.
type layoutKey struct {
	rel *replicate.Relation
	src *transform.Source
}

type layout struct {
	idx   []int // per column of the source's query; -1 when the relation lacks it
	exact bool  // every column is there, of a type whose stream text is exact
}

func (b *Batch) layout(rel *replicate.Relation, src *transform.Source) *layout {
	k := layoutKey{rel, src}
	if l := b.layouts[k]; l != nil {
		return l
	}
	cols := src.Query.Columns
	l := &layout{idx: make([]int, len(cols)), exact: true}
	for i, c := range cols {
		l.idx[i] = rel.Column(c.Name)
		if l.idx[i] < 0 || !extract.StreamDecodable(c, rel.Columns[l.idx[i]].TypeOID) {
			l.exact = false
		}
	}
	b.layouts[k] = l
	return l
}

// streamRow is the row a change leaves, in the source query's layout,
// decoded from the stream; false when the stream did not send all of it
// or a value does not decode.
func streamRow(c *replicate.Change, cols []mapping.Column, l *layout) (*extract.Row, bool) {
	if !l.exact {
		return nil, false
	}
	vals := make([]any, len(cols))
	for i, col := range cols {
		x, ok := streamValue(col, c.NewValue, l.idx[i])
		if !ok {
			return nil, false
		}
		vals[i] = x
	}
	return &extract.Row{Values: vals}, true
}

// streamValue is column j of a row version as col's value (nil for
// NULL); false when the version lacks it or its text does not decode:
// then the row is read back, and the query's value is the truth.
func streamValue(col mapping.Column, version func(int) (replicate.Value, bool), j int) (any, bool) {
	v, ok := version(j)
	if !ok {
		return nil, false
	}
	if v.Null {
		return nil, true
	}
	x, err := extract.StreamValue(col, v.Text)
	return x, err == nil
}

// keyRow is a row holding only the given columns of one version of a
// changed row, decoded from the stream, in the source query's layout;
// false when one of them is missing or does not decode exactly.
func keyRow(c *replicate.Change, src *transform.Source, cols []mapping.Column, version func(int) (replicate.Value, bool)) (*extract.Row, bool) {
	row := &extract.Row{Values: make([]any, src.Query.Width())}
	for _, col := range cols {
		j := c.Rel.Column(col.Name)
		pos := slices.IndexFunc(src.Query.Columns, func(qc mapping.Column) bool { return qc.Name == col.Name })
		if j < 0 || pos < 0 || !extract.StreamDecodable(col, c.Rel.Columns[j].TypeOID) {
			return nil, false
		}
		x, ok := streamValue(col, version, j)
		if !ok {
			return nil, false
		}
		row.Values[pos] = x
	}
	return row, true
}

// addStreamed records a change of a row of a streamed source: the row it
// leaves (rendered from the stream, or read back), and the key columns of
// its versions (addOld).
func (b *Batch) addStreamed(c *replicate.Change, ci int, e *edge, versions []func(int) (replicate.Value, bool)) error {
	src := e.src
	found := false
	// The old version first: the row leaves its old key; the new one may
	// bring it back to the same key.
	if c.Old != nil {
		t, ok, err := tuple(c, e.cols, c.OldValue)
		if err != nil {
			return err
		}
		if ok && !slices.Contains(t, nil) {
			found = true
			b.count(ci, e.via, int64(len(src.Entities)))
			rowsOf(b.streamed, src).set(permute(t, e.direct), nil)
		}
	}
	if c.New != nil {
		t, ok, err := tuple(c, e.cols, c.NewValue)
		if err != nil {
			return err
		}
		if ok && !slices.Contains(t, nil) {
			found = true
			b.count(ci, e.via, int64(len(src.Entities)))
			key := permute(t, e.direct)
			if row, ok := streamRow(c, src.Query.Columns, b.layout(c.Rel, src)); ok {
				rowsOf(b.streamed, src).set(key, row)
			} else {
				b.set(b.rows, src).add(key, ci)
			}
		}
	}
	if !found {
		return errNoKey(b.changes[ci].desc)
	}
	if c.Op != replicate.Insert {
		b.addOld(c, ci, src, versions)
	}
	return nil
}
