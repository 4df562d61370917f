package extract_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
)

// Each decodes any query's result exactly as Rows decodes a table read:
// the same values for every type of the types table, with a named
// parameter, inside the snapshot.
func TestEachDecodesLikeRows(t *testing.T) {
	_, snap, cat := setup(t)
	tb := cat.Lookup("public", `Odd "Table"`)
	q := extract.Query{Schema: "public", Table: tb.Name, Columns: tb.Columns, OrderBy: []string{"id"}}
	var want []extract.Row
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	var got [][]any
	var cols []extract.ResultColumn
	err := extract.Each(t.Context(), snap, `SELECT * FROM "Odd ""Table""" WHERE id >= @min ORDER BY id`, []any{pgx.NamedArgs{"min": 1}},
		func(c []extract.ResultColumn, vals []any) error {
			cols = c
			got = append(got, vals)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j, c := range tb.Columns {
			if c.Name == "m" {
				continue // money: table reads cast it to numeric; a query casts it itself
			}
			g, w := got[i][j], want[i].Values[j]
			if f, ok := w.(float32); ok && math.IsNaN(float64(f)) {
				if gf, ok := g.(float32); !ok || !math.IsNaN(float64(gf)) {
					t.Errorf("row %d %s = %#v, want NaN", i+1, c.Name, g)
				}
				continue
			}
			if f, ok := w.(float64); ok && math.IsNaN(f) {
				if gf, ok := g.(float64); !ok || !math.IsNaN(gf) {
					t.Errorf("row %d %s = %#v, want NaN", i+1, c.Name, g)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("row %d %s (%s as %s) = %#v, want %#v", i+1, c.Name, c.Type.Name, cols[j].Type.Kind, g, w)
			}
		}
	}
	// A read-only snapshot refuses writes, whatever the caller's SQL says.
	err = extract.Each(t.Context(), snap, `DELETE FROM child RETURNING id`, nil, func([]extract.ResultColumn, []any) error { return nil })
	if err == nil {
		t.Error("a DELETE ran inside the read-only snapshot")
	}
}
