package transform_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

const aggregateMapping = `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "C#{customer_id}", sk: PROFILE }
    aggregate:
      orders: { count: "*", from: orders, join: { customer_id: customer_id } }
      spent: { sum: total, from: orders, join: { customer_id: customer_id }, where: "qty > 0" }
      first: { min: placed_at, from: orders, join: { customer_id: customer_id } }
      last: { latest: { id: order_id, at: { column: placed_at, as: epoch_seconds } }, order: placed_at, from: orders, join: { customer_id: customer_id } }
      lastNote: { latest: note, order: placed_at, from: orders, join: { customer_id: customer_id } }
`

func aggregateCatalog() *mapping.Catalog {
	c := func(name string, k pgkind.Kind, typ string) mapping.Column {
		return mapping.Column{Name: name, Type: pgkind.Type{Name: typ, Kind: k}, NotNull: true}
	}
	return &mapping.Catalog{Tables: map[string]*mapping.Table{
		"public.customers": {Schema: "public", Name: "customers", PrimaryKey: []string{"customer_id"}, Unique: [][]string{{"customer_id"}},
			Columns: []mapping.Column{c("customer_id", pgkind.Int, "bigint")}},
		"public.orders": {Schema: "public", Name: "orders", PrimaryKey: []string{"order_id"}, Unique: [][]string{{"order_id"}},
			Columns: []mapping.Column{c("order_id", pgkind.Int, "bigint"), c("customer_id", pgkind.Int, "bigint"),
				c("total", pgkind.Numeric, "numeric"), c("qty", pgkind.Int, "integer"),
				c("placed_at", pgkind.Timestamptz, "timestamp with time zone"), c("note", pgkind.Text, "text")}},
	}}
}

// TestAggregateItems builds items from the values extract yields for the
// aggregates (one row of one value; zero or one latest row) and pins the
// attributes: count and sum as exact numbers, min as its column is
// written, latest as a map with its conversions, absent without rows, and
// a sum DynamoDB cannot hold as a row error naming table, key and column.
func TestAggregateItems(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("m.yaml", []byte(aggregateMapping))
	if err != nil {
		t.Fatal(err)
	}
	cat := aggregateCatalog()
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	src := plan.Sources[0]
	q := src.Query
	if len(q.Columns) != 1 || len(q.Embeds) != 5 {
		t.Fatalf("query: %d columns, %d embeds; want 1, 5", len(q.Columns), len(q.Embeds))
	}
	if e := q.Embeds[3]; !e.Desc || e.Limit != 1 || len(e.OrderBy) != 2 || e.OrderBy[1] != "order_id" {
		t.Errorf("latest reads %+v; want the greatest by placed_at, then order_id, one row", e)
	}
	if e := q.Embeds[1]; e.Agg != mapping.AggSum || e.Where == nil || len(e.WhereColumns) != 1 || e.WhereColumns[0].Name != "qty" {
		t.Errorf("sum reads %+v; want a filter over qty", e)
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)
	one := func(v any) []extract.Row { return []extract.Row{{Values: []any{v}}} }
	cases := []struct {
		name  string
		vals  []any
		want  string // the item's attributes as canonical JSON
		error string
	}{
		{"no children", []any{int64(1), one(int64(0)), one(extract.Decimal("0")), one(nil), []extract.Row{}, []extract.Row{}},
			`{"PK":{"S":"C#1"},"SK":{"S":"PROFILE"},"_type":{"S":"Customer"},"orders":{"N":"0"},"spent":{"N":"0"}}`, ""},
		{"children", []any{int64(2), one(int64(3)), one(extract.Decimal("12345678901234567890123456789012345678.00")), one(at),
			[]extract.Row{{Values: []any{int64(7), at}}}, []extract.Row{{Values: []any{nil}}}},
			`{"PK":{"S":"C#2"},"SK":{"S":"PROFILE"},"_type":{"S":"Customer"},"first":{"S":"2024-01-02T03:04:05.000006Z"},"last":{"M":{"at":{"N":"1704164645.000006"},"id":{"N":"7"}}},"orders":{"N":"3"},"spent":{"N":"12345678901234567890123456789012345678"}}`, ""},
		{"a sum of 39 digits", []any{int64(3), one(int64(2)), one(extract.Decimal("199999999999999999999999999999999999998")), one(at), []extract.Row{}, []extract.Row{}},
			"", "entity Customer, table public.customers, row customer_id=3 column total: aggregate spent: sum of orders.total: 199999999999999999999999999999999999998 has 39 significant digits; DynamoDB numbers hold at most 38"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items, errs := src.Apply(extract.Row{Values: tc.vals})
			if tc.error != "" {
				if len(errs) != 1 || errs[0].Error() != tc.error || errs[0].Column != "total" {
					t.Fatalf("errors %v, want %q", errs, tc.error)
				}
				return
			}
			if len(errs) != 0 || len(items) != 1 {
				t.Fatalf("items %v, errors %v", items, errs)
			}
			got, err := json.Marshal(transform.JSONItem(items[0].Attrs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("item\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
