package load

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyrand "github.com/aws/smithy-go/rand"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// direct sends the writer's calls of a *dynamodb.Client without building
// the SDK's middleware stack for each of them, which costs more CPU than
// the rest of the call (see "Request bodies" in the package documentation).
//
// It is only used for clients NewClient built (see ownClient): a caller's
// client may carry middleware (tracing, metrics, headers) that must run on
// every call, and only the SDK's stack runs it.
//
// What it repeats, it learns from the SDK: the writer's first call goes
// through the SDK whole, and a middleware at the end of its finalize step
// records the request the SDK built, signed and was about to send (the
// endpoint URL after resolution, the signing region and service from the
// Authorization header, the operation's headers named in operationHeaders)
// and takes the client's clock offset from the SDK's retry middleware. A
// request with any header it does not know turns the direct path off.
// Later calls use the client's own credentials provider, its SigV4 signer
// (with the body's SHA-256, at the local time plus the SDK's current clock
// offset) and its HTTP client, with an invocation id and attempt header of
// their own.
//
// What it does not repeat, it hands back: only a 200 answer whose body the
// CRC-32 header vouches for and that holds no UnprocessedItems is decoded
// here. Any other answer, and any transport error, is replayed through the
// SDK's client (with an HTTP client that returns what was received, and
// sends nothing), so that errors and unprocessed items have exactly the
// SDK's types, and the SDK learns the clock offset from a clock-skew
// answer as from its own. An answer the writer would stop the run on
// (classFatal) is not taken from a direct call: the call is made again
// through the SDK whole (a fallback, counted in Stats.DirectFallbacks), and
// if the SDK succeeds where the direct call was refused with the same
// clock, the direct path turns itself off.
type direct struct {
	client *dynamodb.Client
	opts   dynamodb.Options
	shape  atomic.Pointer[requestShape] // nil until the SDK made a call
	off    atomic.Bool                  // set when the shape could not be learned, or a fallback showed it wrong

	sent, replayed, fallbacks atomic.Int64 // calls sent directly; of those, answers replayed through the SDK; calls made again by the SDK
}

// requestShape is what the SDK's first call taught: where and how to send.
type requestShape struct {
	url     *url.URL
	host    string
	header  http.Header // the operation's headers (operationHeaders)
	region  string
	service string
	// maxAttempts is the "max" of the SDK's attempt header: the writer's
	// calls are one attempt each (oneAttempt).
	maxAttempts string
	// skew is the client's clock offset, which the SDK's retry middleware
	// keeps up to date from the Date of its answers (replayed ones
	// included); nil when the client disables clock-skew correction.
	skew *atomic.Int64
}

// offset is the clock offset to sign with now.
func (s *requestShape) offset() time.Duration {
	if s.skew == nil {
		return 0
	}
	return time.Duration(s.skew.Load())
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
	if d.off.Load() {
		return d.client.BatchWriteItem(ctx, input(), optFns...)
	}
	shape := d.shape.Load()
	if shape == nil {
		return d.client.BatchWriteItem(ctx, input(), append(optFns, d.learn)...)
	}
	skew := shape.offset()
	req, err := d.request(ctx, shape, body, skew)
	if err != nil {
		// Credentials or signing failed: the SDK reports that in its words.
		return d.client.BatchWriteItem(ctx, input(), optFns...)
	}
	d.sent.Add(1)
	resp, err := d.opts.HTTPClient.Do(req)
	var answer []byte
	if err == nil {
		answer, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil && resp.StatusCode == http.StatusOK && bytes.Equal(answer, emptyAnswer) && crcMatches(resp.Header, answer) {
		return &dynamodb.BatchWriteItemOutput{}, nil
	}
	if err != nil {
		resp, answer = nil, nil
	}
	in := input()
	out, err := d.replay(ctx, in, optFns, resp, answer, err)
	if err == nil || classify(ctx, err) != classFatal {
		return out, err // an answer the writer knows what to do with
	}
	return d.fallback(ctx, in, optFns, skew, err)
}

// fallback makes a call again through the SDK whole, after the answer to
// its direct call (directErr) would have stopped the run: a run never stops
// on the direct path's word alone.
func (d *direct) fallback(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns []func(*dynamodb.Options), signedWith time.Duration, directErr error) (*dynamodb.BatchWriteItemOutput, error) {
	d.fallbacks.Add(1)
	out, err := d.client.BatchWriteItem(ctx, in, optFns...)
	shape := d.shape.Load()
	// Refused directly but accepted from the SDK, the clock offset being
	// the same (it moves by the Date header's rounding on every answer):
	// the direct request is not what the SDK sends. Signed with an offset
	// learnt since, it may just have been stale.
	if err == nil && shape != nil && (shape.offset()-signedWith).Abs() < time.Minute && d.off.CompareAndSwap(false, true) {
		d.opts.Logger.Logf(logging.Warn, "load: a call refused when sent directly (%v) succeeded through the SDK; "+
			"every later call goes through the SDK", directErr)
	}
	return out, err
}

// request builds and signs the HTTP request of one call, at the local time
// plus skew, the SDK's clock offset.
func (d *direct) request(ctx context.Context, shape *requestShape, body []byte, skew time.Duration) (*http.Request, error) {
	creds, err := d.opts.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, err
	}
	invocation, err := smithyrand.NewUUID(rand.Reader).GetUUID()
	if err != nil {
		return nil, err
	}
	header := shape.header.Clone()
	// The SDK's per-call headers, as its middleware sets them for the first
	// attempt of a call.
	header["Amz-Sdk-Invocation-Id"] = []string{invocation}
	header["Amz-Sdk-Request"] = []string{attemptHeader(ctx, shape.maxAttempts, skew)}
	u := *shape.url
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           &u,
		Host:          shape.host,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
	}
	req = req.WithContext(ctx)
	sum := sha256.Sum256(body)
	if err := d.opts.HTTPSignerV4.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), shape.service, shape.region, time.Now().Add(skew).UTC()); err != nil {
		return nil, err
	}
	return req, nil
}

