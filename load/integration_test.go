package load_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

// integrationTable creates a fresh table on DynamoDB Local with load.EnsureTable
// and deletes it when the test ends.
func integrationTable(t *testing.T, prefix string) (endpoint string, direct *dynamodb.Client, cfg load.Config) {
	t.Helper()
	endpoint = migratetest.DynamoDBEndpoint(t)
	direct = migratetest.DynamoDBClient(t, endpoint)
	cfg = load.Config{
		Table:        migratetest.TableName(t, prefix),
		PartitionKey: "PK",
		SortKey:      "SK",
		Indexes:      []load.Index{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := load.EnsureTable(ctx, direct, cfg); err != nil {
		t.Fatalf("EnsureTable: %v", err)
	}
	t.Cleanup(func() {
		if _, err := direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)}); err != nil {
			t.Errorf("DeleteTable %s: %v", cfg.Table, err)
		}
	})
	return endpoint, direct, cfg
}

// richItems returns n items with every attribute type, 4 per partition,
// every third one in GSI1.
func richItems(n int) []contract.Item {
	items := make([]contract.Item, n)
	for i := range items {
		sk := "PROFILE"
		if i%4 != 0 {
			sk = fmt.Sprintf("ORDER#%05d", i)
		}
		attrs := map[string]types.AttributeValue{
			"PK":     &types.AttributeValueMemberS{Value: fmt.Sprintf("CUSTOMER#%05d", i/4)},
			"SK":     &types.AttributeValueMemberS{Value: sk},
			"name":   &types.AttributeValueMemberS{Value: fmt.Sprintf("Zoë Ångström 東京 #%d \"quoted\" \\ <tag>", i)},
			"note":   &types.AttributeValueMemberS{Value: ""},
			"amount": &types.AttributeValueMemberN{Value: fmt.Sprintf("1234567890123456789012345678.%02d", i%100)},
			"delta":  &types.AttributeValueMemberN{Value: fmt.Sprintf("-%d.50e-3", i)},
			"blob":   &types.AttributeValueMemberB{Value: []byte{byte(i), 0, 255, byte(i >> 8)}},
			"active": &types.AttributeValueMemberBOOL{Value: i%2 == 0},
			"gone":   &types.AttributeValueMemberNULL{Value: true},
			"tags":   &types.AttributeValueMemberSS{Value: []string{"a", fmt.Sprint("t", i%7)}},
			"scores": &types.AttributeValueMemberNS{Value: []string{"1", fmt.Sprint(i + 2)}},
			"addr": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"city":  &types.AttributeValueMemberS{Value: "Oslo"},
				"lines": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberN{Value: "7"}}},
			}},
		}
		if i%3 == 0 {
			attrs["GSI1PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("STATUS#%d", i%5)}
			attrs["GSI1SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("%05d", i)}
		}
		items[i] = contract.Item{Attrs: attrs, Origin: contract.Origin{Entity: []string{"customer", "order"}[min(i%4, 1)], Table: "src", SourceKey: fmt.Sprint("id=", i)}}
	}
	return items
}

// scanAll reads a whole table, bypassing the proxy.
func scanAll(t *testing.T, direct *dynamodb.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	pages := dynamodb.NewScanPaginator(direct, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// Through a proxy that faults 30% of BatchWriteItem calls (throttling,
// partial batches, 5xx, dropped connections before and after the write),
// every item ends up in the table exactly as sent, and is acknowledged once.
func TestIntegrationWriteThroughFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		sdkAttempts int // 1: the load.Writer alone retries
		n           int
	}{
		{"writer retries", 1, 2000},
		{"writer and SDK retries", 3, 1000},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			endpoint, direct, cfg := integrationTable(t, "load")
			// Partial batches drawn twice as often: with the faults
			// decided by each batch's contents, which the writer's timing
			// sets, the uniform draw left a run of ~110 calls without one
			// about once in a hundred runs.
			faults := append(slices.Clone(faultproxy.AllFaults), faultproxy.Unprocessed)
			proxy, err := faultproxy.Start(endpoint, faultproxy.Config{Seed: uint64(2024 + i), Rate: 0.3, Faults: faults})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(proxy.Close)
			client, err := load.NewClient(context.Background(), load.ClientConfig{
				Endpoint: proxy.URL(), Region: "us-east-1", Credentials: load.TestCreds,
				MaxAttempts: tt.sdkAttempts, MaxBackoff: 20 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg.RetryBaseDelay = 5 * time.Millisecond
			cfg.RetryMaxDelay = 100 * time.Millisecond
			cfg.MinWCU = 4000 // the emulator never really throttles: keep the test fast
			w, err := load.NewWriter(client, cfg)
			if err != nil {
				t.Fatal(err)
			}

			items := richItems(tt.n)
			var mu sync.Mutex
			acks := map[string]int{}
			for i := range items {
				k := fmt.Sprint(i)
				items[i].Ack = func() {
					mu.Lock()
					acks[k]++
					mu.Unlock()
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			stats, err := w.Write(ctx, load.Feed(items...))
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			ps := proxy.Stats()
			t.Logf("stats: %+v", stats)
			t.Logf("proxy: %+v", ps)

			if stats.Total.Written != int64(tt.n) || len(acks) != tt.n {
				t.Errorf("written %d, acked %d, want %d", stats.Total.Written, len(acks), tt.n)
			}
			for k, c := range acks {
				if c != 1 {
					t.Errorf("item %s acked %d times", k, c)
				}
			}
			kinds := 0
			for _, f := range faultproxy.AllFaults {
				if ps.Faults[f] > 0 {
					kinds++
				}
			}
			if kinds < 4 || (tt.n >= 2000 && ps.Withheld == 0) {
				t.Errorf("the proxy injected too few kinds of faults: %+v", ps)
			}
			if stats.Total.Retries == 0 || stats.Total.Throttled == 0 {
				t.Errorf("no retries or throttles counted: %+v", stats.Total)
			}
			if tt.sdkAttempts == 1 && int64(ps.Requests["BatchWriteItem"]) != stats.Calls {
				t.Errorf("proxy saw %d BatchWriteItem calls, the writer counted %d", ps.Requests["BatchWriteItem"], stats.Calls)
			}

			got := scanAll(t, direct, cfg.Table)
			if len(got) != tt.n {
				t.Errorf("table holds %d items, want %d", len(got), tt.n)
			}
			want := map[string]map[string]types.AttributeValue{}
			for _, it := range items {
				want[load.FakeKey(it.Attrs)] = it.Attrs
			}
			bad := 0
			for _, g := range got {
				k := load.FakeKey(g)
				w, ok := want[k]
				switch {
				case !ok:
					t.Errorf("unexpected item %s", k)
				case !ddbvalue.EqualItems(w, g):
					if bad++; bad <= 3 {
						t.Errorf("item %s differs:\nsent %v\ngot  %v", k, w, g)
					}
				}
				delete(want, k)
			}
			if len(want) > 0 {
				t.Errorf("%d items missing", len(want))
			}
		})
	}
}

func TestIntegrationEnsureTable(t *testing.T) {
	t.Parallel()
	_, direct, cfg := integrationTable(t, "ensure")
	ctx := context.Background()
	// Exists and matches.
	if err := load.EnsureTable(ctx, direct, cfg); err != nil {
		t.Fatalf("second EnsureTable: %v", err)
	}
	out, err := direct.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.Table)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Table.GlobalSecondaryIndexes) != 1 || out.Table.BillingModeSummary == nil ||
		out.Table.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("table = %+v", out.Table)
	}
	// Exists and differs.
	other := cfg
	other.SortKey = "sk"
	other.Indexes = append(other.Indexes, load.Index{Name: "GSI2", PartitionKey: "GSI2PK"})
	err = load.EnsureTable(ctx, direct, other)
	if !errors.Is(err, load.ErrTableMismatch) {
		t.Fatalf("err = %v, want ErrTableMismatch", err)
	}
	t.Log(err)
}

