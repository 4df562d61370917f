package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// langCatalog is testCatalog with a few more tables: addresses (a parent of
// orders), readings (bytea, numbers) and "Order Lines" (names that need
// quoting).
func langCatalog() *mapping.Catalog {
	cat := testCatalog()
	add := func(name string, pk []string, cols ...mapping.Column) {
		cat.Tables["public."+name] = &mapping.Table{Schema: "public", Name: name, Columns: cols, PrimaryKey: pk, Unique: [][]string{pk}}
	}
	add("addresses", []string{"address_id"},
		col("address_id", pgkind.Int, "bigint", true),
		col("customer_id", pgkind.Int, "bigint", true),
		col("city", pgkind.Text, "text", true),
		col("country", pgkind.Text, "text", true))
	cat.Tables["public.orders"].Columns = append(cat.Tables["public.orders"].Columns,
		col("ship_to", pgkind.Int, "bigint", false),
		col("status", pgkind.Text, "order_status", true),
		col("open", pgkind.Bool, "boolean", false))
	add("readings", []string{"reading_id"},
		col("reading_id", pgkind.Int, "bigint", true),
		col("sensor", pgkind.Text, "text", true),
		col("device", pgkind.Bytea, "bytea", false),
		col("value", pgkind.Float, "double precision", false),
		col("taken_at", pgkind.Timestamptz, "timestamp with time zone", true))
	add("Order Lines", []string{"Order ID"},
		col("Order ID", pgkind.Int, "bigint", true),
		col(`say "hi"`, pgkind.Text, "text", false))
	return cat
}

const orderHead = `table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
  GSI2: { partition: GSI2PK, sort: GSI2SK }
entities:
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{order_id}" }
`