// attemptHeader is the value of Amz-Sdk-Request for the first attempt of a
// call, as the SDK's retry middleware writes it: the attempt, the most
// attempts, and, once the SDK knows a clock offset, when the call's
// context ends by the server's clock.
func attemptHeader(ctx context.Context, maxAttempts string, skew time.Duration) string {
	v := "attempt=1; max=" + maxAttempts
	if deadline, ok := ctx.Deadline(); ok && skew > 0 {
		v += "; ttl=" + deadline.Add(skew).UTC().Format("20060102T150405Z")
	}
	return v
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
// to, once it is signed, and the client's clock offset.
func (d *direct) learn(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		skew, err := clockOffset(s)
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("pgdynamo.LearnRequestShape",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					d.record(req.Request, skew, err)
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	})
}

// clockOffset finds the client's clock offset: the SDK's retry middleware
// holds it (retry.Attempt.ClientSkew, the client's own), learns it from
// the Date of every answer and signs each attempt with it. It is nil when
// the client disables clock-skew correction.
func clockOffset(s *middleware.Stack) (*atomic.Int64, error) {
	m, ok := s.Finalize.Get("Retry")
	if !ok {
		return nil, errors.New("the SDK's stack has no retry middleware")
	}
	a, ok := m.(*retry.Attempt)
	switch {
	case !ok:
		return nil, fmt.Errorf("the SDK's retry middleware is a %T", m)
	case a.DisableClockSkewCorrection:
		return nil, nil
	case a.ClientSkew == nil:
		return nil, errors.New("the SDK's retry middleware keeps no clock offset")
	}
	return a.ClientSkew, nil
}

// record keeps the shape of a signed request, or turns the direct path off
// when the request is not one it can repeat.
func (d *direct) record(req *http.Request, skew *atomic.Int64, skewErr error) {
	shape, err := shapeOf(req)
	if err == nil {
		err = skewErr
	}
	if err != nil {
		d.opts.Logger.Logf(logging.Debug, "load: %v; every call goes through the SDK", err)
		d.off.Store(true)
		return
	}
	shape.skew = skew
	d.shape.CompareAndSwap(nil, shape)
}

// operationHeaders are the headers of the SDK's request that are the same
// on every BatchWriteItem call of a client: the direct calls copy these.
var operationHeaders = map[string]bool{"Content-Type": true, "X-Amz-Target": true, "User-Agent": true,
	"X-Amz-User-Agent": true, "Accept-Encoding": true}

// callHeaders are the SDK's headers that differ from call to call: the
// signer's (and net/http's Content-Length), set by them on each direct
// call, and the SDK's invocation id and attempt, set by request. (Not
// X-Amz-Content-Sha256: the SDK sends it to S3, not to DynamoDB, and the
// direct calls would not.)
var callHeaders = map[string]bool{"Authorization": true, "X-Amz-Date": true, "X-Amz-Security-Token": true,
	"Content-Length": true, "Amz-Sdk-Invocation-Id": true, "Amz-Sdk-Request": true}

// shapeOf reads what a signed SDK request holds: its URL, the region and
// service of its SigV4 credential scope, and its operation headers. Any
// other header may be one a later SDK version, or a middleware, sets per
// call: it cannot be repeated, and the direct path stays off.
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
	h := http.Header{}
	for k, v := range req.Header {
		switch k = http.CanonicalHeaderKey(k); {
		case operationHeaders[k]:
			h[k] = slices.Clone(v)
		case !callHeaders[k]:
			return nil, fmt.Errorf("the SDK's request has a header the direct calls do not repeat (%s)", k)
		}
	}
	maxAttempts, ok := strings.CutPrefix(req.Header.Get("Amz-Sdk-Request"), "attempt=1; max=")
	maxAttempts, _, _ = strings.Cut(maxAttempts, ";")
	if _, err := strconv.Atoi(maxAttempts); !ok || err != nil {
		return nil, fmt.Errorf("the SDK's request has an unexpected attempt header %q", req.Header.Get("Amz-Sdk-Request"))
	}
	u := *req.URL
	return &requestShape{url: &u, host: req.Host, header: h, region: region, service: service, maxAttempts: maxAttempts}, nil
}
