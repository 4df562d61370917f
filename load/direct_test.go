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
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
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
	for i, r := range reqs {
		verifySignature(t, r)
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

// A request the direct path cannot repeat (not SigV4-signed) turns it off:
// every call then goes through the SDK.
func TestDirectOffWithoutSigV4(t *testing.T) {
	d := &direct{}
	d.opts.Logger = logging.Nop{}
	req := httptest.NewRequest(http.MethodPost, "http://x/", nil)
	req.Header.Set("Authorization", "Bearer token")
	d.record(req)
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
