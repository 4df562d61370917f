package engine

import (
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

func TestRejectColumn(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("m.yaml", []byte(`
table: Books
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
entities:
  Book:
    from: books
    key: { pk: "BOOK#{book_id}", sk: "BOOK#{book_id}#{title}" }
    attributes:
      title: title
      price: list_price
    index:
      GSI1: { pk: "{isbn}", sk: "BOOK" }
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ reason, want string }{
		{"DynamoDB rejected the item: ValidationException: One or more parameter values were invalid: Type mismatch for Index Key GSI1PK Expected: S Actual: N IndexName: GSI1", "isbn"},
		{"DynamoDB rejected the item: ValidationException: attribute price: number overflow", "list_price"},
		{"DynamoDB rejected the item: ValidationException: Type mismatch for key PK", "book_id"},
		{"DynamoDB rejected the item: ValidationException: Type mismatch for key SK", ""},         // two columns
		{"DynamoDB rejected the item: ValidationException: Supplied AttributeValue is empty", ""}, // names nothing
		{"DynamoDB rejected the item: ValidationException: pricey", ""},                           // not a whole word
	}
	for _, tc := range tests {
		if got := rejectColumn(m, "Book", tc.reason); got != tc.want {
			t.Errorf("rejectColumn(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
	if got := rejectColumn(m, "Nope", tests[0].reason); got != "" {
		t.Errorf("an unknown entity: %q", got)
	}
}