// DynamoDB Local enforces the limits the writer checks before sending: what
// the writer lets through, the engine accepts.
func TestIntegrationLimitsAgreeWithEngine(t *testing.T) {
	t.Parallel()
	endpoint, direct, cfg := integrationTable(t, "limits")
	client, err := load.NewClient(context.Background(), load.ClientConfig{Endpoint: endpoint, Region: "us-east-1", Credentials: load.TestCreds})
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxItemErrors = -1
	w, err := load.NewWriter(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	big := load.TestItem("BIG", "1")
	big.Attrs["blob"] = s(string(bytes.Repeat([]byte("x"), load.MaxItemSize-load.ItemSize(big.Attrs)-4)))
	if load.ItemSize(big.Attrs) != load.MaxItemSize {
		t.Fatalf("test item is %d bytes", load.ItemSize(big.Attrs))
	}
	longPK := load.TestItem(string(bytes.Repeat([]byte("p"), load.MaxPartitionKeyBytes)), "1")
	longSK := load.TestItem("SKLONG", string(bytes.Repeat([]byte("s"), load.MaxSortKeyBytes)))
	emptySet := load.TestItem("EMPTYSET", "1")
	emptySet.Attrs["set"] = &types.AttributeValueMemberSS{} // only the engine knows: a row error via validation
	_, err = w.Write(context.Background(), load.Feed(big, longPK, longSK, emptySet))
	var ie *contract.ItemError
	if !errors.As(err, &ie) || ie.Origin != emptySet.Origin {
		t.Fatalf("err = %v, want one item error for the empty set", err)
	}
	got := scanAll(t, direct, cfg.Table)
	if len(got) != 3 {
		t.Errorf("table holds %d items, want the 3 at the limits", len(got))
	}
}

// Against DynamoDB Local, every call but the first is sent directly (see
// direct.go) and its answers need no replay through the SDK; the table
// then holds exactly the items written.
func TestIntegrationDirectCalls(t *testing.T) {
	t.Parallel()
	endpoint, direct, cfg := integrationTable(t, "direct")
	client, err := load.NewClient(context.Background(), load.ClientConfig{Endpoint: endpoint, Region: "us-east-1", Credentials: load.TestCreds})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Concurrency = 1 // calls started before the first answer also go through the SDK
	w, err := load.NewWriter(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	items := richItems(n)
	stats, err := w.Write(context.Background(), load.Feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	sent, replayed := load.DirectCalls(w)
	if stats.Calls < 2 || sent != stats.Calls-1 || replayed != 0 {
		t.Errorf("%d calls, %d sent directly, %d answers replayed; want all but the first direct, none replayed", stats.Calls, sent, replayed)
	}
	got := scanAll(t, direct, cfg.Table)
	want := map[string]map[string]types.AttributeValue{}
	for _, it := range items {
		want[load.FakeKey(it.Attrs)] = it.Attrs
	}
	for _, g := range got {
		k := load.FakeKey(g)
		if w, ok := want[k]; !ok || !ddbvalue.EqualItems(w, g) {
			t.Errorf("item %s: table holds %v, written %v", k, g, w)
		}
		delete(want, k)
	}
	if len(want) > 0 || len(got) != n {
		t.Errorf("table holds %d items, %d of %d missing", len(got), len(want), n)
	}
}
