package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// direct sends the writer's calls of a *dynamodb.Client without building
// the SDK's middleware stack for each of them, which costs more CPU than
// the rest of the call (see "Request bodies" in the package documentation).
//
// What it repeats, it learns from the SDK: the writer's first call goes
// through the SDK whole, and a middleware at the end of its finalize step
// records the request the SDK built, signed and was about to send (the
// endpoint URL after resolution, the signing region and service from the
// Authorization header, the headers of the operation). Later calls use the
// client's own credentials provider, its SigV4 signer (with the body's
// SHA-256) and its HTTP client.
//
// What it does not repeat, it hands back: only a 200 answer whose body the
// CRC-32 header vouches for and that holds no UnprocessedItems is decoded
// here. Any other answer, and any transport error, is replayed through the
// SDK's client (with an HTTP client that returns what was received, and
// sends nothing), so that errors and unprocessed items have exactly the
// SDK's types and the writer classifies them as before.
type direct struct {
	client *dynamodb.Client
	opts   dynamodb.Options
	shape  atomic.Pointer[requestShape] // nil until the SDK made a call
	off    atomic.Bool                  // set when the shape could not be learned

	sent, replayed atomic.Int64 // calls sent directly; of those, answers replayed through the SDK
}

// requestShape is what the SDK's first call taught: where and how to send.
type requestShape struct {
	url     *url.URL
	host    string
	header  http.Header // operation headers, without the per-call signing ones
	region  string
	service string
}

func newDirect(c *dynamodb.Client) *direct {
	d := &direct{client: c, opts: c.Options()}
	if d.opts.Logger == nil {
		d.opts.Logger = logging.Nop{}
	}
	if d.opts.HTTPSignerV4 == nil || d.opts.HTTPClient == nil || d.opts.Credentials == nil {
		d.off.Store(true) // nothing to sign or send with but the SDK's own stack
	}
	return d
}

// emptyAnswer is DynamoDB's answer to a call that wrote every item.
var emptyAnswer = []byte(`{"UnprocessedItems":{}}`)

// write makes one BatchWriteItem call sending body. input builds the same
// requests for the SDK, which needs them when it makes (or replays) the
// call. optFns are the writer's options of an SDK call.
func (d *direct) write(ctx context.Context, body []byte, input func() *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	shape := d.shape.Load()
	if shape == nil {
		if d.off.Load() {
			return d.client.BatchWriteItem(ctx, input(), optFns...)
		}
		return d.client.BatchWriteItem(ctx, input(), append(optFns, d.learn)...)
	}
	req, err := d.request(ctx, shape, body)
	if err != nil {
		// Credentials or signing failed: the SDK reports that in its words.
		return d.client.BatchWriteItem(ctx, input(), optFns...)
	}
	d.sent.Add(1)
	resp, err := d.opts.HTTPClient.Do(req)
	if err != nil {
		return d.replay(ctx, input(), optFns, nil, nil, err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return d.replay(ctx, input(), optFns, nil, nil, err)
	}
	if resp.StatusCode == http.StatusOK && bytes.Equal(answer, emptyAnswer) && crcMatches(resp.Header, answer) {
		return &dynamodb.BatchWriteItemOutput{}, nil
	}
	return d.replay(ctx, input(), optFns, resp, answer, nil)
}

// request builds and signs the HTTP request of one call.
func (d *direct) request(ctx context.Context, shape *requestShape, body []byte) (*http.Request, error) {
	creds, err := d.opts.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, err
	}
	u := *shape.url
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           &u,
		Host:          shape.host,
		Header:        shape.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
	}
	req = req.WithContext(ctx)
	sum := sha256.Sum256(body)
	if err := d.opts.HTTPSignerV4.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), shape.service, shape.region, time.Now().UTC()); err != nil {
		return nil, err
	}
	return req, nil
}

// crcMatches checks the X-Amz-Crc32 header DynamoDB sends with its answers,
// as the SDK does; an answer without one passes.
func crcMatches(h http.Header, body []byte) bool {
	v := h.Get("X-Amz-Crc32")
	if v == "" {
		return true
	}
	want, err := strconv.ParseUint(v, 10, 32)
	return err == nil && uint32(want) == crc32.ChecksumIEEE(body)
}

// replay gives what a direct call received (an answer, or a transport
// error) to the SDK's client, as if its own HTTP client had received it.
func (d *direct) replay(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns []func(*dynamodb.Options), resp *http.Response, answer []byte, sendErr error) (*dynamodb.BatchWriteItemOutput, error) {
	d.replayed.Add(1)
	canned := cannedClient{resp: resp, answer: answer, err: sendErr}
	return d.client.BatchWriteItem(ctx, in, append(optFns, func(o *dynamodb.Options) { o.HTTPClient = canned })...)
}

// cannedClient is an HTTP client that sends nothing and returns what it
// holds.
type cannedClient struct {
	resp   *http.Response
	answer []byte
	err    error
}

func (c cannedClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	if c.err != nil {
		return nil, c.err
	}
	resp := *c.resp
	resp.Request = req
	resp.Body = io.NopCloser(bytes.NewReader(c.answer))
	return &resp, nil
}

// learn is an SDK option that records the request of the call it is given
// to, once it is signed.
func (d *direct) learn(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("pgdynamo.LearnRequestShape",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					d.record(req.Request)
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	})
}

// record keeps the shape of a signed request, or turns the direct path off
// when the request is not one it can repeat.
func (d *direct) record(req *http.Request) {
	shape, err := shapeOf(req)
	if err != nil {
		d.opts.Logger.Logf(logging.Debug, "load: %v; every call goes through the SDK", err)
		d.off.Store(true)
		return
	}
	d.shape.CompareAndSwap(nil, shape)
}

// signingHeaders are set by the signer on each call.
var signingHeaders = []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-Sha256",
	"Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "Content-Length"}

// shapeOf reads what a signed SDK request holds: its URL, and the region
// and service of its SigV4 credential scope.
func shapeOf(req *http.Request) (*requestShape, error) {
	auth := req.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 Credential="
	if !strings.HasPrefix(auth, algo) {
		return nil, fmt.Errorf("the SDK's request is not signed with SigV4 (%q)", strings.SplitN(auth, " ", 2)[0])
	}
	cred, _, _ := strings.Cut(auth[len(algo):], ",")
	// Credential=AKID/yyyymmdd/region/service/aws4_request
	parts := strings.Split(cred, "/")
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return nil, fmt.Errorf("the SDK's request has an unexpected credential scope")
	}
	region, service := parts[len(parts)-3], parts[len(parts)-2]
	h := req.Header.Clone()
	for _, k := range signingHeaders {
		h.Del(k)
	}
	u := *req.URL
	return &requestShape{url: &u, host: req.Host, header: h, region: region, service: service}, nil
}
