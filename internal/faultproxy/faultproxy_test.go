package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// upstream is a fake DynamoDB that stores the raw write requests it gets.
type upstream struct {
	srv *httptest.Server

	mu       sync.Mutex
	received []string // raw PutRequest JSON
	calls    map[string]int
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{calls: map[string]int{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		u.mu.Lock()
		u.calls[op]++
		u.mu.Unlock()
		var resp string
		switch op {
		case "BatchWriteItem":
			var req struct{ RequestItems map[string][]json.RawMessage }
			if err := json.Unmarshal(body, &req); err != nil {
				w.WriteHeader(400)
				return
			}
			u.mu.Lock()
			for _, reqs := range req.RequestItems {
				for _, r := range reqs {
					u.received = append(u.received, compact(r))
				}
			}
			u.mu.Unlock()
			resp = `{"UnprocessedItems":{}}`
		case "DescribeTable":
			resp = `{"Table":{"TableName":"t","TableStatus":"ACTIVE"}}`
		default:
			resp = `{}`
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(resp))), 10))
		io.WriteString(w, resp)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) got() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.received)
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

func startProxy(t *testing.T, up string, cfg Config) *Proxy {
	t.Helper()
	p, err := Start(up, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// client is a DynamoDB client without retries, so each call is one attempt.
func client(endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// batch builds a BatchWriteItem of n puts; tag makes bodies distinct.
func batch(tag string, n int) *dynamodb.BatchWriteItemInput {
	var reqs []types.WriteRequest
	for i := range n {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"PK":  &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", tag, i)},
			"num": &types.AttributeValueMemberN{Value: "12345678901234567890123456789.0123456789"},
			"bin": &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}},
		}}})
	}
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": reqs}}
}

func TestPassThrough(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := startProxy(t, up.srv.URL, Config{Seed: 1, Rate: 1})
	out, err := client(p.URL()).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Table.TableStatus != types.TableStatusActive {
		t.Errorf("table = %+v", out.Table)
	}
	s := p.Stats()
	if p.Requests("DescribeTable") != 1 || p.Requests("BatchWriteItem") != 0 || len(s.Faults) != 0 || s.Forwarded != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	statusOf := func(err error) int {
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			return re.HTTPStatusCode()
		}
		return 0
	}
	isConnErr := func(err error) bool {
		var se *smithyhttp.RequestSendError
		return errors.As(err, &se)
	}
	tests := []struct {
		fault     Fault
		items     int
		check     func(t *testing.T, err error)
		forwarded int // requests the upstream must have received; -1: checked by the test
	}{
		{ProvisionedThroughputExceeded, 5, func(t *testing.T, err error) {
			var e *types.ProvisionedThroughputExceededException
			if !errors.As(err, &e) || statusOf(err) != 400 {
				t.Errorf("err = %v", err)
			}
		}, 0},
		{Throttling, 5, func(t *testing.T, err error) {
			var e *types.ThrottlingException
			if !errors.As(err, &e) || statusOf(err) != 400 {
				t.Errorf("err = %v", err)
			}
		}, 0},
		{InternalError, 5, func(t *testing.T, err error) {
			var e *types.InternalServerError
			if !errors.As(err, &e) || statusOf(err) != 500 {
				t.Errorf("err = %v", err)
			}
		}, 0},
		{Unavailable, 5, func(t *testing.T, err error) {
			if statusOf(err) != 503 {
				t.Errorf("err = %v", err)
			}
		}, 0},
		{DropRequest, 5, func(t *testing.T, err error) {
			if !isConnErr(err) {
				t.Errorf("err = %v, want a connection error", err)
			}
		}, 0},
		{DropResponse, 5, func(t *testing.T, err error) {
			if !isConnErr(err) {
				t.Errorf("err = %v, want a connection error", err)
			}
		}, 5},
		{Unprocessed, 1, func(t *testing.T, err error) {
			var e *types.ProvisionedThroughputExceededException
			if !errors.As(err, &e) {
				t.Errorf("a single request withheld should be a throttle, err = %v", err)
			}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.fault, tt.items), func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t)
			p := startProxy(t, up.srv.URL, Config{Seed: 7, Rate: 1, Faults: []Fault{tt.fault}})
			_, err := client(p.URL()).BatchWriteItem(context.Background(), batch("x", tt.items))
			tt.check(t, err)
			if got := len(up.got()); got != tt.forwarded {
				t.Errorf("upstream received %d requests, want %d", got, tt.forwarded)
			}
			if n := p.Requests("BatchWriteItem"); n != 1 {
				t.Errorf("counted %d BatchWriteItem calls", n)
			}
			total := 0
			for _, n := range p.Stats().Faults {
				total += n
			}
			if total != 1 {
				t.Errorf("faults = %v", p.Stats().Faults)
			}
		})
	}
}

