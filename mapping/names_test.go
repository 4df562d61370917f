package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

func TestTableAndIndexNames(t *testing.T) {
	t.Parallel()
	doc := func(table, index string) string {
		return "table: " + table + "\nkeys: { partition: PK, sort: SK }\nindexes:\n  " + index + ": { partition: GSI1PK }\n" +
			"entities:\n  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n"
	}
	cases := []struct {
		name, table, index string
		want               []string
	}{
		{"valid", "Shop.v2-main_1", "by.email-1_x", nil},
		{"table too short", "ab", "GSI1", []string{`m.yaml:1:8: table name "ab" has 2 characters; DynamoDB needs 3 to 255`}},
		{"table too long", strings.Repeat("t", 256), "GSI1", []string{`m.yaml:1:8: table name "` + strings.Repeat("t", 256) + `" has 256 characters; DynamoDB needs 3 to 255`}},
		{"longest table", strings.Repeat("t", 255), "GSI1", nil},
		{"table with space", `"My Shop"`, "GSI1", []string{`m.yaml:1:8: table name "My Shop": character ' ' at offset 2 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`}},
		{"table with non-ASCII", "Bücher", "GSI1", []string{`m.yaml:1:8: table name "Bücher": character 'ü' at offset 1 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`}},
		{"index too short", "Shop", "G1", []string{`m.yaml:4:3: index name "G1" has 2 characters; DynamoDB needs 3 to 255`}},
		{"index with slash", "Shop", "by/email", []string{`m.yaml:4:3: index name "by/email": character '/' at offset 2 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`}},
		{"both at once", "a:b", "ix#", []string{
			`m.yaml:1:8: table name "a:b": character ':' at offset 1 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`,
			`m.yaml:4:3: index name "ix#": character '#' at offset 2 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := mapping.Parse("m.yaml", []byte(doc(tc.table, tc.index)))
			var got []string
			if err != nil {
				for _, d := range err.(mapping.Diagnostics) {
					got = append(got, d.String())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
}

func TestTableNameProblem(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{"abc": true, "a.b": true, "A-_9": true, "ab": false, "": false, "a b": false, "ta$ble": false} {
		if got := mapping.TableNameProblem("table", name) == ""; got != ok {
			t.Errorf("TableNameProblem(%q) accepted = %v, want %v", name, got, ok)
		}
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	src := header + `  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "EMAIL#{email}" }
    index: { GSI1: { pk: "EMAIL#{email}", sk: "CUSTOMER" } }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id:10}" }
`
	m, err := mapping.Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, testCatalog()); ds != nil {
		t.Fatalf("a warning must not be an error: %v", ds)
	}
	var got []string
	for _, d := range mapping.Warnings(m, testCatalog()) {
		got = append(got, d.String())
	}
	// Only the table key: the index's NULL email makes a sparse index.
	want := []string{`m.yaml:8:53: warning: Customer key.sk: column "email" of public.customers is nullable: NULL rows will be rejected (the item's key cannot be built); add NOT NULL to the column, or key on another column`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}
