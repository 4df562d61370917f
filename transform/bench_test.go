package transform_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// BenchmarkApply measures the pure row-to-items cost of an order row that
// becomes two items (an item-collection entry with a copied attribute and
// a sharded index, and a summary item), the shape of the bookstore mapping.
func BenchmarkApply(b *testing.B) {
	cat := loadCatalog(b, "../testdata/transform/write_sharding/catalog.json")
	src := []byte(`table: Bench
keys: { partition: PK, sort: SK }
indexes:
  GSI2: { partition: GSI2PK, sort: GSI2SK }
entities:
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id:12}" }
    attributes: { orderId: order_id, status: status, placedAt: placed_at, total: total }
    index:
      GSI2: { pk: "STATUS#{status}#{shard}", sk: "{placed_at}", shard: { count: 14, by: order_id } }
  OrderSummary:
    from: orders
    key: { pk: "ORDER#{order_id}", sk: "ORDER" }
    attributes: "*"
`)
	m, err := mapping.Parse("bench.yaml", src)
	if err != nil {
		b.Fatal(err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		b.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		b.Fatal(err)
	}
	s := plan.Sources[0]
	rows := make([]extract.Row, 1024)
	for i := range rows {
		vals := make([]any, len(s.Query.Columns))
		for j, c := range s.Query.Columns {
			switch c.Name {
			case "order_id":
				vals[j] = int64(i + 1)
			case "customer_id":
				vals[j] = int64(i%97 + 1)
			case "status":
				vals[j] = "OPEN"
			case "placed_at":
				vals[j] = time.Date(2024, 1, 1, 0, 0, i, i*1000, time.UTC)
			case "total":
				vals[j] = extract.Decimal(fmt.Sprintf("%d.%02d", i, i%100))
			}
		}
		rows[i] = extract.Row{Values: vals}
	}
	b.ReportAllocs()
	b.ResetTimer()
	items := 0
	for i := 0; b.Loop(); i++ {
		out, errs := s.Apply(rows[i%len(rows)])
		if len(errs) > 0 {
			b.Fatal(errs[0])
		}
		items += len(out)
	}
	b.ReportMetric(float64(items)/b.Elapsed().Seconds(), "items/s")
}
