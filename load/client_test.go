package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/pgdynamo/migrate/contract"
)

var testCreds = credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")

func testClientConfig(endpoint string) ClientConfig {
	return ClientConfig{Endpoint: endpoint, Region: "us-east-1", Credentials: testCreds}
}

// fakeEndpoint answers DynamoDB JSON calls with handle's status and body.
func fakeEndpoint(t *testing.T, handle func(op string, body []byte) (int, string)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		status, resp := handle(op, body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(resp))), 10))
		w.WriteHeader(status)
		io.WriteString(w, resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestNewClientUnreachableFailsFast(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused

	client, err := NewClient(context.Background(), testClientConfig("http://"+addr))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK"})
	if err != nil {
		t.Fatal(err)
	}
	var acked atomic.Int32
	items := numbered(100, 1)
	for i := range items {
		items[i].Ack = func() { acked.Add(1) }
	}
	start := time.Now()
	_, err = w.Write(context.Background(), feed(items...))
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to give up on an unreachable endpoint", d)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v", err)
	}
	if acked.Load() != 0 {
		t.Errorf("%d acks", acked.Load())
	}
}

// Under sustained throttling the SDK's default retry quota (500 tokens, 5
// per retry) would fail calls with "retry quota exceeded" after about 100
// retries. NewClient's retryer has no quota.
func TestNewClientNoRetryQuota(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := fakeEndpoint(t, func(string, []byte) (int, string) {
		if n.Add(1)%2 == 1 {
			return 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`
		}
		return 200, `{"UnprocessedItems":{}}`
	})
	cc := testClientConfig(srv.URL)
	cc.MaxBackoff = time.Millisecond
	client, err := NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	in := (&Writer{cfg: Config{Table: "t"}}).input([]*pending{{item: item("A", "B")}})
	for i := range 300 {
		if _, err := client.BatchWriteItem(context.Background(), in); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := n.Load(); got != 600 {
		t.Errorf("%d attempts, want 600", got)
	}
}

// The writer owns the retries of its calls: the SDK makes one attempt (so
// that every throttle reaches the rate limiter at once, and every re-send
// waits for it), and the writer re-sends the throttled batch.
func TestWriteOwnsRetries(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := fakeEndpoint(t, func(string, []byte) (int, string) {
		if n.Add(1) == 1 {
			return 400, `{"__type":"com.amazon.coral.availability#ThrottlingException","message":"slow down"}`
		}
		return 200, `{}`
	})
	cc := testClientConfig(srv.URL)
	cc.MaxBackoff = time.Millisecond
	client, err := NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1, RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := w.Write(context.Background(), feed(numbered(10, 1)...))
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || stats.Calls != 2 || stats.SDKRetries != 0 || stats.ThrottledCalls != 1 ||
		stats.Total.Throttled != 10 || stats.Total.Retries != 10 || stats.Total.Written != 10 {
		t.Errorf("%d attempts; stats = %+v", n.Load(), stats)
	}
}

// The writer sends its own encoding of the requests (withBody): it must
// be what the SDK would send for the same input, every escaping rule
// included, byte for byte in each value (only the order of map keys may
// differ, as between two calls of the SDK), and bodies stay under 16 MB
// while being packed close to it.
func TestWriterBodiesAreTheSDKs(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	srv := fakeEndpoint(t, func(op string, body []byte) (int, string) {
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		return 200, `{}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t\"\u2028", PartitionKey: "PK", SortKey: "SK", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ugly := strings.Repeat("\x01\"\\\n\r\t\x7f\u2028\u2029é\xff😀", 15_000) // every escaping rule, ~300 KB
	var items []contract.Item
	for i := range 30 {
		it := item(fmt.Sprintf("P#%d", i), "S")
		it.Attrs["ugly"] = &types.AttributeValueMemberS{Value: ugly}
		it.Attrs["bin"] = &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 0xff, byte(i)}}
		it.Attrs["n"] = &types.AttributeValueMemberN{Value: "-1.50e3"}
		it.Attrs["t"] = &types.AttributeValueMemberBOOL{Value: true}
		it.Attrs["nul"] = &types.AttributeValueMemberNULL{Value: true}
		it.Attrs["ss"] = &types.AttributeValueMemberSS{Value: []string{"a\"", "b\x00"}}
		it.Attrs["ns"] = &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}}
		it.Attrs["bs"] = &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}
		it.Attrs["empty"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		it.Attrs["nested"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"l":     &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "7"}, &types.AttributeValueMemberNULL{Value: true}}},
			"m":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
			"k\"ey": &types.AttributeValueMemberS{Value: ""},
		}}
		items = append(items, it)
	}
	if _, err := w.Write(context.Background(), feed(items...)); err != nil {
		t.Fatal(err)
	}
	var sent []map[string]json.RawMessage
	biggest := 0
	for _, body := range bodies {
		if len(body) > MaxBatchBytes {
			t.Errorf("request of %d bytes", len(body))
		}
		biggest = max(biggest, len(body))
		sent = append(sent, requestItems(t, body, w.cfg.Table)...)
	}
	if biggest < MaxBatchBytes*3/4 {
		t.Errorf("largest request %d bytes: batches are packed too conservatively", biggest)
	}
	if len(sent) != len(items) {
		t.Fatalf("%d items sent, want %d", len(sent), len(items))
	}
	for _, got := range sent {
		var pk struct{ S string }
		if err := json.Unmarshal(got["PK"], &pk); err != nil {
			t.Fatal(err)
		}
		var i int
		fmt.Sscanf(pk.S, "P#%d", &i)
		want := requestItems(t, mustSDKBody(t, w.cfg.Table, items[i]), w.cfg.Table)[0]
		if len(got) != len(want) {
			t.Fatalf("item %d: %d attributes, the SDK sends %d", i, len(got), len(want))
		}
		for name, raw := range want {
			if name == "nested" { // a map: key order may differ
				if !jsonEqual(t, got[name], raw) {
					t.Errorf("item %d attribute %s:\n got  %s\n want %s", i, name, got[name], raw)
				}
				continue
			}
			if !bytes.Equal(got[name], raw) {
				t.Errorf("item %d attribute %s:\n got  %.200s\n want %.200s", i, name, got[name], raw)
			}
		}
	}
}

