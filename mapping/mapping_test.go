package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

func col(name string, k pgkind.Kind, typ string, notNull bool) mapping.Column {
	return mapping.Column{Name: name, Type: pgkind.Type{Name: typ, Kind: k}, NotNull: notNull}
}

// testCatalog is a small bookstore catalog.
func testCatalog() *mapping.Catalog {
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	add := func(name string, pk []string, cols ...mapping.Column) {
		cat.Tables["public."+name] = &mapping.Table{Schema: "public", Name: name, Columns: cols, PrimaryKey: pk, Unique: [][]string{pk}}
	}
	add("customers", []string{"customer_id"},
		col("customer_id", pgkind.Int, "bigint", true),
		col("name", pgkind.Text, "text", true),
		col("email", pgkind.Text, "text", false),
		col("created_at", pgkind.Timestamptz, "timestamp with time zone", true),
		col("meta", pgkind.JSON, "jsonb", false),
		mapping.Column{Name: "tags", Type: pgkind.Type{Name: "text[]", Kind: pgkind.Array, Elem: pgkind.Text}})
	add("orders", []string{"order_id"},
		col("order_id", pgkind.Int, "bigint", true),
		col("customer_id", pgkind.Int, "bigint", true),
		col("total", pgkind.Numeric, "numeric(12,2)", true),
		col("placed_at", pgkind.Timestamptz, "timestamp with time zone", true),
		col("duration", pgkind.Other, "interval", false))
	cat.Tables["public.log"] = &mapping.Table{Schema: "public", Name: "log", Columns: []mapping.Column{col("msg", pgkind.Text, "text", false)}}
	// Only a NULL-able unique key: it cannot order a keyset read.
	cat.Tables["public.tags"] = &mapping.Table{Schema: "public", Name: "tags", Columns: []mapping.Column{col("tag", pgkind.Text, "text", false)}, Unique: [][]string{{"tag"}}}
	return cat
}

const header = `table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
entities:
`

func TestValidMapping(t *testing.T) {
	t.Parallel()
	src := header + `  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "PROFILE" }
    attributes: { name: name, mail: email, since: { column: created_at, as: epoch_millis } }
    index: { GSI1: { pk: "EMAIL#{email}", sk: "CUSTOMER" } }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id:10}" }
    attributes: "*"
    exclude: [duration]
`
	m, err := mapping.Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if ds := mapping.Check(m, testCatalog()); ds != nil {
		t.Fatalf("check: %v", ds)
	}
	if got := len(m.Entities); got != 2 {
		t.Fatalf("entities = %d, want 2", got)
	}
	o := m.Entities[1]
	if o.SK.Parts[3].Width != 10 || o.SK.Parts[3].Column != "order_id" {
		t.Errorf("order sk parts = %+v", o.SK.Parts)
	}
	if m.EntityAttribute != "_type" || m.Separator != "#" {
		t.Errorf("defaults: entityAttribute %q separator %q", m.EntityAttribute, m.Separator)
	}
}

