package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

const customerHead = `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    attributes: [name]
    aggregate:
`

// TestAggregateDiagnostics pins the diagnostics of aggregates: the shape
// of an entry (parse), then its columns and types against the catalog
// (check), every problem of a file in one pass.
func TestAggregateDiagnostics(t *testing.T) {
	t.Parallel()
	join := "from: orders, join: { customer_id: customer_id }"
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"valid", customerHead +
			"      orders: { count: \"*\", " + join + " }\n" +
			"      openOrders: { count: order_id, " + join + ", where: \"status IN ('OPEN', 'HELD') AND total > 10\" }\n" +
			"      spent: { sum: total, " + join + " }\n" +
			"      firstOrder: { min: placed_at, " + join + " }\n" +
			"      lastOrder: { latest: { id: order_id, at: placed_at, total: total }, order: [placed_at, order_id], " + join + " }\n" +
			"      lastStatus: { latest: status, order: placed_at, " + join + " }\n", nil},
		{"no function", customerHead + "      n: { " + join + " }\n", []string{
			`m.yaml:9:7: aggregate n says what to compute: one of count, sum, min, max or latest`}},
		{"two functions", customerHead + "      n: { count: \"*\", sum: total, " + join + " }\n", []string{
			`m.yaml:9:7: aggregate n computes one thing, not count and sum: declare one aggregate per attribute`}},
		{"sum of star", customerHead + "      n: { sum: \"*\", " + join + " }\n", []string{
			`m.yaml:9:17: aggregate n: sum needs a column; only count takes "*" (its rows)`}},
		{"latest without order", customerHead + "      n: { latest: total, " + join + " }\n", []string{
			`m.yaml:9:7: aggregate n: latest needs order: <column> (or a list): the greatest row by that order is the latest`}},
		{"order on count", customerHead + "      n: { count: \"*\", order: placed_at, " + join + " }\n", []string{
			`m.yaml:9:31: aggregate n: order applies to latest; count does not depend on the order of rows`}},
		{"missing join, misspelled field", customerHead + "      n: { count: \"*\", from: orders, wher: x }\n", []string{
			`m.yaml:9:7: aggregate n is missing required field "join"`,
			`m.yaml:9:38: unknown field "wher" in aggregate n (did you mean "where"?)`}},
		{"clash with an attribute", customerHead + "      name: { count: \"*\", " + join + " }\n", []string{
			`m.yaml:9:7: aggregate "name" of Customer is already an attribute of the item`}},
		{"clash with a key", customerHead + "      SK: { count: \"*\", " + join + " }\n", []string{
			`m.yaml:9:7: aggregate "SK" of Customer would overwrite the table's sort key`}},
	}
	checked := []struct {
		name string
		src  string
		want []string
	}{
		{"all problems against the catalog at once", customerHead +
			"      a: { sum: placed_at, " + join + " }\n" +
			"      b: { sum: value, from: readings, join: { reading_id: customer_id } }\n" +
			"      c: { max: duration, " + join + " }\n" +
			"      d: { count: totl, " + join + " }\n" +
			"      e: { count: \"*\", from: order, join: { customer_id: customer_id } }\n" +
			"      f: { count: \"*\", from: orders, join: { customer_id: name } }\n" +
			"      g: { count: \"*\", " + join + ", where: \"addresses.country = 'NO'\" }\n" +
			"      h: { count: \"*\", " + join + ", where: \"stauts = 'OPEN'\" }\n" +
			"      i: { count: \"*\", " + join + ", where: \"total = 'x'\" }\n" +
			"      j: { latest: { at: placed_at, d: { column: duration, as: number } }, order: [duration, ordr], " + join + " }\n",
			[]string{
				`m.yaml:9:17: Customer aggregate a: sum needs an integer or numeric column; "placed_at" is timestamp with time zone`,
				`m.yaml:10:17: Customer aggregate b: sum of "value" (double precision) would not be exact: a float sum depends on the order rows are added in; sum an integer or numeric column`,
				`m.yaml:11:17: Customer aggregate c: max needs a column with an order (a number, text, date or timestamp); "duration" is interval`,
				`m.yaml:12:19: Customer aggregate d count: column "totl" does not exist in table public.orders (did you mean "total"?)`,
				`m.yaml:13:30: table public.order does not exist (did you mean "orders"?)`,
				`m.yaml:14:46: Customer aggregate f join: orders.customer_id is bigint but customers.name is text; they cannot be compared`,
				`m.yaml:15:82: Customer aggregate g where: {addresses.country}: an aggregate's where tests columns of its own rows (public.orders), not of copies`,
				`m.yaml:16:82: Customer aggregate h where: column "stauts" does not exist in table public.orders (did you mean "status"?)`,
				`m.yaml:17:90: Customer aggregate i where: the column is numeric(12,2): compare it with a number, not 'x'`,
				`m.yaml:18:37: Customer aggregate j attribute "d": as: number does not apply to a column of type interval`,
				`m.yaml:18:84: Customer aggregate j order: column "duration" has type interval, which has no order to rank rows by`,
				`m.yaml:18:94: Customer aggregate j order: column "ordr" does not exist in table public.orders`}},
	}
	for _, tc := range append(cases, checked...) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte(tc.src))
			var got mapping.Diagnostics
			if err != nil {
				got = err.(mapping.Diagnostics)
			} else {
				got = mapping.Check(m, langCatalog())
			}
			var lines []string
			for _, d := range got {
				lines = append(lines, d.String())
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n got: %s\nwant: %s", strings.Join(lines, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
}