// requestItems decodes a BatchWriteItem body into the put items' attributes.
func requestItems(t *testing.T, body []byte, table string) []map[string]json.RawMessage {
	t.Helper()
	var req struct {
		RequestItems map[string][]struct {
			PutRequest struct{ Item map[string]json.RawMessage }
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if len(req.RequestItems) != 1 || req.RequestItems[table] == nil {
		t.Fatalf("body is not for table %q: %.200s", table, body)
	}
	var out []map[string]json.RawMessage
	for _, r := range req.RequestItems[table] {
		out = append(out, r.PutRequest.Item)
	}
	return out
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// mustSDKBody is the body the SDK itself serializes for a call writing it.
func mustSDKBody(t *testing.T, table string, it contract.Item) []byte {
	t.Helper()
	var got []byte
	srv := fakeEndpoint(t, func(_ string, body []byte) (int, string) {
		got = body
		return 200, `{}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.BatchWriteItem(context.Background(), (&Writer{cfg: Config{Table: table}}).input([]*pending{{item: it}})); err != nil {
		t.Fatal(err)
	}
	return got
}

// AWS_ENDPOINT_URL_DYNAMODB and AWS_REGION work as they do for any SDK tool.
func TestNewClientEnvironment(t *testing.T) {
	var hits atomic.Int32
	srv := fakeEndpoint(t, func(string, []byte) (int, string) {
		hits.Add(1)
		return 200, `{}`
	})
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.URL)
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	client, err := NewClient(context.Background(), ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if client.Options().Region != "eu-west-1" {
		t.Errorf("region = %q", client.Options().Region)
	}
	if _, err := client.BatchWriteItem(context.Background(), (&Writer{cfg: Config{Table: "t"}}).input([]*pending{{item: item("A", "B")}})); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Errorf("endpoint from the environment not used")
	}
}

func TestClientConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (ClientConfig{}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	if err := (ClientConfig{Concurrency: -1}).WithDefaults().Validate(); err == nil {
		t.Error("negative concurrency accepted")
	}
}
