package capacity

import (
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
)

// BenchmarkAdd is what plan pays per item for the estimate: size, write
// units, index entries and the distinct partition keys of each index and
// entity. Items spread over 5,000 partitions of two entities.
func BenchmarkAdd(b *testing.B) {
	e := New(Config{PartitionKey: "PK", SortKey: "SK", Indexes: []load.Index{{Name: "GSI1", PartitionKey: "G1PK", SortKey: "G1SK"}}})
	items := make([]map[string]types.AttributeValue, 10000)
	for i := range items {
		items[i] = map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#" + strconv.Itoa(i%5000)}, "SK": &types.AttributeValueMemberS{Value: "ORDER#" + strconv.Itoa(i)},
			"G1PK": &types.AttributeValueMemberS{Value: "STATUS#" + strconv.Itoa(i%7)}, "G1SK": &types.AttributeValueMemberS{Value: strconv.Itoa(i)},
			"total": &types.AttributeValueMemberN{Value: "19.90"}, "name": &types.AttributeValueMemberS{Value: "Somebody Else"},
		}
	}
	entities := []string{"Customer", "Order"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		it := items[i%len(items)]
		e.Add(entities[i%2], "k", it)
	}
}
