package transform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// attrText reads key attributes the way the engine hands them to Owns.
func attrText(attrs map[string]types.AttributeValue) func(string) (string, bool) {
	return func(name string) (string, bool) {
		switch v := attrs[name].(type) {
		case *types.AttributeValueMemberS:
			return v.Value, true
		case *types.AttributeValueMemberN:
			return v.Value, true
		case *types.AttributeValueMemberB:
			if len(v.Value) == 0 {
				return "", true
			}
			return "B", true
		}
		return "", false
	}
}

// TestOwnerOwnsEveryItem: every item of every golden case is one the
// plan's Owner says the mapping could have written (a miss here would
// make prune keep a stale item forever), and none under another entity's
// name.
func TestOwnerOwnsEveryItem(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../testdata/transform/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	checked := 0
	for _, dir := range dirs {
		cat := loadCatalog(t, filepath.Join(dir, "catalog.json"))
		data, err := os.ReadFile(filepath.Join(dir, "mapping.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapping.Parse("mapping.yaml", data)
		if err != nil {
			continue
		}
		plan, err := transform.Compile(m, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range plan.AutoShards() {
			plan.SetShardCount(a.Entity, a.Index, 3)
		}
		owner := plan.Owner()
		var rows map[string][]map[string]any
		readJSON(t, filepath.Join(dir, "rows.json"), &rows)
		for _, src := range plan.Sources {
			for _, r := range rows[src.Name] {
				items, _ := src.Apply(buildRow(t, src.Query, r, rows))
				for _, it := range items {
					checked++
					if !owner.Owns(it.Entity, attrText(it.Attrs)) {
						t.Errorf("%s: %s item %v is not owned", filepath.Base(dir), it.Entity, it.Attrs)
					}
					if owner.Owns(it.Entity+"X", attrText(it.Attrs)) {
						t.Errorf("%s: an item of entity %sX is owned", filepath.Base(dir), it.Entity)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d items checked", checked)
	}
}

const ownsMapping = `
table: Things
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
  GSI2: { partition: GSI2PK, sort: GSI2SK }
  GSI3: { partition: { name: GSI3PK, type: N } }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "PROFILE" }
    index:
      GSI1: { pk: "EMAIL#{email|lower}", sk: "SINCE#{since}" }
      GSI2: { pk: "CODE#{code}#{shard}", sk: "AT#{joined_at}", shard: { count: 4, by: customer_id } }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{order_id:8}" }
    index:
      GSI1: { pk: "DAY#{placed_at|date}", sk: "TOTAL#{total|decimal:6.2}#{delta|signed:4}" }
      GSI2: { pk: "ID#{uid}", sk: "{placed_at|year}-{placed_at|month}#{ok}" }
      GSI3: { pk: "{placed_at|year}" }
  Small:
    from: smalls
    key: { pk: "SMALL#{n}#{amount}", sk: "{tag}" }
`

func ownsCatalog() *mapping.Catalog {
	col := func(name, typ string, k pgkind.Kind) mapping.Column {
		return mapping.Column{Name: name, Type: pgkind.Type{Name: typ, Kind: k}, NotNull: true}
	}
	return &mapping.Catalog{Tables: map[string]*mapping.Table{
		"public.customers": {Schema: "public", Name: "customers", PrimaryKey: []string{"customer_id"}, Unique: [][]string{{"customer_id"}},
			Columns: []mapping.Column{
				col("customer_id", "bigint", pgkind.Int), col("email", "text", pgkind.Text),
				col("since", "date", pgkind.Date), col("code", "character(3)", pgkind.Text),
				col("joined_at", "timestamp with time zone", pgkind.Timestamptz),
			}},
		"public.orders": {Schema: "public", Name: "orders", PrimaryKey: []string{"order_id"}, Unique: [][]string{{"order_id"}},
			Columns: []mapping.Column{
				col("order_id", "integer", pgkind.Int), col("customer_id", "bigint", pgkind.Int),
				col("placed_at", "timestamp without time zone", pgkind.Timestamp), col("total", "numeric(5,2)", pgkind.Numeric),
				col("delta", "smallint", pgkind.Int), col("uid", "uuid", pgkind.UUID), col("ok", "boolean", pgkind.Bool),
			}},
		"public.smalls": {Schema: "public", Name: "smalls", PrimaryKey: []string{"n", "amount"}, Unique: [][]string{{"n", "amount"}},
			Columns: []mapping.Column{
				col("n", "smallint", pgkind.Int), col("amount", "numeric(5,2)", pgkind.Numeric),
				col("tag", "character varying(4)", pgkind.Text),
			}},
	}}
}

// TestOwnerNearMisses: keys that look like the mapping's but that no row
// of the source's types can produce are not owned, and the real ones are.
func TestOwnerNearMisses(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("m.yaml", []byte(ownsMapping))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := transform.Compile(m, ownsCatalog())
	if err != nil {
		t.Fatal(err)
	}
	owner := plan.Owner()
	type kv = map[string]string
	cases := []struct {
		name   string
		entity string
		keys   kv
		want   bool
	}{
		{"customer", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE"}, true},
		{"negative bigint", "Customer", kv{"PK": "CUSTOMER#-42", "SK": "PROFILE"}, true},
		{"text in a bigint slot", "Customer", kv{"PK": "CUSTOMER#abc", "SK": "PROFILE"}, false},
		{"leading zero in a bigint", "Customer", kv{"PK": "CUSTOMER#042", "SK": "PROFILE"}, false},
		{"plus sign", "Customer", kv{"PK": "CUSTOMER#+42", "SK": "PROFILE"}, false},
		{"beyond bigint", "Customer", kv{"PK": "CUSTOMER#9223372036854775808", "SK": "PROFILE"}, false},
		{"extra separator", "Customer", kv{"PK": "CUSTOMER#42#1", "SK": "PROFILE"}, false},
		{"other sort key", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE#2"}, false},
		{"index keys", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI1PK": "EMAIL#ann@example.com", "GSI1SK": "SINCE#2024-02-29"}, true},
		{"upper case where lower wrote", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI1PK": "EMAIL#Ann@example.com", "GSI1SK": "SINCE#2024-02-29"}, false},
		{"no such date", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI1PK": "EMAIL#ann@example.com", "GSI1SK": "SINCE#2023-02-29"}, false},
		{"another date format", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI1PK": "EMAIL#ann@example.com", "GSI1SK": "SINCE#2024/02/28"}, false},
		{"one index key of two", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI1PK": "EMAIL#ann@example.com"}, false},
		{"shard in range", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#AB#3", "GSI2SK": "AT#2024-05-01T10:00:00.500000Z"}, true},
		{"shard out of range", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#AB#4", "GSI2SK": "AT#2024-05-01T10:00:00.500000Z"}, false},
		{"char(3) too long", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#ABCD#1", "GSI2SK": "AT#2024-05-01T10:00:00.500000Z"}, false},
		{"char(3) with its blanks", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#AB #1", "GSI2SK": "AT#2024-05-01T10:00:00.500000Z"}, false},
		{"timestamp without fixed fraction", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#AB#1", "GSI2SK": "AT#2024-05-01T10:00:00.5Z"}, false},
		{"timestamp with an offset", "Customer", kv{"PK": "CUSTOMER#42", "SK": "PROFILE", "GSI2PK": "CODE#AB#1", "GSI2SK": "AT#2024-05-01T10:00:00.500000+01:00"}, false},

		{"order", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981"}, true},
		{"wrong padding width", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#0000981"}, false},
		{"padded beyond integer", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#99999999"}, true},
		{"order indexes", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981",
			"GSI1PK": "DAY#2024-05-01", "GSI1SK": "TOTAL#000019.90#-9957",
			"GSI2PK": "ID#0b5f8f2e-6d0e-4a8e-9a39-6f7e0c1d2e3f", "GSI2SK": "2024-05#true", "GSI3PK": "2024"}, true},
		{"decimal beyond numeric(5,2)", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI1PK": "DAY#2024-05-01", "GSI1SK": "TOTAL#123456.00#0042"}, false},
		{"decimal of a negative zero", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI1PK": "DAY#2024-05-01", "GSI1SK": "TOTAL#-999999.99#0042"}, false},
		{"signed of the wrong width", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI1PK": "DAY#2024-05-01", "GSI1SK": "TOTAL#000019.90#42"}, false},
		{"signed of a negative zero", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI1PK": "DAY#2024-05-01", "GSI1SK": "TOTAL#000019.90#-9999"}, false},
		{"date of the wrong format", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI1PK": "DAY#01.05.2024", "GSI1SK": "TOTAL#000019.90#0042"}, false},
		{"uuid in capitals", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI2PK": "ID#0B5F8F2E-6D0E-4A8E-9A39-6F7E0C1D2E3F", "GSI2SK": "2024-05#true"}, false},
		{"month 13", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI2PK": "ID#0b5f8f2e-6d0e-4a8e-9a39-6f7e0c1d2e3f", "GSI2SK": "2024-13#true"}, false},
		{"bool spelled t", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI2PK": "ID#0b5f8f2e-6d0e-4a8e-9a39-6f7e0c1d2e3f", "GSI2SK": "2024-05#t"}, false},
		{"year as a number", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI3PK": "-44"}, true},
		{"year with a fraction", "Order", kv{"PK": "CUSTOMER#7", "SK": "ORDER#00000981", "GSI3PK": "2024.5"}, false},

		{"small", "Small", kv{"PK": "SMALL#-32768#-1.50", "SK": "abcd"}, true},
		{"beyond smallint", "Small", kv{"PK": "SMALL#32768#1.50", "SK": "abcd"}, false},
		{"numeric(5,2) with another scale", "Small", kv{"PK": "SMALL#1#1.5", "SK": "abcd"}, false},
		{"numeric(5,2) too large", "Small", kv{"PK": "SMALL#1#1000.00", "SK": "abcd"}, false},
		{"numeric with an exponent", "Small", kv{"PK": "SMALL#1#1e2", "SK": "abcd"}, false},
		{"numeric negative zero", "Small", kv{"PK": "SMALL#1#-0.00", "SK": "abcd"}, false},
		{"varchar(4) too long", "Small", kv{"PK": "SMALL#1#1.50", "SK": "abcde"}, false},
		{"unknown entity", "Other", kv{"PK": "SMALL#1#1.50", "SK": "abcd"}, false},
	}
	for _, tc := range cases {
		got := owner.Owns(tc.entity, func(name string) (string, bool) {
			v, ok := tc.keys[name]
			return v, ok
		})
		if got != tc.want {
			t.Errorf("%s: Owns(%s, %v) = %v, want %v", tc.name, tc.entity, tc.keys, got, tc.want)
		}
	}
}
