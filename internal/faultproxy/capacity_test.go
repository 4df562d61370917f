package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// puts builds a BatchWriteItem of n puts with the given partition keys
// (cycled) and a body of size bytes each.
func puts(tag string, n int, pks []string, size int) *dynamodb.BatchWriteItemInput {
	var reqs []types.WriteRequest
	for i := range n {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"PK":   &types.AttributeValueMemberS{Value: pks[i%len(pks)]},
			"SK":   &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", tag, i)},
			"body": &types.AttributeValueMemberS{Value: strings.Repeat("x", size)},
		}}})
	}
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": reqs}}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	// Rates of a unit per second or less refill less than a unit between
	// two calls, so the buckets hold what Burst gave them.
	tests := []struct {
		name      string
		capacity  Capacity
		calls     []*dynamodb.BatchWriteItemInput
		written   []int // per call; -1: ProvisionedThroughputExceededException
		units     float64
		refused   int
		overCalls int
	}{
		{"table limit", Capacity{TableWCU: 1, Burst: 30 * time.Second},
			[]*dynamodb.BatchWriteItemInput{puts("a", 25, []string{"p"}, 10), puts("b", 25, []string{"p"}, 10), puts("c", 25, []string{"p"}, 10)},
			[]int{25, 5, -1}, 30, 45, 2},
		{"partition limit", Capacity{PartitionWCU: 1, Partitions: 4, PartitionKey: "PK", Burst: 10 * time.Second},
			[]*dynamodb.BatchWriteItemInput{puts("a", 25, []string{"hot"}, 10), puts("b", 4, []string{"hot", "h1", "h2", "h3"}, 10)},
			[]int{10, -2}, -2, -2, 2},
		{"large items cost more", Capacity{TableWCU: 1, Burst: 5 * time.Second},
			[]*dynamodb.BatchWriteItemInput{puts("a", 2, []string{"p"}, 3000)},
			[]int{1}, 3, 1, 1},
		{"partition limit only", Capacity{PartitionWCU: 1000, PartitionKey: "PK"},
			[]*dynamodb.BatchWriteItemInput{puts("a", 25, []string{"p"}, 5000)},
			[]int{25}, 125, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := StartSink(Config{Capacity: tt.capacity})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			c := client(p.URL())
			for i, in := range tt.calls {
				out, err := c.BatchWriteItem(context.Background(), in)
				n := len(in.RequestItems["t"])
				switch want := tt.written[i]; {
				case want == -1:
					var e *types.ProvisionedThroughputExceededException
					if !errors.As(err, &e) {
						t.Errorf("call %d: err = %v, want ProvisionedThroughputExceededException", i, err)
					}
				case want == -2:
					// The hot partition is empty, the others are not: the
					// requests refused are exactly those of the hot
					// partition (other keys may hash to it too).
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					partition := func(pk string) int {
						return p.partitionOf([]byte(`{"PutRequest":{"Item":{"PK":{"S":"` + pk + `"}}}}`))
					}
					refused := map[string]bool{}
					for _, r := range out.UnprocessedItems["t"] {
						refused[r.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value] = true
					}
					for _, r := range in.RequestItems["t"] {
						pk := r.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value
						if hot := partition(pk) == partition("hot"); refused[pk] != hot {
							t.Errorf("call %d: %s (hot partition: %v) refused: %v", i, pk, hot, refused[pk])
						}
					}
					if len(refused) == len(in.RequestItems["t"]) {
						t.Errorf("call %d: every key hashed to the hot partition; pick others", i)
					}
				default:
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					if got := n - len(out.UnprocessedItems["t"]); got != want {
						t.Errorf("call %d: %d of %d written, want %d", i, got, n, want)
					}
				}
			}
			s := p.Stats()
			if tt.units >= 0 && (s.WriteUnits != tt.units || s.Refused != tt.refused) {
				t.Errorf("stats: %v units written, %d refused; want %v, %d", s.WriteUnits, s.Refused, tt.units, tt.refused)
			}
			if s.OverCapacity != tt.overCalls {
				t.Errorf("%d calls over capacity, want %d", s.OverCapacity, tt.overCalls)
			}
		})
	}
}

func TestCapacityValidates(t *testing.T) {
	t.Parallel()
	for _, c := range []Capacity{{TableWCU: -1}, {PartitionWCU: 1000}, {Partitions: -1}} {
		if _, err := New("http://x", Config{Capacity: c}); err == nil {
			t.Errorf("capacity %+v accepted", c)
		}
	}
}

func TestSinkAcknowledges(t *testing.T) {
	t.Parallel()
	p, err := StartSink(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	out, err := client(p.URL()).BatchWriteItem(context.Background(), batch("s", 25))
	if err != nil || len(out.UnprocessedItems) != 0 {
		t.Fatalf("sink: %v, %+v", err, out)
	}
	if s := p.Stats(); s.Forwarded != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// TestWriteUnitsBySizeRules: the proxy charges what DynamoDB would, by
// its size rules (strings and set elements by UTF-8 bytes, numbers by
// base-100 digit pairs). Its own estimate once counted set elements in
// runes, charging 1 unit for an item of 1,205 bytes.
func TestWriteUnitsBySizeRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		put  string
		want float64
	}{
		{"set elements by UTF-8 bytes", `{"PutRequest":{"Item":{"PK":{"S":"p"},"ss":{"SS":["` + strings.Repeat("é", 600) + `"]}}}}`, 2},
		{"strings by UTF-8 bytes", `{"PutRequest":{"Item":{"PK":{"S":"` + strings.Repeat("é", 512) + `"}}}}`, 2},
		{"one unit up to 1 KB", `{"PutRequest":{"Item":{"PK":{"S":"` + strings.Repeat("x", 1022) + `"}}}}`, 1},
		{"numbers by digit pairs", `{"PutRequest":{"Item":{"PK":{"S":"` + strings.Repeat("x", 1017) + `"},"n":{"N":"1e125"}}}}`, 1}, // 2+1017 + 1+2
		{"delete", `{"DeleteRequest":{"Key":{"PK":{"S":"p"}}}}`, 1},
		{"an item DynamoDB refuses", `{"PutRequest":{"Item":{"PK":{"NULL":false}}}}`, 1},
	}
	for _, tt := range tests {
		if got := writeUnits([]byte(tt.put)); got != tt.want {
			t.Errorf("%s: writeUnits = %v, want %v", tt.name, got, tt.want)
		}
	}
}
