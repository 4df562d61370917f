package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// Request bodies as the SDK really serializes them stay under 16 MB, and
// requestBytes bounds them from above.
func TestRequestBytesBoundsRealBodies(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sizes []int
	srv := fakeEndpoint(t, func(op string, body []byte) (int, string) {
		var req struct {
			RequestItems map[string][]json.RawMessage
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return 400, `{"__type":"SerializationException","message":"bad json"}`
		}
		mu.Lock()
		sizes = append(sizes, len(body))
		mu.Unlock()
		return 200, `{}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ugly := strings.Repeat("\x01\"\\\n\u2028é\xff", 30_000) // every escaping rule, ~300 KB
	var items []Item
	for i := range 30 {
		it := item(fmt.Sprintf("P#%d", i), "S")
		it.Attrs["ugly"] = &types.AttributeValueMemberS{Value: ugly}
		it.Attrs["bin"] = &types.AttributeValueMemberB{Value: make([]byte, 1000)}
		it.Attrs["nested"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "-1.5e3"}, &types.AttributeValueMemberNULL{Value: true}}},
			"ss": &types.AttributeValueMemberSS{Value: []string{"a\"", "b"}},
			"ok": &types.AttributeValueMemberBOOL{Value: false},
		}}
		items = append(items, it)
	}
	if est, real := requestBytes(items[0].Attrs), len(mustJSONItem(t, items[0])); est < real {
		t.Errorf("requestBytes = %d for a %d-byte request", est, real)
	}
	// For valid UTF-8 the bound is tight (an invalid byte is counted as the
	// six bytes of \ufffd; the SDK writes the three of U+FFFD).
	valid := items[0]
	valid.Attrs = maps.Clone(valid.Attrs)
	valid.Attrs["ugly"] = &types.AttributeValueMemberS{Value: strings.ReplaceAll(ugly, "\xff", "")}
	if est, real := requestBytes(valid.Attrs), len(mustJSONItem(t, valid)); est < real || est > real+real/100 {
		t.Errorf("requestBytes = %d for a %d-byte request: not a tight upper bound", est, real)
	}
	if _, err := w.Write(context.Background(), feed(items...)); err != nil {
		t.Fatal(err)
	}
	biggest := 0
	for _, s := range sizes {
		if s > MaxBatchBytes {
			t.Errorf("request of %d bytes", s)
		}
		biggest = max(biggest, s)
	}
	if biggest < MaxBatchBytes*3/4 {
		t.Errorf("largest request %d bytes: batches are packed too conservatively", biggest)
	}
}

// mustJSONItem serializes an item the way the SDK does, through a fake
// endpoint, and returns its PutRequest as sent.
func mustJSONItem(t *testing.T, it Item) []byte {
	t.Helper()
	var got []byte
	srv := fakeEndpoint(t, func(_ string, body []byte) (int, string) {
		var req struct {
			RequestItems map[string][]json.RawMessage
		}
		if err := json.Unmarshal(body, &req); err == nil {
			got = append(req.RequestItems["t"][0], ',')
		}
		return 200, `{}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.BatchWriteItem(context.Background(), (&Writer{cfg: Config{Table: "t"}}).input([]*pending{{item: it}})); err != nil {
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
