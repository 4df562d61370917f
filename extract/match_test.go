package extract_test

import (
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
)

// TestMatchReadsByKeySet reads rows by a set of keys given as text, in a
// table whose name needs quoting: the rows found carry the index of the
// key they matched; keys without a row, and NULL, match nothing.
func TestMatchReadsByKeySet(t *testing.T) {
	_, snap, cat := setup(t)
	tb := cat.Lookup("public", `Odd "Table"`)
	str := func(s string) *string { return &s }
	q := extract.Query{Schema: "public", Table: tb.Name, Columns: tb.Columns[:3], OrderBy: []string{"id"},
		Match: &extract.Match{Ref: -1, Columns: tb.Columns[:1], Values: [][]*string{{str("2")}, {str("99")}, {nil}, {str("1")}}}}
	var got [][2]any
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Values) != q.Width() {
			t.Fatalf("row of %d values, want %d", len(r.Values), q.Width())
		}
		got = append(got, [2]any{r.Values[0], r.Values[len(r.Values)-1]})
	}
	want := [][2]any{{int64(1), int64(3)}, {int64(2), int64(0)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows (id, matched key index) %v, want %v", got, want)
	}

	// A key of a joined relation, of another type: the child rows of
	// parent 1 found through the parent's "n" value.
	child := cat.Lookup("public", "child")
	q = extract.Query{Schema: "public", Table: "child", Columns: child.Columns[:1], OrderBy: []string{"id"},
		Joins: []extract.Join{{Schema: "public", Table: tb.Name, On: []extract.JoinOn{{Column: "id", Ref: -1, RefColumn: "parent"}}}},
		Match: &extract.Match{Ref: 0, Columns: []mapping.Column{*tb.Column("n2")}, Values: [][]*string{{str("19.9")}}}}
	var ids []any
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Values[0])
	}
	if !reflect.DeepEqual(ids, []any{int64(10), int64(11)}) {
		t.Errorf("children of the parent with n2 = 19.9: %v", ids)
	}
}

// TestValuesDecodeAsRowsRead: every column's value in PostgreSQL's text
// output form (what logical replication sends) decodes, through Values,
// to exactly what Rows reads from the column.
func TestValuesDecodeAsRowsRead(t *testing.T) {
	conn, snap, cat := setup(t)
	tb := cat.Lookup("public", `Odd "Table"`)
	q := extract.Query{Schema: "public", Table: tb.Name, Columns: tb.Columns, OrderBy: []string{"id"}}
	var want []extract.Row
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	// The output functions' text, in the snapshot's session settings.
	res := conn.PgConn().ExecParams(t.Context(), `SELECT * FROM "Odd ""Table""" ORDER BY id`, nil, nil, nil, []int16{pgtype.TextFormatCode}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var tuples [][]*string
	for _, raw := range res.Rows {
		tuple := make([]*string, len(raw))
		for i, v := range raw {
			if v != nil {
				s := string(v)
				tuple[i] = &s
			}
		}
		tuples = append(tuples, tuple)
	}
	i := 0
	for r, err := range extract.Values(t.Context(), snap, tb.Columns, tuples) {
		if err != nil {
			t.Fatal(err)
		}
		for k, c := range tb.Columns {
			if !sameValue(r.Values[k], want[i].Values[k]) {
				t.Errorf("row %d column %s: Values gives %#v, Rows %#v (text %v)", i, c.Name, r.Values[k], want[i].Values[k], deref(tuples[i][k]))
			}
		}
		i++
	}
	if i != len(want) {
		t.Errorf("%d rows decoded, want %d", i, len(want))
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// sameValue is reflect.DeepEqual, except that NaN equals NaN.
func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok && x != x {
		y, ok := b.(float64)
		return ok && y != y
	}
	if x, ok := a.(float32); ok && x != x {
		y, ok := b.(float32)
		return ok && y != y
	}
	return reflect.DeepEqual(a, b)
}
