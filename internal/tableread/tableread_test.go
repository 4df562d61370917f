package tableread

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type item = map[string]types.AttributeValue

func S(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// fakeTable is an in-memory table serving Scan (segments by key modulo,
// pages of two items) and BatchGetItem (the first call of each chunk
// leaves the last key unprocessed).
type fakeTable struct {
	mu     sync.Mutex
	items  []item
	calls  map[string]int
	segs   map[int32]bool
	holdUp bool
}

func (f *fakeTable) count(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
}

func (f *fakeTable) Scan(ctx context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.count("Scan")
	seg, total := aws.ToInt32(in.Segment), max(aws.ToInt32(in.TotalSegments), 1)
	f.mu.Lock()
	if f.segs == nil {
		f.segs = map[int32]bool{}
	}
	f.segs[seg] = true
	f.mu.Unlock()
	var mine []item
	for i, it := range f.items {
		if int32(i)%total == seg {
			mine = append(mine, it)
		}
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		for i, it := range mine {
			if it["PK"].(*types.AttributeValueMemberS).Value == in.ExclusiveStartKey["PK"].(*types.AttributeValueMemberS).Value {
				start = i + 1
			}
		}
	}
	end := min(start+2, len(mine))
	out := &dynamodb.ScanOutput{Items: mine[start:end], ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}
	if end < len(mine) {
		out.LastEvaluatedKey = item{"PK": mine[end-1]["PK"]}
	}
	return out, nil
}

func (f *fakeTable) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.count("BatchGetItem")
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]item{}, UnprocessedKeys: map[string]types.KeysAndAttributes{}}
	for table, ka := range in.RequestItems {
		keys := ka.Keys
		if len(keys) > 1 || f.holdUp {
			out.UnprocessedKeys[table] = types.KeysAndAttributes{Keys: keys[len(keys)-1:]}
			keys = keys[:len(keys)-1]
		}
		for _, k := range keys {
			for _, it := range f.items {
				if it["PK"].(*types.AttributeValueMemberS).Value == k["PK"].(*types.AttributeValueMemberS).Value {
					out.Responses[table] = append(out.Responses[table], it)
				}
			}
		}
		out.ConsumedCapacity = append(out.ConsumedCapacity, types.ConsumedCapacity{CapacityUnits: aws.Float64(float64(len(keys)) / 2)})
	}
	return out, nil
}

func (f *fakeTable) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if aws.ToString(in.TableName) == "missing" {
		return nil, &types.ResourceNotFoundException{Message: aws.String("no table")}
	}
	if aws.ToString(in.TableName) == "broken" {
		return nil, errors.New("boom")
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{KeySchema: []types.KeySchemaElement{
		{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
	}}}, nil
}

func newFake(n int) *fakeTable {
	f := &fakeTable{}
	for i := range n {
		f.items = append(f.items, item{"PK": S(fmt.Sprintf("K%d", i))})
	}
	return f
}

func keysOf(items []item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["PK"].(*types.AttributeValueMemberS).Value)
	}
	sort.Strings(out)
	return out
}

func TestScan(t *testing.T) {
	t.Parallel()
	for _, segments := range []int{0, 1, 3, 8} {
		t.Run(fmt.Sprint(segments), func(t *testing.T) {
			t.Parallel()
			f := newFake(25)
			var got []item
			st, err := Scan(t.Context(), f, ScanConfig{Table: "T", Segments: segments}, func(it item) error {
				got = append(got, it) // no lock: visit is serialized
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keysOf(got), keysOf(f.items)) {
				t.Errorf("scanned %v", keysOf(got))
			}
			wantSegs := max(segments, 1)
			if segments == 0 {
				wantSegs = 4
			}
			if len(f.segs) != wantSegs || st.Items != 25 || st.Calls != int64(f.calls["Scan"]) || st.ReadUnits != float64(st.Calls)/2 {
				t.Errorf("segments %d, stats %+v, calls %v", len(f.segs), st, f.calls)
			}
		})
	}
	t.Run("visit error stops the scan", func(t *testing.T) {
		t.Parallel()
		f := newFake(50)
		stop := errors.New("stop")
		_, err := Scan(t.Context(), f, ScanConfig{Table: "T", Segments: 2}, func(item) error { return stop })
		if !errors.Is(err, stop) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestGet(t *testing.T) {
	t.Parallel()
	f := newFake(10)
	keys := []item{{"PK": S("K1")}, {"PK": S("K3")}, {"PK": S("nope")}, {"PK": S("K9")}}
	got, st, err := Get(t.Context(), f, GetConfig{Table: "T", BaseDelay: 1}, keys)
	if err != nil {
		t.Fatal(err)
	}
	if g := keysOf(got); !slices.Equal(g, []string{"K1", "K3", "K9"}) {
		t.Errorf("got %v", g)
	}
	// 4 keys -> 3 processed + 1 left; 1 key -> processed.
	if st.Calls != 2 || st.Items != 3 || st.ReadUnits != 2 {
		t.Errorf("stats %+v", st)
	}
	if _, _, err := Get(t.Context(), f, GetConfig{Table: "T"}, make([]item, 101)); err == nil {
		t.Error("101 keys accepted")
	}
	stuck := newFake(3)
	stuck.holdUp = true
	if _, _, err := Get(t.Context(), stuck, GetConfig{Table: "T", MaxAttempts: 3, BaseDelay: 1}, keys[:1]); !errors.Is(err, ErrUnprocessed) {
		t.Errorf("err = %v, want ErrUnprocessed", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := Get(ctx, stuck, GetConfig{Table: "T", BaseDelay: 1e9}, keys[:1]); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	f := &fakeTable{}
	d, err := Describe(t.Context(), f, "missing")
	if d != nil || err != nil {
		t.Errorf("missing table: %v %v", d, err)
	}
	if _, err := Describe(t.Context(), f, "broken"); err == nil {
		t.Error("error swallowed")
	}
	d, err = Describe(t.Context(), f, "T")
	if err != nil {
		t.Fatal(err)
	}
	if pk, sk := KeyNames(d); pk != "PK" || sk != "SK" {
		t.Errorf("keys %q %q", pk, sk)
	}
}
