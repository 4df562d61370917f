package load

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/pgdynamo/migrate/contract"
)

// fakeDynamo is a BatchWriter for unit tests: it stores what it acknowledges
// and lets each test decide, per call, what DynamoDB answers.
type fakeDynamo struct {
	BatchWriter // nil: calling anything not overridden panics

	// batchWriteItem, if set, answers a call (n counts calls from 0). It
	// returns the requests to treat as unprocessed, or an error.
	batchWriteItem func(ctx context.Context, n int, reqs []types.WriteRequest) (unprocessed []types.WriteRequest, err error)

	mu      sync.Mutex
	calls   [][]types.WriteRequest
	stored  map[string]int // "PK|SK" -> times acknowledged
	deleted []string       // keys of acknowledged deletes, in order
}

// reqKey is the fakeKey of a put's item or a delete's key.
func reqKey(r types.WriteRequest) string {
	if r.DeleteRequest != nil {
		return fakeKey(r.DeleteRequest.Key)
	}
	return fakeKey(r.PutRequest.Item)
}

func newFake() *fakeDynamo { return &fakeDynamo{stored: map[string]int{}} }

func (f *fakeDynamo) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if len(in.RequestItems) != 1 {
		return nil, fmt.Errorf("fake: want requests for one table, got %d", len(in.RequestItems))
	}
	var table string
	var reqs []types.WriteRequest
	for k, v := range in.RequestItems {
		table, reqs = k, v
	}
	if len(reqs) == 0 || len(reqs) > MaxBatchItems {
		return nil, fmt.Errorf("fake: %d requests in one call", len(reqs))
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		k := reqKey(r)
		if seen[k] {
			return nil, fmt.Errorf("fake: duplicate key %s in one call", k)
		}
		seen[k] = true
	}
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, reqs)
	f.mu.Unlock()

	var unprocessed []types.WriteRequest
	if f.batchWriteItem != nil {
		var err error
		unprocessed, err = f.batchWriteItem(ctx, n, reqs)
		if err != nil {
			return nil, err
		}
	}
	skip := map[string]bool{}
	for _, r := range unprocessed {
		skip[reqKey(r)] = true
	}
	f.mu.Lock()
	for _, r := range reqs {
		k := reqKey(r)
		switch {
		case skip[k]:
		case r.DeleteRequest != nil:
			delete(f.stored, k)
			f.deleted = append(f.deleted, k)
		default:
			f.stored[k]++
		}
	}
	f.mu.Unlock()
	out := &dynamodb.BatchWriteItemOutput{}
	if len(unprocessed) > 0 {
		out.UnprocessedItems = map[string][]types.WriteRequest{table: unprocessed}
	}
	return out, nil
}

func (f *fakeDynamo) isStored(k string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stored[k] > 0
}

func (f *fakeDynamo) allCalls() [][]types.WriteRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]types.WriteRequest(nil), f.calls...)
}

func fakeKey(item map[string]types.AttributeValue) string {
	pk, _ := item["PK"].(*types.AttributeValueMemberS)
	sk, _ := item["SK"].(*types.AttributeValueMemberS)
	var p, s string
	if pk != nil {
		p = pk.Value
	}
	if sk != nil {
		s = sk.Value
	}
	return p + "|" + s
}

// fakeClock is a clock whose Sleep returns at once, advancing time.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testConfig is a Config for a PK/SK table with one GSI and fast retries.
func testConfig() Config {
	return Config{
		Table:          "t",
		PartitionKey:   "PK",
		SortKey:        "SK",
		Indexes:        []Index{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}},
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  5 * time.Millisecond,
		Linger:         5 * time.Millisecond,
	}
}

// bundle is what setup returns.
type bundle struct {
	fake   *fakeDynamo
	writer *Writer
	clock  *fakeClock // nil unless asked for
}

type setupOpt func(*Config, *bool)

func withFakeClock() setupOpt { return func(_ *Config, fc *bool) { *fc = true } }
func withConfig(f func(*Config)) setupOpt {
	return func(c *Config, _ *bool) { f(c) }
}

func setup(t *testing.T, opts ...setupOpt) *bundle {
	t.Helper()
	cfg := testConfig()
	fake := false
	for _, o := range opts {
		o(&cfg, &fake)
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := &bundle{fake: newFake()}
	var clk clock = realClock{}
	if fake {
		b.clock = newFakeClock()
		clk = b.clock
	}
	b.writer = newWriter(b.fake, cfg, clk)
	return b
}

// item builds a test item; entity is taken from the PK prefix.
func item(pk, sk string) contract.Item {
	return contract.Item{
		Attrs: map[string]types.AttributeValue{
			"PK":   &types.AttributeValueMemberS{Value: pk},
			"SK":   &types.AttributeValueMemberS{Value: sk},
			"data": &types.AttributeValueMemberS{Value: "x"},
		},
		Origin: contract.Origin{Entity: "thing", Table: "things", SourceKey: "id=" + pk + "/" + sk},
	}
}

// feed sends items on a channel, closing it after the last one.
func feed(items ...contract.Item) <-chan contract.Item {
	ch := make(chan contract.Item, len(items))
	for _, it := range items {
		ch <- it
	}
	close(ch)
	return ch
}

// numbered returns n items with distinct keys, PK-sorted, per PKs of perPK items.
func numbered(n, perPK int) []contract.Item {
	out := make([]contract.Item, n)
	for i := range out {
		out[i] = item(fmt.Sprintf("P#%05d", i/perPK), fmt.Sprintf("S#%05d", i%perPK))
	}
	return out
}

// acked wraps items with Ack callbacks that count and check that the fake
// stored the item before it was acknowledged.
type ackLog struct {
	mu    sync.Mutex
	count map[string]int
	early []string
}

func (a *ackLog) wrap(t *testing.T, f *fakeDynamo, items []contract.Item) []contract.Item {
	t.Helper()
	a.count = map[string]int{}
	out := make([]contract.Item, len(items))
	for i, it := range items {
		k := fakeKey(it.Attrs)
		it.Ack = func() {
			stored := f.isStored(k)
			a.mu.Lock()
			defer a.mu.Unlock()
			a.count[k]++
			if !stored {
				a.early = append(a.early, k)
			}
		}
		out[i] = it
	}
	return out
}

func (a *ackLog) total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.count {
		n += c
	}
	return n
}

// check verifies that every acknowledged item was stored first, and at most once.
func (a *ackLog) check(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.early) > 0 {
		t.Errorf("%d items acknowledged before DynamoDB stored them, e.g. %s", len(a.early), a.early[0])
	}
	for k, c := range a.count {
		if c != 1 {
			t.Errorf("item %s acknowledged %d times", k, c)
		}
	}
}
