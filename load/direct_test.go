package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// received is a request as the endpoint received it.
type received struct {
	header http.Header
	host   string
	path   string
	body   []byte
}

// recordingEndpoint answers every call with 200 and an empty answer and
// keeps what it received.
func recordingEndpoint(t *testing.T) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), r.Host, r.URL.Path, body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		io.WriteString(w, `{"UnprocessedItems":{}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

// verifySignature signs the request as received again, with the test's
// credentials at its X-Amz-Date over the headers it says it signed, and
// compares the signatures.
func verifySignature(t *testing.T, r received) {
	t.Helper()
	auth := r.header.Get("Authorization")
	_, signedList, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok {
		t.Fatalf("no SignedHeaders in %q", auth)
	}
	signedList, _, _ = strings.Cut(signedList, ",")
	at, err := time.Parse("20060102T150405Z", r.header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+r.host+r.path, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{}
	for _, name := range strings.Split(signedList, ";") {
		if name != "host" {
			req.Header[http.CanonicalHeaderKey(name)] = r.header.Values(name)
		}
	}
	sum := sha256.Sum256(r.body)
	creds, _ := testCreds.Retrieve(context.Background())
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "dynamodb", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	if got, want := auth, req.Header.Get("Authorization"); got != want {
		t.Errorf("signature does not verify:\n got  %s\n want %s", got, want)
	}
}

// The writer's first call goes through the SDK; the later ones are sent
// directly, and must be what the SDK sends: the same body, the same
// operation headers, a valid SigV4 signature of what was received.
func TestDirectCallsAreTheSDKs(t *testing.T) {
	t.Parallel()
	srv, got := recordingEndpoint(t)
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := w.Write(context.Background(), feed(numbered(200, 7)...))
	if err != nil {
		t.Fatal(err)
	}
	reqs := got()
	if stats.Total.Written != 200 || int64(len(reqs)) != stats.Calls || stats.Calls < 8 {
		t.Fatalf("%d requests received, stats %+v", len(reqs), stats)
	}
	sent, replayed := w.direct.sent.Load(), w.direct.replayed.Load()
	if sent != stats.Calls-1 || replayed != 0 {
		t.Errorf("%d of %d calls sent directly (%d replayed), want all but the first (none)", sent, stats.Calls, replayed)
	}
	sdk := reqs[0]
	invocations := map[string]bool{}
	for i, r := range reqs {
		verifySignature(t, r)
		// Set per call, never repeated from the SDK's first one.
		id := r.header.Get("Amz-Sdk-Invocation-Id")
		if len(id) != 36 || invocations[id] {
			t.Errorf("request %d: invocation id %q, empty or seen before", i, id)
		}
		invocations[id] = true
		if got := r.header.Get("Amz-Sdk-Request"); got != "attempt=1; max=1" {
			t.Errorf("request %d: attempt header %q", i, got)
		}
		for _, h := range []string{"Content-Type", "X-Amz-Target", "User-Agent", "Accept-Encoding"} {
			if r.header.Get(h) != sdk.header.Get(h) || r.header.Get(h) == "" && h != "Accept-Encoding" {
				t.Errorf("request %d: %s %q, the SDK's %q", i, h, r.header.Get(h), sdk.header.Get(h))
			}
		}
		if r.path != sdk.path || r.host != sdk.host {
			t.Errorf("request %d went to %s%s, the SDK's to %s%s", i, r.host, r.path, sdk.host, sdk.path)
		}
	}
	var items []map[string]bool
	for _, r := range reqs {
		for _, it := range requestItems(t, r.body, "t") {
			items = append(items, map[string]bool{string(it["PK"]) + string(it["SK"]): true})
		}
	}
	if len(items) != 200 {
		t.Errorf("%d items in the bodies, want 200", len(items))
	}
}

// Every answer other than a plain success, and every transport error, is
// handed to the SDK: the writer sees the same output and the same error
// (type, text and class) as from a call the SDK made itself.
func TestDirectAnswersAreTheSDKs(t *testing.T) {
	t.Parallel()
	const unprocessed = `{"UnprocessedItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"P#1"},"SK":{"S":"S"},"data":{"S":"x"}}}}]}}`
	tests := []struct {
		name   string
		status int
		answer string
		crc    string // X-Amz-Crc32; "" computes it, "-" sends none
		drop   bool   // close the connection without answering
		class  errClass
	}{
		{name: "written", status: 200, answer: `{"UnprocessedItems":{}}`},
		{name: "written, no checksum", status: 200, answer: `{"UnprocessedItems":{}}`, crc: "-"},
		{name: "written, other fields", status: 200, answer: `{"ConsumedCapacity":[{"TableName":"t","CapacityUnits":2}],"UnprocessedItems":{}}`},
		{name: "unprocessed", status: 200, answer: unprocessed},
		{name: "bad checksum", status: 200, answer: `{"UnprocessedItems":{}}`, crc: "12345", class: classFatal},
		{name: "throttled", status: 400, answer: `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow"}`, class: classThrottle},
		{name: "rejected", status: 400, answer: `{"__type":"com.amazon.coral.validate#ValidationException","message":"Item size has exceeded the maximum allowed size"}`, class: classValidation},
		{name: "denied", status: 400, answer: `{"__type":"com.amazon.coral.service#AccessDeniedException","message":"no"}`, class: classFatal},
		{name: "server error", status: 500, answer: `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"oops"}`, class: classTransient},
		{name: "unavailable", status: 503, answer: ``, class: classTransient},
		{name: "dropped connection", drop: true, class: classTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			learning := true
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				first := learning
				mu.Unlock()
				if first {
					io.WriteString(w, `{"UnprocessedItems":{}}`)
					return
				}
				if tt.drop {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				switch tt.crc {
				case "":
					w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32Of(tt.answer)))
				case "-":
				default:
					w.Header().Set("X-Amz-Crc32", tt.crc)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.answer)
			}))
			t.Cleanup(srv.Close)
			client, err := NewClient(context.Background(), testClientConfig(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			it := item("P#1", "S")
			wr := &Writer{cfg: Config{Table: "t"}}
			input := func() *dynamodb.BatchWriteItemInput { return wr.input([]*pending{{item: it}}) }
			body := mustSDKBody(t, "t", it)
			d := newDirect(client)
			ctx := context.Background()
			if _, err := d.write(ctx, body, input, withBody(body), oneAttempt); err != nil || d.shape.Load() == nil {
				t.Fatalf("first call: %v (shape learned: %v)", err, d.shape.Load() != nil)
			}
			mu.Lock()
			learning = false
			mu.Unlock()

			viaSDK, sdkErr := client.BatchWriteItem(ctx, input(), withBody(body), oneAttempt)
			viaDirect, directErr := d.write(ctx, body, input, withBody(body), oneAttempt)
			if d.sent.Load() != 1 {
				t.Fatalf("the call was not sent directly")
			}
			if got, want := classify(ctx, directErr), classify(ctx, sdkErr); got != want || got != tt.class && sdkErr != nil {
				t.Errorf("class %v, the SDK's %v, want %v (errors: %v / %v)", got, want, tt.class, directErr, sdkErr)
			}
			if (directErr == nil) != (sdkErr == nil) {
				t.Fatalf("error %v, the SDK's %v", directErr, sdkErr)
			}
			// An answer that stops the run is the SDK's own, from a call it
			// made again; the direct path stays on (the SDK was refused too).
			if wantFallbacks := int64(b2i(tt.class == classFatal && sdkErr != nil)); d.fallbacks.Load() != wantFallbacks || d.off.Load() {
				t.Errorf("%d fallbacks to the SDK (want %d), direct path off: %v", d.fallbacks.Load(), wantFallbacks, d.off.Load())
			}
			if sdkErr != nil {
				if !tt.drop && directErr.Error() != sdkErr.Error() {
					t.Errorf("error\n %v\nthe SDK's\n %v", directErr, sdkErr)
				}
				if tt.drop && !errors.As(directErr, new(*smithyhttp.RequestSendError)) {
					t.Errorf("error %v is not a send error", directErr)
				}
				return
			}
			// An empty map and none are the same answer.
			if len(viaDirect.UnprocessedItems)+len(viaSDK.UnprocessedItems) > 0 && !reflect.DeepEqual(viaDirect.UnprocessedItems, viaSDK.UnprocessedItems) ||
				len(viaDirect.ConsumedCapacity)+len(viaSDK.ConsumedCapacity) > 0 && !reflect.DeepEqual(viaDirect.ConsumedCapacity, viaSDK.ConsumedCapacity) {
				t.Errorf("output %+v, the SDK's %+v", viaDirect, viaSDK)
			}
			if tt.answer == unprocessed && len(viaDirect.UnprocessedItems["t"]) != 1 {
				t.Errorf("unprocessed items lost: %+v", viaDirect.UnprocessedItems)
			}
			wantReplays := int64(1)
			if strings.HasPrefix(tt.name, "written") && !strings.Contains(tt.name, "other") {
				wantReplays = 0
			}
			if d.replayed.Load() != wantReplays {
				t.Errorf("%d answers replayed through the SDK, want %d", d.replayed.Load(), wantReplays)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A direct call refused with an answer that would stop the run is made
// again through the SDK whole; when the SDK's call succeeds, the direct
// path is wrong somewhere, and every later call goes through the SDK. The
// run completes and counts the fallback.
func TestDirectFallback(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := fakeEndpoint(t, func(op string, body []byte) (int, string) {
		if n.Add(1) == 3 { // the second direct call
			return 400, `{"__type":"com.amazon.coral.service#AccessDeniedException","message":"not for you"}`
		}
		return 200, `{"UnprocessedItems":{}}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := w.Write(context.Background(), feed(numbered(200, 7)...))
	if err != nil {
		t.Fatal(err)
	}
	// Calls: the SDK's first, two direct (the second refused, made again
	// by the SDK), then the SDK's only.
	if stats.Total.Written != 200 || stats.DirectCalls != 2 || stats.DirectFallbacks != 1 || !w.direct.off.Load() ||
		n.Load() != stats.Calls+1 {
		t.Errorf("stats %+v, %d requests, direct path off %v; want 2 direct calls, 1 fallback, then off", stats, n.Load(), w.direct.off.Load())
	}
}

// The SDK's request may carry only headers the direct path knows: the
// operation's, which it copies, and the per-call ones, which it sets. Any
// other (a later SDK version's, or a middleware's) keeps it off.
func TestDirectHeaderAllowList(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodPost, "http://x/", nil)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.BatchWriteItem")
	req.Header.Set("Amz-Sdk-Request", "attempt=1; max=1")
	req.Header.Set("Amz-Sdk-Invocation-Id", "x")
	shape, err := shapeOf(req)
	if err != nil || shape.header.Get("X-Amz-Target") == "" || shape.header.Get("Amz-Sdk-Invocation-Id") != "" || shape.maxAttempts != "1" {
		t.Fatalf("shape %+v, %v", shape, err)
	}
	req.Header.Set("X-Trace-Id", "1")
	if _, err := shapeOf(req); err == nil || !strings.Contains(err.Error(), "X-Trace-Id") {
		t.Errorf("a request with an unknown header: %v", err)
	}
	d := &direct{}
	d.opts.Logger = logging.Nop{}
	d.record(req, nil, nil)
	if !d.off.Load() {
		t.Errorf("direct path on for a request with an unknown header")
	}
}

// A caller's own client goes through the SDK whole on every call, so that
// its middleware runs each time: here a trace id that changes per call. So
// does a client made from the Options of one NewClient built.
func TestCallersClientGoesThroughTheSDK(t *testing.T) {
	t.Parallel()
	srv, got := recordingEndpoint(t)
	own, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	var traces atomic.Int64
	tracing := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Build.Add(middleware.BuildMiddlewareFunc("trace", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				in.Request.(*smithyhttp.Request).Header.Set("X-Trace-Id", fmt.Sprint(traces.Add(1)))
				return next.HandleBuild(ctx, in)
			}), middleware.After)
		})
	}
	callers := map[string]*dynamodb.Client{
		"built by the caller":           dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: testCreds}, tracing),
		"made from NewClient's options": dynamodb.New(own.Options(), tracing),
	}
	for name, client := range callers {
		before := len(got())
		w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		stats, err := w.Write(context.Background(), feed(numbered(200, 7)...))
		if err != nil {
			t.Fatal(err)
		}
		reqs := got()[before:]
		if w.direct != nil || stats.DirectCalls != 0 || int64(len(reqs)) != stats.Calls || stats.Calls < 8 {
			t.Fatalf("%s: direct path %v, %d requests, stats %+v", name, w.direct != nil, len(reqs), stats)
		}
		seen := map[string]bool{}
		for i, r := range reqs {
			id := r.header.Get("X-Trace-Id")
			if id == "" || seen[id] {
				t.Errorf("%s: request %d has trace id %q, empty or seen before", name, i, id)
			}
			seen[id] = true
		}
	}
}

// A request the direct path cannot repeat (not SigV4-signed) turns it off:
// every call then goes through the SDK.
func TestDirectOffWithoutSigV4(t *testing.T) {
	d := &direct{}
	d.opts.Logger = logging.Nop{}
	req := httptest.NewRequest(http.MethodPost, "http://x/", nil)
	req.Header.Set("Authorization", "Bearer token")
	d.record(req, nil, nil)
	if !d.off.Load() || d.shape.Load() != nil {
		t.Errorf("direct path still on for a request signed with %q", req.Header.Get("Authorization"))
	}
}

func crc32Of(s string) uint32 { return crc32.ChecksumIEEE([]byte(s)) }

// Config.SDKMiddleware keeps every call in the SDK's whole stack.
func TestSDKMiddlewareOption(t *testing.T) {
	t.Parallel()
	srv, got := recordingEndpoint(t)
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1, SDKMiddleware: true})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := w.Write(context.Background(), feed(numbered(100, 7)...))
	if err != nil {
		t.Fatal(err)
	}
	reqs := got()
	if w.direct != nil || stats.Total.Written != 100 || int64(len(reqs)) != stats.Calls || stats.Calls < 4 {
		t.Fatalf("direct path %v; %d requests, stats %+v", w.direct != nil, len(reqs), stats)
	}
	for i, r := range reqs {
		// Only the SDK's stack sends its invocation id.
		if r.header.Get("Amz-Sdk-Invocation-Id") == "" {
			t.Errorf("request %d did not go through the SDK's middleware", i)
		}
	}
}

// skewedClock answers as DynamoDB does when a request's X-Amz-Date is more
// than 5 minutes from its clock, which is ahead of the local one: HTTP
// 400, InvalidSignatureException, "Signature expired", and its Date on
// every answer. After stepAfter BatchWriteItem calls its clock jumps
// further ahead, as a host clock does after a sleep.
type skewedClock struct {
	ahead, step time.Duration
	stepAfter   int64
	calls       atomic.Int64 // BatchWriteItem calls received
	refused     atomic.Int64 // of those, refused as expired
}

func (c *skewedClock) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ahead := c.ahead
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" && c.calls.Add(1) > c.stepAfter {
			ahead += c.step
		}
		now := time.Now().Add(ahead).UTC()
		w.Header().Set("Date", now.Format(http.TimeFormat))
		const stamp = "20060102T150405Z"
		at, err := time.Parse(stamp, r.Header.Get("X-Amz-Date"))
		if err != nil || (now.Sub(at)).Abs() > 5*time.Minute {
			io.Copy(io.Discard, r.Body)
			if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
				c.refused.Add(1)
			}
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"Signature expired: %s is now earlier than %s (%s - 5 min.)"}`,
				at.Format(stamp), now.Add(-5*time.Minute).Format(stamp), now.Format(stamp))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// With the endpoint's clock 10 minutes ahead, and 10 more after a few
// calls, both paths sign with the SDK's clock offset and retry the calls
// refused as expired: the run completes. A direct call refused after
// another one's answer taught the SDK the new offset is not retryable in
// the SDK's eyes (its offset has not changed since), so it is made again
// through the SDK, signed with that offset; the direct path stays on.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	for _, sdkCalls := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk-middleware=%v", sdkCalls), func(t *testing.T) {
			t.Parallel()
			clock := &skewedClock{ahead: 10 * time.Minute, step: 10 * time.Minute, stepAfter: 3}
			ok, _ := recordingEndpoint(t)
			srv := httptest.NewServer(clock.handler(ok.Config.Handler))
			t.Cleanup(srv.Close)
			client, err := NewClient(context.Background(), testClientConfig(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 2, SDKMiddleware: sdkCalls})
			if err != nil {
				t.Fatal(err)
			}
			stats, err := w.Write(context.Background(), feed(numbered(500, 7)...))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d calls, %d refused as expired; stats %+v", clock.calls.Load(), clock.refused.Load(), stats)
			if stats.Total.Written != 500 || clock.refused.Load() == 0 || stats.DirectFallbacks >= clock.refused.Load() || (stats.DirectCalls > 0) == sdkCalls ||
				w.direct != nil && w.direct.off.Load() {
				t.Errorf("stats %+v, %d calls refused as expired; want every item written after refusals, direct calls (on to the end) only without sdkCalls, fewer fallbacks than refusals",
					stats, clock.refused.Load())
			}
		})
	}
}
