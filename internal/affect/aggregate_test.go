package affect

import (
	"testing"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// An aggregate is a dependency of the parent on its child table, as an
// embed is: a change of an order line re-renders its book, and the old
// version of a line must carry the column it joins the book by (a line
// moved to another book re-renders both).
func TestAggregateEdges(t *testing.T) {
	t.Parallel()
	src := `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Book:
    from: books
    key: { pk: "BOOK#{book_id}", sk: BOOK }
    aggregate:
      unitsSold: { sum: quantity, from: order_items, join: { book_id: book_id }, where: "unit_price > 0" }
`
	m, err := mapping.Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cat := bookstoreCatalog()
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(plan, cat)
	if err != nil {
		t.Fatal(err)
	}
	var lines *Requirement
	for _, r := range g.Requirements() {
		if r.Table.Name == "order_items" {
			lines = &r
		}
	}
	if lines == nil {
		t.Fatalf("order_items is not a table sync follows: %v", g.Tables())
	}
	if len(lines.Columns) != 1 || lines.Columns[0] != "book_id" || len(lines.Why) != 1 ||
		lines.Why[0] != "Book aggregates public.order_items into unitsSold by book_id" {
		t.Errorf("order_items requirement: %+v", *lines)
	}
	// The primary key (order_id, book_id) carries book_id: no FULL needed.
	if err := lines.Check(extract.Identity{Mode: extract.IdentityDefault, Columns: []string{"order_id", "book_id"}}); err != nil {
		t.Errorf("default identity: %v", err)
	}
	if err := lines.Check(extract.Identity{Mode: extract.IdentityDefault, Columns: []string{"order_id"}}); err == nil {
		t.Errorf("an identity without book_id must not do")
	}
}