// TestLanguageDiagnostics pins the diagnostics of the language's newer
// parts: key types, local indexes, projections, template functions and
// quoting, copies into maps and in keys, where clauses, access patterns.
func TestLanguageDiagnostics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		src   string
		check bool
		want  []string
	}{
		{"bad key type", "table: Shop\nkeys: { partition: PK, sort: { name: SK, type: X } }\nentities: {}\n", false, []string{
			`m.yaml:2:48: keys.sort type must be S (string), N (number) or B (binary), not "X"`,
			`m.yaml:3:11: entities must declare at least one entity`}},
		{"one attribute, two types", "table: Shop\nkeys: { partition: PK, sort: { name: SK, type: N } }\nindexes:\n  Inverse: { partition: SK, sort: PK }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: \"{customer_id}\" } }\n", false,
			[]string{`m.yaml:4:3: index Inverse: key attribute "SK" has type S here but N as the table's sort key; an attribute has one type`}},
		{"local index with partition", "table: Shop\nkeys: { partition: PK, sort: SK }\nindexes:\n  LSI1: { local: true, partition: X, sort: L }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:4:24: index LSI1 is local: it shares the table's partition key "PK", so it declares only sort`}},
		{"local index without table sort key", "table: Shop\nkeys: { partition: PK }\nindexes:\n  LSI1: { local: true, sort: L }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\" } }\n", false,
			[]string{`m.yaml:4:3: local index LSI1 needs a table with a sort key (keys.sort): an LSI is an alternative sort key of the table's item collections`}},
		{"pk on a local index", "table: Shop\nkeys: { partition: PK, sort: SK }\nindexes:\n  LSI1: { local: true, sort: L }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S }, index: { LSI1: { pk: X, sk: Y } } }\n", false,
			[]string{`m.yaml:6:81: index LSI1 is local: it shares the table's partition key, so C gives it only sk`}},
		{"projection typo", "table: Shop\nkeys: { partition: PK, sort: SK }\nindexes:\n  GSI1: { partition: GP, projection: KEYS_ONY }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n", false,
			[]string{`m.yaml:4:38: projection must be ALL, KEYS_ONLY or { include: [attr, ...] }, not "KEYS_ONY" (did you mean "KEYS_ONLY"?)`}},
		{"projection of an attribute nobody writes", "table: Shop\nkeys: { partition: PK, sort: SK }\nindexes:\n  GSI1: { partition: GP, projection: { include: [nmae] } }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S }, attributes: [name], index: { GSI1: { pk: \"N#{name}\" } } }\n", false,
			[]string{`m.yaml:4:50: index GSI1 projects "nmae", which no entity in the index writes (did you mean "name"?)`}},
		{"projecting keys", "table: Shop\nkeys: { partition: PK, sort: SK }\nindexes:\n  GSI1: { partition: GP, projection: { include: [SK, GSI2PK, name] } }\n  GSI2: { partition: GSI2PK }\nentities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S }, attributes: [name], index: { GSI1: { pk: \"N#{name}\" }, GSI2: { pk: X } } }\n", false,
			[]string{`m.yaml:4:50: index GSI1 projects "SK", a key of the table or the index: keys are always projected`}},
		{"unknown function", orderHead + "    index: { GSI1: { pk: \"S#{status|lowr}\", sk: X } }\n", false,
			[]string{`m.yaml:10:37: pk: {status|lowr}: unknown function "lowr" (did you mean "lower"?); functions are lower, upper, nfc, nfd, nfkc, nfkd, year, month, day, date, signed, decimal`}},
		{"signed without width", orderHead + "    index: { GSI1: { pk: \"S#{status}\", sk: \"{total|signed}\" } }\n", false,
			[]string{`m.yaml:10:52: sk: {total|signed}: signed needs a width from 1 to 19 digits (bigint has 19): signed:10, not ""`}},
		{"padding and functions", orderHead + "    index: { GSI1: { pk: \"S#{status}\", sk: \"{order_id:5|signed:5}\" } }\n", false,
			[]string{`m.yaml:10:45: sk: {order_id:5|signed:5} mixes zero-padding and functions: pad a non-negative integer with {column:N}, or encode with |signed:N`}},
		{"unclosed quoted name", strings.Replace(orderHead, `sk: "ORDER#{order_id}"`, `sk: 'ORDER#{"order id}'`, 1), false,
			[]string{`m.yaml:9:54: key.sk: unclosed quote in placeholder (write "" for a quote inside a quoted name)`}},
		{"where syntax", orderHead + "    where: status = 'OPEN' AND\n", false,
			[]string{`m.yaml:10:31: where: unexpected end of condition: want a column or a value`}},
		{"where keyword as a column", orderHead + "    where: open and and\n", false,
			[]string{`m.yaml:10:21: where: unexpected keyword AND: want a column or a value (quote a column named and: "and")`}},
		{"bad empty mode", orderHead + "    index: { GSI1: { pk: \"S#{status}\", sk: X, empty: skip } }\n", false,
			[]string{`m.yaml:10:54: empty must be "error" (an empty key value is a row error) or "absent" (the item stays out of the index), not "skip"`}},
		{"copy into a key attribute", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to }, into: GSI1PK, attributes: [city] }]\n", false,
			[]string{`m.yaml:10:68: copy into "GSI1PK" of Order would overwrite the partition key of index GSI1`}},

		{"copied column without its path", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to }, attributes: { city: city } }]\n    index: { GSI1: { pk: \"COUNTRY#{country}\", sk: X } }\n", true,
			[]string{`m.yaml:11:35: Order index GSI1 pk: column "country" does not exist in table public.orders; it is a column of a copied parent: write {addresses.country}`}},
		{"parent column without a copy", orderHead + "    index: { GSI1: { pk: \"CITY#{city}\", sk: X } }\n", true,
			[]string{`m.yaml:10:32: Order index GSI1 pk: column "city" does not exist in table public.orders; a key or where clause can use a parent's column through a copy: copy: [{from: addresses, join: {<its key>: <column of orders>}}], then write {addresses.city}`}},
		{"unknown copy in a path", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to }, into: shipTo, attributes: [city] }]\n    index: { GSI1: { pk: \"C#{ship.country}\", sk: X } }\n", true,
			[]string{`m.yaml:11:29: Order index GSI1 pk: {ship.country}: Order has no copy named "ship" (did you mean "shipTo"?)`}},
		{"column of a copied parent", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to }, into: shipTo, attributes: [city] }]\n    index: { GSI1: { pk: \"C#{shipTo.contry}\", sk: X } }\n", true,
			[]string{`m.yaml:11:29: Order index GSI1 pk: column "contry" does not exist in table public.addresses (the copied parent shipTo) (did you mean "country"?)`}},
		{"unused copy", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to } }]\n", true,
			[]string{`m.yaml:10:12: copy from addresses copies nothing and no key or where clause uses it: add attributes, or use it as {addresses.column}`}},
		{"function on the wrong type", orderHead + "    index: { GSI1: { pk: \"T#{placed_at|lower}\", sk: X } }\n", true,
			[]string{`m.yaml:10:40: Order index GSI1 pk: {placed_at|lower}: lower applies to text, but the value is timestamp with time zone`}},
		{"encoding clashes with the separator", strings.Replace(orderHead, "table: Shop", "table: Shop\nseparator: \"-\"", 1) + "    index: { GSI1: { pk: \"T-{total|decimal:8.2}\", sk: X } }\n", true,
			[]string{`m.yaml:11:36: Order index GSI1 pk: {total|decimal} writes "-.", which is in the separator "-": keys would be ambiguous; choose another separator`}},
		{"number key with text", "table: Shop\nkeys: { partition: PK, sort: { name: SK, type: N } }\nentities:\n  O: { from: orders, key: { pk: \"O#{order_id}\", sk: \"N{order_id}\" } }\n", true,
			[]string{`m.yaml:4:53: O key.sk: the key attribute is of type N, so the template must be one placeholder and nothing else, not "N{order_id}"`}},
		{"number key of a text column", "table: Shop\nkeys: { partition: PK, sort: { name: SK, type: N } }\nentities:\n  O: { from: orders, key: { pk: \"O#{order_id}#{status}\", sk: \"{status}\" } }\n", true,
			[]string{`m.yaml:4:63: O key.sk: the key attribute is a number (N): {status} must be an integer or numeric value (or |year, |month, |day of a date) without padding; "status" is order_status`}},
		{"binary key of a text column", "table: Shop\nkeys: { partition: { name: PK, type: B }, sort: SK }\nentities:\n  R: { from: readings, key: { pk: \"{sensor}\", sk: \"R#{reading_id}\" } }\n", true,
			[]string{`m.yaml:4:36: R key.pk: the key attribute is binary (B): {sensor} must be a bytea column without functions; "sensor" is text`}},
		{"quoted column exists", "table: Shop\nkeys: { partition: PK, sort: SK }\nentities:\n  L: { from: Order Lines, key: { pk: 'O#{\"Order ID\"}', sk: 'S#{\"say \"\"hi\"\"\"}' } }\n", true, nil},
		{"quoted column misspelled", "table: Shop\nkeys: { partition: PK, sort: SK }\nentities:\n  L: { from: Order Lines, key: { pk: 'O#{\"Order Id\"}', sk: L } }\n", true, []string{
			`m.yaml:4:41: L key.pk: column "Order Id" does not exist in table public.Order Lines (did you mean "Order ID"?)`}},

		{"where: text ordered by collation", orderHead + "    where: status < 'M'\n", true,
			[]string{`m.yaml:10:12: Order where: < on status (order_status) would order by PostgreSQL's collation or type rules, which the transform does not reproduce: use =, <>, IN or IS`}},
		{"where: literal of the wrong type", orderHead + "    where: \"total = 'x' OR placed_at > '2024-13-01'\"\n", true, []string{
			`m.yaml:10:21: Order where: the column is numeric(12,2): compare it with a number, not 'x'`,
			`m.yaml:10:40: Order where: "2024-13-01" is not a timestamp: write 'YYYY-MM-DD HH:MM:SS', optionally with .ffffff and Z or +hh:mm`}},
		{"where: = NULL", orderHead + "    where: ship_to = NULL\n", true,
			[]string{`m.yaml:10:22: Order where: = NULL is never true in SQL: write ship_to IS NULL (or IS NOT NULL)`}},
		{"where: unknown column", orderHead + "    where: stauts IN ('OPEN')\n", true,
			[]string{`m.yaml:10:12: Order where: column "stauts" does not exist in table public.orders (did you mean "status"?)`}},
		{"where: not boolean", orderHead + "    where: status IS TRUE AND open\n", true,
			[]string{`m.yaml:10:12: Order where: status (order_status) is not a boolean column: compare it (=, <>, IN) or test IS NULL`}},
		{"where: interval compared", orderHead + "    where: duration > 1\n", true,
			[]string{`m.yaml:10:12: Order where: duration has type interval, which a where clause can only test with IS NULL or IS NOT NULL`}},
		{"index where over a copied column", orderHead + "    copy: [{ from: addresses, join: { address_id: ship_to } }]\n    index: { GSI1: { pk: \"S#{status}\", sk: X, where: \"addresses.country IN ('NO', 'SE')\" } }\n", true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte(tc.src))
			var got mapping.Diagnostics
			if err != nil {
				got = err.(mapping.Diagnostics)
			} else if tc.check {
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

const patternHead = `table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
  GSI2: { partition: GSI2PK, sort: GSI2SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    index: { GSI1: { pk: "EMAIL#{email|lower}", sk: CUSTOMER } }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id}" }
    index:
      GSI2: { pk: "OPEN#{shard}", sk: "{placed_at}#{order_id}", shard: { count: 4, by: order_id } }
accessPatterns:
`

func TestAccessPatternDiagnostics(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		src   string
		check bool
		want  []string
	}{
		{"valid", `  profile:
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{id}", sk: PROFILE }
    sql: SELECT name FROM customers WHERE customer_id = @id
  ordersInRange:
    params: "SELECT customer_id AS id, min(placed_at) AS lo, max(placed_at) AS hi FROM orders GROUP BY 1"
    query: { pk: "CUSTOMER#{id}", sk: { between: ["ORDER#{lo}", "ORDER#{hi}~"] }, direction: desc, limit: 10 }
    sql: SELECT order_id AS "orderId" FROM orders WHERE customer_id = @id ORDER BY placed_at DESC LIMIT 10
  open:
    query: { index: GSI2, pk: "OPEN#{shard}" }
    sql: SELECT order_id FROM orders ORDER BY placed_at
    ordered: false
`, true, nil},
		{"operation and parameters", `  a:
    get: { pk: X, sk: Y }
    query: { pk: X, index: GSI3 }
    sql: SELECT 1
  a2:
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{idd}" }
    sql: SELECT 1 WHERE @id = @ids
  b:
    get: { pk: "CUSTOMER#{shard}", sk: PROFILE }
    sql: x
  c:
    sql: SELECT 1
  d:
    params: customers.customer_id
    get: { pk: X, sk: Y }
    sql: SELECT 1
`, false, []string{
			`m.yaml:18:5: access pattern a has both get and query: a pattern is one operation`,
			`m.yaml:19:28: index "GSI3" is not declared under indexes (did you mean "GSI1"?)`,
			`m.yaml:23:10: get needs sk: GetItem takes the whole primary key (a partition is read with query)`,
			`m.yaml:23:26: access pattern a2: {idd} is not a parameter: declare it under params (did you mean "id"?)`,
			`m.yaml:24:31: access pattern a2: sql uses @ids, which is not a parameter (did you mean "id"?)`,
			`m.yaml:26:26: access pattern b: {shard} belongs in a query's pk, where it fans the query out over every shard`,
			`m.yaml:29:5: access pattern c needs get: { pk, sk } or query: { pk, ... }: the operation that answers it (never a Scan)`,
			`m.yaml:31:13: params is a query (SELECT ... AS name) or { name: table.column }, not "customers.customer_id"`}},
		{"keys the design does not write", `  a:
    params: { id: customers.customr_id }
    get: { pk: "CUSTMER#{id}", sk: PROFILE }
    sql: SELECT 1
  b:
    params: { id: customers.customer_id }
    query: { pk: "CUSTOMER#{id}", sk: { begins_with: "ORDR#" } }
    sql: SELECT 1
  c:
    query: { index: GSI2, pk: "OPEN#1" }
    sql: SELECT 1
  d:
    params: { e: customers.email }
    query: { index: GSI1, pk: "EMAIL#{e}#{shard}" }
    sql: SELECT 1
`, true, []string{
			`m.yaml:18:19: access pattern a parameter id: column "customr_id" does not exist in table public.customers (did you mean "customer_id"?)`,
			`m.yaml:19:16: access pattern a: no entity writes a partition key like "CUSTMER#{id}" to the table (the nearest it writes is "CUSTOMER#{customer_id}")`,
			`m.yaml:23:54: access pattern b: no entity with partition key "CUSTOMER#{id}" writes a sort key starting like "ORDR#" to the table (the nearest it writes is "ORDER#{placed_at}#{order_id}")`,
			`m.yaml:26:31: access pattern c: index GSI2 is sharded for Order: write {shard} in the pk to query every shard and merge`,
			`m.yaml:30:31: access pattern d: no entity writes a partition key like "EMAIL#{e}#{shard}" to index GSI1 (the nearest it writes is "EMAIL#{email|lower}")`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte(patternHead+tc.src))
			var got mapping.Diagnostics
			if err != nil {
				got = err.(mapping.Diagnostics)
			} else if tc.check {
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

func TestParseLanguage(t *testing.T) {
	t.Parallel()
	src := `table: Metrics
keys: { partition: PK, sort: { name: SK, type: N } }
indexes:
  LSI1: { local: true, sort: LSI1SK, projection: keys_only }
  GSI1: { partition: { name: G1, type: B }, projection: { include: [a, b] } }
entities:
  R:
    from: readings
    key: { pk: "S#{sensor}", sk: "{reading_id}" }
    attributes: { a: value, b: taken_at }
    where: value IS NOT NULL
    index:
      LSI1: { sk: "{taken_at|date}" }
      GSI1: { pk: "{device}", empty: absent, where: "value > -1.5e3" }
`
	m, err := mapping.Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, langCatalog()); ds != nil {
		t.Fatal(ds)
	}
	if m.SortKeyType != mapping.KeyNumber || m.PartitionKeyType != mapping.KeyString {
		t.Errorf("key types %s %s", m.PartitionKeyType, m.SortKeyType)
	}
	lsi, gsi := m.Indexes[0], m.Indexes[1]
	if !lsi.Local || lsi.PartitionKey != "PK" || lsi.Projection.Type != mapping.ProjectKeysOnly {
		t.Errorf("LSI1 = %+v", lsi)
	}
	if gsi.Local || gsi.PartitionKeyType != mapping.KeyBinary || gsi.Projection.Type != mapping.ProjectInclude || len(gsi.Projection.NonKeyAttributes) != 2 {
		t.Errorf("GSI1 = %+v", gsi)
	}
	r := m.Entities[0]
	if r.Where == nil || r.Indexes[0].PK != nil || !r.Indexes[1].EmptyAbsent || r.Indexes[1].Where == nil {
		t.Errorf("entity R = %+v", r)
	}
}