// Each case pins the exact diagnostics, positions included.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		src   string
		check bool // also check against the catalog
		want  []string
	}{
		{"yaml syntax", "table: [\n", false, []string{"m.yaml:1:1: invalid YAML: did not find expected node content"}},
		{"missing required", "table: Shop\n", false, []string{
			`m.yaml:1:1: the mapping is missing required field "entities"`,
			`m.yaml:1:1: the mapping is missing required field "keys"`}},
		{"unknown top field", header + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\ntabel: X\n", false,
			[]string{`m.yaml:7:1: unknown field "tabel" in the mapping (did you mean "table"?)`}},
		{"unknown entity field", header + "  C:\n    form: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n", false, []string{
			`m.yaml:6:3: entity C is missing required field "from"`,
			`m.yaml:7:5: unknown field "form" in entity C (did you mean "from"?)`}},
		{"missing sk", header + "  C: { from: customers, key: { pk: \"C#{customer_id}\" } }\n", false,
			[]string{`m.yaml:6:30: entity C key is missing "sk": the table has sort key "SK"`}},
		{"unclosed placeholder", header + "  C: { from: customers, key: { pk: \"C#{customer_id\", sk: S } }\n", false,
			[]string{`m.yaml:6:39: key.pk: unclosed "{"`}},
		{"bad width", header + "  C: { from: customers, key: { pk: \"C#{customer_id:x}\", sk: S } }\n", false,
			[]string{`m.yaml:6:39: key.pk: invalid width "x" in {customer_id:x}: want a number of digits from 1 to 40`}},
		{"empty template", header + "  C: { from: customers, key: { pk: \"\", sk: S } }\n", false,
			[]string{`m.yaml:6:36: key.pk must not be empty: DynamoDB rejects empty key values`}},
		{"undeclared index", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    index: { GSI9: { pk: \"E#{email}\", sk: X } }\n", false,
			[]string{`m.yaml:9:14: index "GSI9" is not declared under indexes (did you mean "GSI1"?)`}},
		{"unknown conversion", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { since: { column: created_at, as: epoch_milis } }\n", false,
			[]string{`m.yaml:9:52: unknown conversion "epoch_milis" (did you mean "epoch_millis"?)`}},
		{"reserved attribute", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { PK: name }\n", false,
			[]string{`m.yaml:9:19: attribute "PK" of C would overwrite the table's partition key`}},
		{"exclude without star", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    exclude: [email]\n", false,
			[]string{`m.yaml:9:15: exclude needs attributes: "*" (it removes columns from the full selection)`}},
		{"bad null mode", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { mail: { column: email, null: keep } }\n", false,
			[]string{`m.yaml:9:48: null must be "omit" or "null", not "keep"`}},
		{"unknown table", header + "  C: { from: customer, key: { pk: \"C#{customer_id}\", sk: S } }\n", true,
			[]string{`m.yaml:6:14: table public.customer does not exist (did you mean "customers"?)`}},
		{"unknown column in template", header + "  C: { from: customers, key: { pk: \"C#{customer_idd}\", sk: S } }\n", true, []string{
			`m.yaml:6:39: C key.pk: column "customer_idd" does not exist in table public.customers (did you mean "customer_id"?)`}},
		{"unknown attribute column", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { mail: emial }\n", true,
			[]string{`m.yaml:9:25: C attribute "mail": column "emial" does not exist in table public.customers (did you mean "email"?)`}},
		{"unsortable key column", header + "  O: { from: orders, key: { pk: \"O#{order_id}\", sk: \"D#{duration}\" } }\n", true,
			[]string{`m.yaml:6:56: O key.sk: column "duration" has type interval, which has no sortable text form for a key`}},
		{"width on non-integer", header + "  O: { from: orders, key: { pk: \"O#{order_id}\", sk: \"T#{total:5}\" } }\n", true,
			[]string{`m.yaml:6:56: O key.sk: zero-padding {total:5} applies to integer columns; "total" is numeric(12,2)`}},
		{"conversion does not fit", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { n: { column: name, as: epoch_seconds } }\n", true,
			[]string{`m.yaml:9:19: C attribute "n": as: epoch_seconds does not apply to a column of type text`}},
		{"key does not identify row", header + "  O: { from: orders, key: { pk: \"C#{customer_id}\", sk: ORDER } }\n", true,
			[]string{`m.yaml:6:3: the key of O does not include the primary key (order_id) or another unique key of public.orders, so two rows could produce the same item: a unique constraint or unique index over (customer_id), or a partial unique index over them whose predicate the where filter implies, would make it one row per key`}},
		{"no primary key", header + "  L: { from: log, key: { pk: \"L#{msg}\", sk: X } }\n", true,
			[]string{`m.yaml:6:14: table public.log has no primary key or NOT NULL unique key: rows cannot be read in a stable order or resumed`}},
		{"nullable unique key only", header + "  T: { from: tags, key: { pk: \"T#{tag}\", sk: X } }\n", true,
			[]string{`m.yaml:6:14: table public.tags has no primary key or NOT NULL unique key: rows cannot be read in a stable order or resumed`}},
		{"star selects a reserved name", strings.Replace(header, "table: Shop", "table: Shop\nentityAttribute: name", 1) + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: \"*\"\n", true,
			[]string{`m.yaml:7:3: column "name" of public.customers, selected by attributes: "*", would overwrite the entity attribute: exclude it and select it under another name`}},
		{"colliding entities", header + "  A: { from: customers, key: { pk: \"X#{customer_id}\", sk: \"S\" } }\n  B: { from: orders, key: { pk: \"X#{order_id}\", sk: \"S\" } }\n", true,
			[]string{`m.yaml:7:3: entities A (m.yaml:6:3) and B can produce the same item key: make their pk or sk literals differ, e.g. distinct prefixes`}},
		// Every attribute the tool writes must have a name of its own: an
		// entity attribute named GSI1PK would put every item in GSI1 under
		// its entity name, and the run would say nothing.
		{"entity attribute is an index key", strings.Replace(header, "table: Shop", "table: Shop\nentityAttribute: GSI1PK", 1) + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:2:18: The entity attribute is "GSI1PK", which is already the partition key of index GSI1: the key attributes and the entity attribute each need their own name`}},
		{"entity attribute is the table key", strings.Replace(header, "table: Shop", "table: Shop\nentityAttribute: PK", 1) + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:2:18: The entity attribute is "PK", which is already the table's partition key: the key attributes and the entity attribute each need their own name`}},
		// An inverted index on the table's own keys is fine, as long as no
		// entity writes over them through it.
		{"inverted index", strings.Replace(header, "GSI1: { partition: GSI1PK, sort: GSI1SK }", "GSI1: { partition: SK, sort: PK }", 1) + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false, nil},
		{"templates for an index on the table keys", strings.Replace(header, "GSI1: { partition: GSI1PK, sort: GSI1SK }", "GSI1: { partition: SK, sort: PK }", 1) + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    index: { GSI1: { pk: \"E#{email}\", sk: X } }\n", false,
			[]string{`m.yaml:9:14: index GSI1 has the table's own key attribute "SK" as its partition key: the items' table keys are its entries, so C cannot give it templates that would overwrite them`}},
		{"two indexes share a key", header[:len(header)-len("entities:\n")] + "  GSI2: { partition: GSI2PK, sort: GSI1SK }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:5:36: The sort key of index GSI2 is "GSI1SK", which is already the sort key of index GSI1: the key attributes and the entity attribute each need their own name`}},
		{"table key named like the default entity attribute", strings.Replace(header, "partition: PK", "partition: _type", 1) + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:2:20: The entity attribute (by default) is "_type", which is already the table's partition key: the key attributes and the entity attribute each need their own name`}},
		{"embed over an index key", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    embed: { GSI1SK: { from: orders, join: { customer_id: customer_id }, as: list, max: 5 } }\n", false,
			[]string{`m.yaml:9:14: embed "GSI1SK" of C would overwrite the sort key of index GSI1`}},
		{"copied attribute over the entity attribute", header + "  O:\n    from: orders\n    key: { pk: \"O#{order_id}\", sk: S }\n    copy: [ { from: customers, join: { customer_id: customer_id }, attributes: { _type: name } } ]\n", false,
			[]string{`m.yaml:9:82: copied attribute "_type" of O would overwrite the entity attribute`}},
		{"embed and attribute share a name", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { orders: name }\n    embed: { orders: { from: orders, join: { customer_id: customer_id }, as: list, max: 5 } }\n", false,
			[]string{`m.yaml:10:14: embed "orders" of C is already an attribute of the item`}},
		{"copied attribute and embed share a name", header + "  O:\n    from: orders\n    key: { pk: \"O#{order_id}\", sk: S }\n    embed: { who: { from: customers, join: { customer_id: customer_id }, as: list, max: 1 } }\n    copy: [ { from: customers, join: { customer_id: customer_id }, copy: [ { from: customers, join: { customer_id: customer_id }, attributes: { who: name } } ] } ]\n", false,
			[]string{`m.yaml:10:145: copied attribute "who" of O is already an embed of the item`}},
		{"set of json", header + "  C:\n    from: customers\n    key: { pk: \"C#{customer_id}\", sk: S }\n    attributes: { m: { column: meta, as: set } }\n", true,
			[]string{`m.yaml:9:19: C attribute "m": as: set does not apply to a column of type jsonb`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte(tc.src))
			var got mapping.Diagnostics
			if err != nil {
				got = err.(mapping.Diagnostics)
			} else if tc.check {
				got = mapping.Check(m, testCatalog())
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

func TestAllProblemsAtOnce(t *testing.T) {
	t.Parallel()
	src := header + `  C:
    form: customers
    key: { pk: "C#{", sk: S }
    attributes: { PK: name }
extra: 1
`
	_, err := mapping.Parse("m.yaml", []byte(src))
	ds, ok := err.(mapping.Diagnostics)
	if !ok || len(ds) < 4 {
		t.Fatalf("want at least 4 diagnostics at once, got %v", err)
	}
	for i := 1; i < len(ds); i++ {
		if ds[i].Line < ds[i-1].Line {
			t.Errorf("diagnostics not sorted: %v", ds)
		}
	}
}

// One pass: the file's problems (an undeclared index) and the catalog's
// (misspelled columns) come together, with no knock-on: a misspelled key
// column does not also make the key "miss the primary key", and an entry
// in an undeclared index does not also leave the pattern that reads it
// "without an entity".
func TestOnePass(t *testing.T) {
	t.Parallel()
	src := header + `  Customer:
    from: customers
    key: { pk: "C#{customer_idd}", sk: PROFILE }
    attributes: [nme, email]
    index:
      GSI9: { pk: "EMAIL#{email}", sk: C }
accessPatterns:
  byEmail:
    params: { email: customers.email }
    query: { index: GSI1, pk: "EMAIL#{email}" }
    sql: SELECT name FROM customers WHERE email = @email
`
	m, parsed := mapping.ParsePartial("m.yaml", []byte(src))
	if m == nil || parsed == nil {
		t.Fatalf("ParsePartial: %v, %v", m, parsed)
	}
	got := mapping.MergeDiagnostics(parsed, mapping.Check(m, testCatalog())).Error()
	want := strings.Join([]string{
		`m.yaml:8:19: Customer key.pk: column "customer_idd" does not exist in table public.customers (did you mean "customer_id"?)`,
		`m.yaml:9:18: Customer attribute "nme": column "nme" does not exist in table public.customers (did you mean "name"?)`,
		`m.yaml:11:7: index "GSI9" is not declared under indexes (did you mean "GSI1"?)`,
	}, "\n")
	if got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
	// A misspelled column of a copy's join is not also a join that "does
	// not match a unique key".
	copySrc := header + "  O:\n    from: orders\n    key: { pk: \"O#{order_id}\", sk: S }\n    copy: [{ from: customers, join: { customer_idd: customer_id }, attributes: { n: name } }]\n"
	cm, cparsed := mapping.ParsePartial("m.yaml", []byte(copySrc))
	if got, want := mapping.MergeDiagnostics(cparsed, mapping.Check(cm, testCatalog())).Error(),
		`m.yaml:9:39: O copy from customers join: column "customer_idd" does not exist in table public.customers (did you mean "customer_id"?)`; got != want {
		t.Errorf("copy join:\n%s\nwant:\n%s", got, want)
	}
	if _, err := mapping.Parse("m.yaml", []byte(src)); err == nil || err.Error() != parsed.Error() {
		t.Errorf("Parse: %v, want the syntax problems of ParsePartial:\n%v", err, parsed)
	}
}
