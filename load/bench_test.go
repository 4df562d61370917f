package load

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/pgdynamo/migrate/contract"
)

// nullDynamo acknowledges every write at once.
type nullDynamo struct{ BatchWriter }

func (nullDynamo) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// BenchmarkWrite measures the writer's own cost per item (checks, sizing,
// dedupe, interleaving, batching) against an endpoint that costs nothing.
func BenchmarkWrite(b *testing.B) {
	items := numbered(b.N, 10)
	w, err := NewWriter(nullDynamo{}, testConfig())
	if err != nil {
		b.Fatal(err)
	}
	ch := make(chan contract.Item, 1024)
	go func() {
		for _, it := range items {
			ch <- it
		}
		close(ch)
	}()
	b.ResetTimer()
	stats, err := w.Write(context.Background(), ch)
	if err != nil || stats.Total.Written != int64(b.N) {
		b.Fatalf("err %v, written %d of %d", err, stats.Total.Written, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
