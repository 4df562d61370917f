package load

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestWriteUnits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ size, want int }{{0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {400 * 1024, 400}} {
		if got := WriteUnits(tt.size); got != tt.want {
			t.Errorf("WriteUnits(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
	indexes := []Index{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}, {Name: "GSI2", PartitionKey: "GSI2PK"}}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{"PK": s("a"), "SK": s("b"), "GSI1PK": s("x"), "GSI1SK": s("y"), "big": s(strings.Repeat("z", 2000))}
	if got := ItemWriteUnits(item, indexes); got != 2*2 {
		t.Errorf("ItemWriteUnits with one GSI = %d, want 4", got)
	}
	delete(item, "GSI1SK") // no longer in GSI1 (sparse)
	if got := ItemWriteUnits(item, indexes); got != 2 {
		t.Errorf("ItemWriteUnits without index keys = %d, want 2", got)
	}
	item["GSI2PK"] = s("q")
	if got := ItemWriteUnits(item, indexes); got != 4 {
		t.Errorf("ItemWriteUnits in GSI2 = %d, want 4", got)
	}
}