func TestUnprocessedSplitsAndMerges(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		up := newUpstream(t)
		p := startProxy(t, up.srv.URL, Config{Seed: seed, Rate: 1, Faults: []Fault{Unprocessed}})
		in := batch(fmt.Sprint(seed), 25)
		out, err := client(p.URL()).BatchWriteItem(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		unprocessed := out.UnprocessedItems["t"]
		forwarded := up.got()
		if len(unprocessed) == 0 || len(forwarded) == 0 || len(unprocessed)+len(forwarded) != 25 {
			t.Fatalf("seed %d: %d unprocessed + %d forwarded, want a proper split of 25", seed, len(unprocessed), len(forwarded))
		}
		if p.Stats().Withheld != len(unprocessed) {
			t.Errorf("withheld %d, returned %d", p.Stats().Withheld, len(unprocessed))
		}
		seen := map[string]bool{}
		for _, f := range forwarded {
			var r struct {
				PutRequest struct{ Item map[string]map[string]any }
			}
			if err := json.Unmarshal([]byte(f), &r); err != nil {
				t.Fatal(err)
			}
			seen[r.PutRequest.Item["PK"]["S"].(string)] = true
			if !strings.Contains(f, `"12345678901234567890123456789.0123456789"`) || !strings.Contains(f, `"AAEC/w=="`) {
				t.Errorf("forwarded request altered: %s", f)
			}
		}
		for _, u := range unprocessed {
			item := u.PutRequest.Item
			pk := item["PK"].(*types.AttributeValueMemberS).Value
			if seen[pk] {
				t.Errorf("%s both forwarded and returned unprocessed", pk)
			}
			seen[pk] = true
			if item["num"].(*types.AttributeValueMemberN).Value != "12345678901234567890123456789.0123456789" ||
				!bytes.Equal(item["bin"].(*types.AttributeValueMemberB).Value, []byte{0, 1, 2, 255}) {
				t.Errorf("unprocessed item altered: %+v", item)
			}
		}
		if len(seen) != 25 {
			t.Errorf("%d distinct items accounted for", len(seen))
		}
	}
}

// outcomes sends the bodies in order (each body n times) and returns the
// fault seen per body and attempt.
func outcomes(t *testing.T, p *Proxy, tags []string, attempts int) map[string]string {
	t.Helper()
	c := client(p.URL())
	res := map[string]string{}
	for _, tag := range tags {
		for a := range attempts {
			_, err := c.BatchWriteItem(context.Background(), batch(tag, 3))
			kind := "ok"
			if err != nil {
				kind = err.Error()
				if i := strings.Index(kind, "api error "); i >= 0 {
					kind = kind[i:]
				}
				if strings.Contains(kind, "EOF") || strings.Contains(kind, "connection reset") {
					kind = "dropped"
				}
			}
			res[fmt.Sprintf("%s/%d", tag, a)] = kind
		}
	}
	return res
}

func TestReproducible(t *testing.T) {
	t.Parallel()
	var tags []string
	for i := range 40 {
		tags = append(tags, fmt.Sprint("b", i))
	}
	reversed := slices.Clone(tags)
	slices.Reverse(reversed)
	run := func(seed uint64, order []string) map[string]string {
		up := newUpstream(t)
		return outcomes(t, startProxy(t, up.srv.URL, Config{Seed: seed, Rate: 0.5}), order, 2)
	}
	a := run(42, tags)
	b := run(42, reversed) // arrival order does not matter
	c := run(43, tags)
	faults := 0
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %q with one order, %q with another", k, v, b[k])
		}
		if v != "ok" {
			faults++
		}
	}
	if faults < 20 || faults > 60 {
		t.Errorf("%d faults in 80 calls at rate 0.5", faults)
	}
	same := 0
	for k, v := range a {
		if c[k] == v {
			same++
		}
	}
	if same == len(a) {
		t.Error("a different seed gave the same faults")
	}
}

func TestRate(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p, err := New(up.srv.URL, Config{Seed: 3, Rate: 0.3, Faults: []Fault{Throttling, InternalError}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	faulted := 0
	for i := range n {
		body := fmt.Sprintf(`{"RequestItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"%d"}}}}]}}`, i)
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.BatchWriteItem")
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		if rec.Code != 200 {
			faulted++
		}
	}
	if faulted < n*25/100 || faulted > n*35/100 {
		t.Errorf("%d of %d calls faulted at rate 0.3", faulted, n)
	}
	s := p.Stats()
	if s.Requests["BatchWriteItem"] != n || s.Faults[Throttling]+s.Faults[InternalError] != faulted {
		t.Errorf("stats = %+v", s)
	}
	if s.Faults[Throttling] < faulted/3 || s.Faults[InternalError] < faulted/3 {
		t.Errorf("fault kinds unevenly drawn: %v", s.Faults)
	}
}

// A retried call draws again: a retry loop ends.
func TestRetryDrawsAgain(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := startProxy(t, up.srv.URL, Config{Seed: 9, Rate: 0.7, Faults: []Fault{Throttling}})
	c := client(p.URL())
	in := batch("same", 3)
	for attempt := 1; ; attempt++ {
		if _, err := c.BatchWriteItem(context.Background(), in); err == nil {
			break
		}
		if attempt == 50 {
			t.Fatal("the same body faulted 50 times in a row")
		}
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		up  string
		cfg Config
	}{
		{"not a url", Config{}},
		{"http://x", Config{Rate: 1.5}},
		{"http://x", Config{Faults: []Fault{"Nope"}}},
	} {
		if _, err := New(tt.up, tt.cfg); err == nil {
			t.Errorf("New(%q, %+v) accepted", tt.up, tt.cfg)
		}
	}
}
