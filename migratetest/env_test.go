package migratetest_test

import (
	"testing"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/migratetest"
)

// Order is how the application reads an order item.
type Order struct {
	OrderID      int     `dynamodbav:"orderId"`
	Total        float64 `dynamodbav:"total"`
	CustomerName string  `dynamodbav:"customerName"`
	SK           string  `dynamodbav:"SK"`
}

// TestEnvMigratesAMapping is what a user's test of their own mapping looks
// like (README, "Testing your own mapping").
func TestEnvMigratesAMapping(t *testing.T) {
	t.Parallel()
	env := migratetest.New(t)
	env.ExecFile(t, "testdata/shop.sql")
	res := env.Migrate(t, "testdata/shop.yaml")
	if res.Total.ItemsWritten != 5 {
		t.Fatalf("%d items written, want 5", res.Total.ItemsWritten)
	}

	items := env.Query(t, engine.QueryInput{PK: "CUSTOMER#1", SKPrefix: "ORDER#", Desc: true})
	var orders []Order
	if err := engine.UnmarshalItems(items, &orders); err != nil {
		t.Fatal(err)
	}
	want := []Order{
		{OrderID: 11, Total: 5, CustomerName: "Ada", SK: "ORDER#2024-06-02T11:30:00.000000Z#00000011"},
		{OrderID: 10, Total: 19.9, CustomerName: "Ada", SK: "ORDER#2024-05-01T10:00:00.000000Z#00000010"},
	}
	if len(orders) != len(want) {
		t.Fatalf("orders of customer 1: %+v", orders)
	}
	for i := range want {
		if orders[i] != want[i] {
			t.Errorf("order %d: %+v, want %+v", i, orders[i], want[i])
		}
	}
	if all := env.Items(t); len(all) != 5 || all[0]["PK"] == nil {
		t.Errorf("Items: %d items", len(all))
	}
}
