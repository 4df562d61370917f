package mapping_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pgdynamo/migrate/mapping"
)

// Read a mapping file: its table, keys, entities with their key templates,
// and the access patterns it declares.
func ExampleParse() {
	data, err := os.ReadFile("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	m, err := mapping.Parse("bookstore.yaml", data)
	if err != nil {
		log.Fatal(err) // mapping.Diagnostics: every problem, file:line:col
	}
	fmt.Printf("table %s, keys %s/%s, entity attribute %q\n", m.Table, m.PartitionKey, m.SortKey, m.EntityAttribute)
	for _, e := range m.Entities {
		fmt.Printf("%-12s from %-11s pk %-26s sk %s\n", e.Name, e.From, e.PK.Raw, e.SK.Raw)
	}
	fmt.Println(len(m.AccessPatterns), "access patterns")
	// Output:
	// table Bookstore, keys PK/SK, entity attribute "type"
	// Customer     from customers   pk CUSTOMER#{customer_id}     sk PROFILE
	// Order        from orders      pk CUSTOMER#{customer_id}     sk ORDER#{placed_at}#{order_id:12}
	// OrderSummary from orders      pk ORDER#{order_id}           sk ORDER
	// OrderLine    from order_items pk ORDER#{order_id}           sk BOOK#{book_id:12}
	// Author       from authors     pk AUTHOR#{author_id}         sk PROFILE
	// Book         from books       pk BOOK#{book_id}             sk BOOK
	// 8 access patterns
}

// A mapping with mistakes: Parse reports every problem at once, each with
// its position, sorted, and a "did you mean" for a misspelt name.
func ExampleParse_diagnostics() {
	const bad = `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{id", sk: "PROFILE" }
    atributes: { name: name }
`
	_, err := mapping.Parse("shop.yaml", []byte(bad))
	var ds mapping.Diagnostics
	if errors.As(err, &ds) {
		for _, d := range ds {
			fmt.Println(d)
		}
	}
	// Output:
	// shop.yaml:6:26: key.pk: unclosed "{"
	// shop.yaml:7:5: unknown field "atributes" in entity Customer (did you mean "attributes"?)
}
