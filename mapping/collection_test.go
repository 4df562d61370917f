package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

const collectionEntities = header + `  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    index: { GSI1: { pk: "EMAIL#{email}", sk: CUSTOMER } }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{order_id}" }
  Shipment:
    from: orders
    key: { pk: "SHIP#{order_id}", sk: SHIPMENT }
accessPatterns:
`

// TestCollectionPatterns: an item-collection pattern (sql per entity)
// parses into one query per entity, in order, and every refusal is pinned.
func TestCollectionPatterns(t *testing.T) {
	t.Parallel()
	ok := collectionEntities + `  customerWithOrders:
    params: { id: customers.customer_id }
    query: { pk: "CUSTOMER#{id}" }
    sql:
      Customer: SELECT name FROM customers WHERE customer_id = @id
      Order: |
        SELECT order_id FROM orders WHERE customer_id = @id ORDER BY order_id
`
	m, err := mapping.Parse("m.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, testCatalog()); ds != nil {
		t.Fatal(ds)
	}
	ap := m.AccessPatterns[0]
	if len(ap.Collection) != 2 || ap.Collection[0].Entity != "Customer" || ap.Collection[1].Entity != "Order" || ap.SQL != "" ||
		!strings.HasPrefix(ap.Collection[1].SQL, "SELECT order_id") || strings.Join(ap.SQLParams(), ",") != "id" {
		t.Fatalf("collection parsed as %+v (params %v)", ap.Collection, ap.SQLParams())
	}
	if p := ap.Collection[1].SQLOffsetPos(7); p != (mapping.Pos{Line: 23, Col: 16}) {
		t.Errorf("offset 7 of Order's sql at %v, want 23:16", p)
	}

	cases := []struct {
		name, src string
		check     bool
		want      []string
	}{
		{"unknown entity", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    query: { pk: \"CUSTOMER#{id}\" }\n    sql: { Customer: SELECT 1, Ordr: SELECT 2 }\n", true,
			[]string{`m.yaml:20:32: access pattern p: sql of Ordr: no entity is named "Ordr" (did you mean "Order"?)`}},
		{"entity in another partition", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    query: { pk: \"CUSTOMER#{id}\" }\n    sql: { Customer: SELECT 1, Shipment: SELECT 2 }\n", true,
			[]string{`m.yaml:20:32: access pattern p: sql of Shipment: Shipment does not share the partition key "CUSTOMER#{id}" on the table (it writes "SHIP#{order_id}")`}},
		{"entity not in the index", collectionEntities + "  p:\n    params: { e: customers.email }\n    query: { index: GSI1, pk: \"EMAIL#{e}\" }\n    sql: { Customer: SELECT 1, Order: SELECT 2 }\n", true,
			[]string{`m.yaml:20:32: access pattern p: sql of Order: Order writes no item to index GSI1, so the collection cannot hold it`}},
		{"collection with get", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    get: { pk: \"CUSTOMER#{id}\", sk: PROFILE }\n    sql: { Customer: SELECT 1 }\n", false,
			[]string{`m.yaml:20:12: access pattern p: sql per entity makes an item collection, which a query reads (GetItem returns one item)`}},
		{"collection with limit", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    query: { pk: \"CUSTOMER#{id}\", limit: 3 }\n    sql: { Customer: SELECT 1 }\n", false,
			[]string{`m.yaml:20:12: access pattern p: sql per entity cannot take limit: the limit cuts the collection's items in sort key order, which no entity's query alone can follow`}},
		{"undeclared parameter in an entity's sql", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    query: { pk: \"CUSTOMER#{id}\" }\n    sql: { Customer: SELECT @ids }\n", false,
			[]string{`m.yaml:20:29: access pattern p: sql of Customer uses @ids, which is not a parameter (did you mean "id"?)`}},
		{"empty collection", collectionEntities + "  p:\n    params: { id: customers.customer_id }\n    query: { pk: \"CUSTOMER#{id}\" }\n    sql: {}\n", false,
			[]string{`m.yaml:20:10: access pattern p: sql is empty: write a query, or one query per entity of an item collection`}},
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
