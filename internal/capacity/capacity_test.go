package capacity

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

func S(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestEstimate(t *testing.T) {
	t.Parallel()
	e := New(Config{
		PartitionKey:  "PK",
		Indexes:       []load.Index{{Name: "GSI1", PartitionKey: "G1PK", SortKey: "G1SK"}, {Name: "GSI2", PartitionKey: "G2PK"}},
		TopPartitions: 2,
		WriteRate:     10,
		Copies:        []CopySet{{Entity: "Book", From: "authors", Attributes: []string{"authorName", "authorBorn"}}},
	})
	// sizes: "PK"(2)+len(pk) + "v"(1)+len(v) [+ index attrs]
	add := func(entity, pk string, vlen int, extra map[string]types.AttributeValue) {
		attrs := map[string]types.AttributeValue{"PK": S(pk), "v": S(strings.Repeat("x", vlen))}
		for k, v := range extra {
			attrs[k] = v
		}
		e.Add(entity, pk, attrs)
		e.Partition(pk, load.ItemSize(attrs))
	}
	add("Book", "A", 97, map[string]types.AttributeValue{"authorName": S("x")}) // 2+1+1+97 + 10+1 = 112
	add("Book", "A", 997, nil)                                                  // 2+1+1+997 = 1001
	add("Book", "B", 2000, map[string]types.AttributeValue{"G1PK": S("k1"), "G1SK": S("s")})
	add("Order", "C", 10, map[string]types.AttributeValue{"G1PK": S("k1")}) // no G1SK: not in GSI1
	add("Order", "C", 10, map[string]types.AttributeValue{"G2PK": S("k2")})
	add("Order", "C", 10, map[string]types.AttributeValue{"G2PK": S("k3")})
	est := e.Estimate()

	if est.Items != 6 || est.MaxItemKey != "B" || est.MaxItemEntity != "Book" {
		t.Errorf("items %d, max %q %q", est.Items, est.MaxItemKey, est.MaxItemEntity)
	}
	// table: 1 + 1 + 2 + 1 + 1 + 1 = 7; GSI1: 2 (book B); GSI2: 1 + 1
	if est.TableWriteUnits != 7 || est.WriteUnits != 11 {
		t.Errorf("write units table %d total %d, want 7 and 11", est.TableWriteUnits, est.WriteUnits)
	}
	if want := 11 / 1e6 * 0.625; math.Abs(est.CostUSD-want) > 1e-12 || est.Seconds != 0.6 {
		t.Errorf("cost %v seconds %v", est.CostUSD, est.Seconds)
	}
	got := fmt.Sprint(est.Indexes)
	// GSI1: book B, 2015 bytes + 100 of overhead; GSI2: two 20-byte items.
	if want := "[{GSI1 ALL 1 2 2115 2 2115 1 true} {GSI2 ALL 2 2 240 2 240 2 true}]"; got != want {
		t.Errorf("indexes %s, want %s", got, want)
	}
	if got := fmt.Sprint(est.TopByItems); got != "[{C 3 60} {A 2 1113}]" {
		t.Errorf("top by items %s", got)
	}
	if got := fmt.Sprint(est.TopByBytes); got != "[{B 1 2015} {A 2 1113}]" {
		t.Errorf("top by bytes %s", got)
	}
	// 112 -> [0,128); 1001 -> [512,1K); 2015 -> [1K,2K); 20 x3 -> [0,128)
	var bins []string
	for _, b := range est.Histogram {
		bins = append(bins, fmt.Sprintf("%d-%d:%d", b.Min, b.Max, b.Items))
	}
	if got, want := strings.Join(bins, " "), "0-128:4 128-256:0 256-512:0 512-1024:1 1024-2048:1"; got != want {
		t.Errorf("histogram %s, want %s", got, want)
	}
	if len(est.Copies) != 1 || est.Copies[0].Items != 1 {
		t.Errorf("copies %+v", est.Copies)
	}
	// Book's items are in partitions A and B, Order's all in C.
	if got := fmt.Sprint(est.Entities); got != "[{Book 3 3128 2015 6 2 true} {Order 3 60 20 5 1 true}]" {
		t.Errorf("entities %s", got)
	}
}

func TestBinOf(t *testing.T) {
	t.Parallel()
	for size, want := range map[int]int{0: 0, 127: 0, 128: 1, 1023: 3, 1024: 4, 300 << 10: 12, 400 << 10: 12} {
		if got := binOf(size); got != want {
			t.Errorf("binOf(%d) = %d, want %d", size, got, want)
		}
	}
}

func TestDistinct(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 1000, ExactDistinctLimit, ExactDistinctLimit + 1, 300_000} {
		var d distinct
		for i := range n {
			d.add(fmt.Sprintf("STATUS#%d", i))
			if i%3 == 0 {
				d.add(fmt.Sprintf("STATUS#%d", i)) // repeats do not count
			}
		}
		got, exact := d.count()
		if exact != (n <= ExactDistinctLimit) {
			t.Errorf("n=%d: exact=%v", n, exact)
		}
		if exact && got != int64(n) {
			t.Errorf("n=%d: exact count %d", n, got)
		}
		// 4 standard errors of HyperLogLog at 2^14 registers
		if !exact && math.Abs(float64(got)-float64(n))/float64(n) > 4*0.0081 {
			t.Errorf("n=%d: estimate %d off by more than 3.2%%", n, got)
		}
	}
}