const aggSchemaBase = `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    aggregate:
      orders: { count: "*", from: orders, join: { customer_id: customer_id }, where: "status = 'OPEN'" }
      spent: { sum: total, from: orders, join: { customer_id: customer_id } }
      lastOrder: { latest: { id: order_id, at: placed_at }, order: [placed_at], from: orders, join: { customer_id: customer_id } }
`

// The schema and the parser agree on aggregates: what one rejects the
// other does, and the valid variants pass both.
func TestAggregateSchema(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, mappingSchemaFile)
	edit := func(t *testing.T, old, new string) string {
		src := strings.Replace(aggSchemaBase, old, new, 1)
		if src == aggSchemaBase {
			t.Fatalf("the edit %q did not apply", old)
		}
		return src
	}
	if _, err := mapping.Parse("m.yaml", []byte(aggSchemaBase)); err != nil {
		t.Fatalf("the base case must parse: %v", err)
	}
	if err := sch.Validate(yamlToJSON(t, []byte(aggSchemaBase))); err != nil {
		t.Fatalf("the base case must validate: %v", err)
	}
	rejected := []struct{ name, old, new, want string }{
		{"no function", `count: "*", `, "", "/aggregate/orders"},
		{"two functions", `count: "*", `, `count: "*", sum: total, `, "/aggregate/orders"},
		{"sum of star", "sum: total", `sum: "*"`, "/aggregate/spent"},
		{"latest without order", "order: [placed_at], ", "", "/aggregate/lastOrder"},
		{"order on count", `count: "*", `, `count: "*", order: placed_at, `, "/aggregate/orders"},
		{"missing join", "sum: total, from: orders, join: { customer_id: customer_id }", "sum: total, from: orders", "missing property 'join'"},
		{"misspelled field", `where: "status`, `wher: "status`, "additional properties 'wher' not allowed"},
		{"latest of everything", "latest: { id: order_id, at: placed_at }", `latest: "*"`, "/aggregate/lastOrder"},
	}
	for _, tc := range rejected {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			t.Parallel()
			src := edit(t, tc.old, tc.new)
			if _, err := mapping.Parse("m.yaml", []byte(src)); err == nil {
				t.Errorf("the parser accepts it, the schema must not be stricter:\n%s", src)
			}
			err := sch.Validate(yamlToJSON(t, []byte(src)))
			if err == nil {
				t.Fatalf("the schema accepts:\n%s", src)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("schema error lacks %q:\n%s", tc.want, err)
			}
		})
	}
	accepted := []struct{ name, old, new string }{
		{"count of a column", `count: "*"`, "count: order_id"},
		{"min", "sum: total", "min: placed_at"},
		{"max", "sum: total", "max: total"},
		{"latest of one column, order a name", "latest: { id: order_id, at: placed_at }, order: [placed_at]", "latest: total, order: placed_at"},
		{"schema of the child", "sum: total, from: orders,", "sum: total, from: orders, schema: sales,"},
	}
	for _, tc := range accepted {
		t.Run("accepts "+tc.name, func(t *testing.T) {
			t.Parallel()
			src := edit(t, tc.old, tc.new)
			if _, err := mapping.Parse("m.yaml", []byte(src)); err != nil {
				t.Fatalf("the parser rejects it: %v", err)
			}
			if err := sch.Validate(yamlToJSON(t, []byte(src))); err != nil {
				t.Errorf("the schema rejects:\n%s\n%v", src, err)
			}
		})
	}
}
