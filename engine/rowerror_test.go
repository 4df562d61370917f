package engine

import (
	"testing"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// A row error names each problem's column once (it once read "column f:
// column f: ..." for a row with two problems), and a double outside
// DynamoDB's range is written short, as %g writes it, not in 309 digits.
func TestRowErrorMessage(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("floats.yaml", []byte(`
table: Floats
keys: { partition: PK }
entities:
  F:
    from: f
    key: { pk: "F#{id}" }
    attributes: "*"
`))
	if err != nil {
		t.Fatal(err)
	}
	double := pgkind.Type{Name: "double precision", Kind: pgkind.Float}
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{"public.f": {Schema: "public", Name: "f",
		PrimaryKey: []string{"id"}, Unique: [][]string{{"id"}}, Columns: []mapping.Column{
			{Name: "id", Type: pgkind.Type{Name: "bigint", Kind: pgkind.Int}, NotNull: true},
			{Name: "f", Type: double}, {Name: "g", Type: double},
		}}}}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	src := plan.Sources[0]
	row := func(f, g any) extract.Row {
		vals := make([]any, len(src.Query.Columns))
		for i, c := range src.Query.Columns {
			vals[i] = map[string]any{"id": int64(1), "f": f, "g": g}[c.Name]
		}
		return extract.Row{Values: vals}
	}
	for _, tc := range []struct {
		f, g any
		want string
	}{
		{1e308, nil, "column f: attribute f: 1e+308 is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125; declare as: string to keep it exact as text)"},
		{1e308, -5e-324, "column f: attribute f: 1e+308 is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125; declare as: string to keep it exact as text); " +
			"column g: attribute g: -5e-324 is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125; declare as: string to keep it exact as text)"},
	} {
		_, errs := src.Apply(row(tc.f, tc.g))
		if len(errs) != 1 {
			t.Fatalf("%v, %v: %d row errors", tc.f, tc.g, len(errs))
		}
		if got := rowErrorMessage(errs[0]); got != tc.want {
			t.Errorf("%v, %v:\n got %s\nwant %s", tc.f, tc.g, got, tc.want)
		}
	}
}