// Projections change what an index entry holds, so its write units and
// storage; the estimate shows them beside what ALL would cost.
func TestEstimateProjections(t *testing.T) {
	t.Parallel()
	e := New(Config{
		PartitionKey: "PK", SortKey: "SK",
		Indexes: []load.Index{
			{Name: "all", PartitionKey: "G"},
			{Name: "keys", PartitionKey: "G", Projection: types.ProjectionTypeKeysOnly},
			{Name: "include", PartitionKey: "G", Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"v"}},
		},
	})
	// PK(2+1) SK(2+1) G(1+1) v(1+10) big(3+3000) = 3022 bytes
	attrs := map[string]types.AttributeValue{"PK": S("a"), "SK": S("b"), "G": S("g"), "v": S(strings.Repeat("v", 10)), "big": S(strings.Repeat("z", 3000))}
	e.Add("E", "a", attrs)
	est := e.Estimate()
	got := fmt.Sprint(est.Indexes)
	// keys: 3+3+2 = 8 bytes; include: 8 + 11 = 19
	if want := "[{all ALL 1 3 3122 3 3122 1 true} {keys KEYS_ONLY 1 1 108 3 3122 1 true} {include INCLUDE 1 1 119 3 3122 1 true}]"; got != want {
		t.Errorf("indexes %s\nwant %s", got, want)
	}
	if est.WriteUnits != 3+3+1+1 {
		t.Errorf("write units %d, want 8", est.WriteUnits)
	}
	if est.StorageBytes != 3122+3122+108+119 {
		t.Errorf("storage %d, want %d", est.StorageBytes, 3122+3122+108+119)
	}
}

func TestCopySets(t *testing.T) {
	t.Parallel()
	m := &mapping.Mapping{Entities: []*mapping.Entity{
		{Name: "Book", Copies: []*mapping.Copy{{From: "authors", Attributes: []*mapping.Attribute{{Name: "authorName"}, {Name: "authorBorn"}}}}},
		{Name: "OrderLine", Copies: []*mapping.Copy{{From: "books", Attributes: []*mapping.Attribute{{Name: "title"}},
			Copies: []*mapping.Copy{{From: "authors", Attributes: []*mapping.Attribute{{Name: "authorName"}}}}}}},
		{Name: "Txn", Copies: []*mapping.Copy{{From: "customers", Into: "customer", Attributes: []*mapping.Attribute{{Name: "name"}},
			Copies: []*mapping.Copy{{From: "reps", Into: "rep", Attributes: []*mapping.Attribute{{Name: "name"}}}}}}},
	}}
	got := fmt.Sprint(CopySets(m))
	want := "[{Book authors [authorName authorBorn]} {OrderLine books [title]} {OrderLine books > authors [authorName]} {Txn customers [customer]} {Txn customers > reps [customer]}]"
	if got != want {
		t.Errorf("CopySets = %s\nwant %s", got, want)
	}
}

// TestDistinctKeysByValue: numbers are one partition key when DynamoDB
// stores them as one (1.0 and 1); strings and numbers never are.
func TestDistinctKeysByValue(t *testing.T) {
	t.Parallel()
	e := New(Config{PartitionKey: "PK", Indexes: []load.Index{{Name: "g", PartitionKey: "G"}}})
	for i, g := range []types.AttributeValue{
		&types.AttributeValueMemberN{Value: "1"}, &types.AttributeValueMemberN{Value: "1.0"}, &types.AttributeValueMemberN{Value: "10e-1"},
		&types.AttributeValueMemberS{Value: "1"}, &types.AttributeValueMemberN{Value: "2"},
	} {
		e.Add("E", "a", map[string]types.AttributeValue{"PK": S(fmt.Sprint(i)), "G": g})
	}
	if got := e.Estimate().Indexes[0].DistinctPartitionKeys; got != 3 {
		t.Errorf("distinct partition keys %d, want 3 (N 1, S 1, N 2)", got)
	}
}
