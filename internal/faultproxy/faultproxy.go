// Package faultproxy is a reverse proxy in front of a DynamoDB endpoint that
// injects the failures no emulator produces: throttling, partial batches
// (UnprocessedItems), server errors and dropped connections. It is meant for
// tests, but is an ordinary package so that any test package can use it.
//
// Only BatchWriteItem calls get faults; every other operation passes through.
// Which call gets which fault is reproducible: it is drawn from a generator
// seeded with Config.Seed, the hash of the request's content (its JSON with
// sorted keys) and how many times that content was seen before. The same seed and the same requests give the
// same faults whatever the order in which concurrent requests arrive, and a
// retried request draws again, so a retry loop always ends.
//
// It can also emulate provisioned throughput (Config.Capacity): a table's
// and each partition's write units per second, refusing writes beyond them
// as DynamoDB does, or an on-demand table's doubling rule, so that a writer's rate control can be measured against
// known limits. StartSink gives it an in-process upstream that acknowledges
// every write, for throughput benchmarks.
//
// The proxy rewrites the body of requests it partly forwards, which breaks
// their SigV4 signature: the upstream must not check signatures (DynamoDB
// Local and other emulators do not).
package faultproxy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgdynamo/migrate/internal/peakrate"
)

// Fault is a kind of injected failure.
type Fault string

// The faults the proxy can inject into BatchWriteItem calls.
const (
	// ProvisionedThroughputExceeded answers HTTP 400 with
	// ProvisionedThroughputExceededException; nothing is forwarded.
	ProvisionedThroughputExceeded Fault = "ProvisionedThroughputExceededException"
	// Throttling answers HTTP 400 with ThrottlingException; nothing is forwarded.
	Throttling Fault = "ThrottlingException"
	// Unprocessed forwards a random non-empty proper subset of the requests
	// and returns the others in UnprocessedItems, merged with the upstream's.
	// A call with a single request gets ProvisionedThroughputExceeded instead,
	// as DynamoDB answers when it processes nothing.
	Unprocessed Fault = "UnprocessedItems"
	// InternalError answers HTTP 500 InternalServerError; nothing is forwarded.
	InternalError Fault = "InternalServerError"
	// Unavailable answers HTTP 503 ServiceUnavailable; nothing is forwarded.
	Unavailable Fault = "ServiceUnavailable"
	// DropRequest closes the connection without forwarding or answering.
	DropRequest Fault = "DropRequest"
	// DropResponse forwards the call, then closes the connection instead of
	// answering: the write happened, the client does not know.
	DropResponse Fault = "DropResponse"
)

// AllFaults lists every fault, the default of Config.Faults.
var AllFaults = []Fault{ProvisionedThroughputExceeded, Throttling, Unprocessed, InternalError, Unavailable, DropRequest, DropResponse}

// Config says which faults to inject and how often.
type Config struct {
	Seed uint64
	// Rate is the probability, in [0, 1], that a BatchWriteItem call gets a
	// fault.
	Rate float64
	// Faults are the kinds to choose from, uniformly; a kind listed twice is
	// drawn twice as often. Default AllFaults.
	Faults []Fault
	// Capacity, when set, limits the write units per second of calls that
	// draw no fault.
	Capacity Capacity
	// Hold, when set, says how long to hold a call, of any operation,
	// before handling it: n counts the calls of op before it (0 for the
	// first). A client that gives up meanwhile gets nothing, and nothing
	// is forwarded: a server too slow to answer in time.
	Hold func(op string, n int) time.Duration
}

// Capacity emulates provisioned write throughput. Each write request costs
// ceil(item size / 1 KB) write units (a delete one), the item size computed
// as DynamoDB does, approximately (names and values; index writes are not
// counted). A request is written only if both the table's and its
// partition's token buckets hold its units; the others come back as
// UnprocessedItems, and a call of which nothing could be written gets
// ProvisionedThroughputExceededException, as DynamoDB answers. Buckets start
// full and hold Burst's worth of their rate.
type Capacity struct {
	// TableWCU is the table's write units per second; 0 means no table limit.
	TableWCU float64
	// PartitionWCU is each partition's write units per second; 0 means no
	// partition limit. DynamoDB's is 1,000.
	PartitionWCU float64
	// Partitions is the number of partitions; an item goes to the one its
	// partition key value hashes to. Default 1.
	Partitions int
	// PartitionKey is the attribute holding the partition key. Required
	// with PartitionWCU.
	PartitionKey string
	// Burst is how much unused capacity a bucket keeps. Default 1s
	// (DynamoDB keeps up to 300 s, which would hide a writer's steady state
	// for minutes).
	Burst time.Duration
	// OnDemand makes the table limit an on-demand table's: it takes
	// TableWCU at once (a new table's 4,000, or its warm throughput) and
	// beyond that at most twice the most write units it accepted in one
	// second within PeakWindow: DynamoDB's doubling rule. Requires
	// TableWCU.
	OnDemand bool
	// PeakWindow is how long an on-demand table remembers a peak. Default
	// 30 minutes, as DynamoDB.
	PeakWindow time.Duration
}

func (c Capacity) enabled() bool { return c.TableWCU > 0 || c.PartitionWCU > 0 }

// Stats counts what the proxy saw and did.
type Stats struct {
	Requests  map[string]int // by operation, e.g. "BatchWriteItem", from X-Amz-Target
	Faults    map[Fault]int  // faults injected, by kind
	Withheld  int            // write requests returned as UnprocessedItems without being forwarded
	Forwarded int            // calls forwarded upstream (in full or in part)

	// OverCapacity counts BatchWriteItem calls refused in whole or in part
	// by the capacity emulation, Refused the write requests it refused.
	OverCapacity int
	Refused      int
	// Written counts the write requests the capacity emulation let through,
	// WriteUnits their units (both 0 without Capacity).
	Written    int
	WriteUnits float64

	// Held counts the calls held (Config.Hold), Abandoned those of them
	// whose client gave up before the hold ended.
	Held, Abandoned int
}

// Proxy is the fault-injecting reverse proxy. It is an http.Handler; Start
// also serves it on a local port.
type Proxy struct {
	upstream *url.URL
	cfg      Config
	client   *http.Client
	srv      *httptest.Server

	mu         sync.Mutex
	seen       map[uint64]uint64 // body hash -> times seen
	calls      map[string]int    // by operation, for Hold
	stats      Stats
	table      bucket
	partitions []bucket
	peaks      peakrate.Tracker // write units accepted per second, for OnDemand
	now        func() time.Time // time.Now; tests move it
}

// New returns a Proxy forwarding to upstream (e.g. "http://127.0.0.1:8000").
func New(upstream string, cfg Config) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q is not an absolute URL", upstream)
	}
	if cfg.Rate < 0 || cfg.Rate > 1 {
		return nil, fmt.Errorf("faultproxy: rate %v outside [0, 1]", cfg.Rate)
	}
	if len(cfg.Faults) == 0 {
		cfg.Faults = AllFaults
	}
	for _, f := range cfg.Faults {
		if !known(f) {
			return nil, fmt.Errorf("faultproxy: unknown fault %q", f)
		}
	}
	c := &cfg.Capacity
	c.Partitions = cmp.Or(c.Partitions, 1)
	c.Burst = cmp.Or(c.Burst, time.Second)
	switch {
	case c.TableWCU < 0 || c.PartitionWCU < 0 || c.Partitions < 1 || c.Burst < 0:
		return nil, fmt.Errorf("faultproxy: capacity %+v: rates, partitions and burst must be positive", *c)
	case c.PartitionWCU > 0 && c.PartitionKey == "":
		return nil, errors.New("faultproxy: a partition capacity needs the partition key attribute")
	case c.OnDemand && c.TableWCU <= 0:
		return nil, errors.New("faultproxy: an on-demand table needs the write units it takes at once (TableWCU)")
	}
	c.PeakWindow = cmp.Or(c.PeakWindow, 30*time.Minute)
	p := &Proxy{
		upstream: u,
		cfg:      cfg,
		client: &http.Client{Transport: &http.Transport{
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
		}},
		seen:  map[uint64]uint64{},
		now:   time.Now,
		calls: map[string]int{},
		stats: Stats{Requests: map[string]int{}, Faults: map[Fault]int{}},
	}
	now := p.now()
	p.table = newBucket(c.TableWCU, c.Burst, now)
	for range c.Partitions {
		p.partitions = append(p.partitions, newBucket(c.PartitionWCU, c.Burst, now))
	}
	return p, nil
}

// Start returns a Proxy serving on a loopback port; Close stops it.
func Start(upstream string, cfg Config) (*Proxy, error) {
	p, err := New(upstream, cfg)
	if err != nil {
		return nil, err
	}
	p.srv = httptest.NewServer(p)
	return p, nil
}

// URL is the proxy's endpoint, for a DynamoDB client's BaseEndpoint.
func (p *Proxy) URL() string {
	if p.srv == nil {
		return ""
	}
	return p.srv.URL
}

// Close stops a started proxy.
func (p *Proxy) Close() {
	if p.srv != nil {
		p.srv.CloseClientConnections()
		p.srv.Close()
	}
	p.client.CloseIdleConnections()
}

// Requests is how many calls of an operation (e.g. "BatchWriteItem") the
// proxy received, faulted or not.
func (p *Proxy) Requests(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats.Requests[op]
}

// Stats returns a copy of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Requests = make(map[string]int, len(p.stats.Requests))
	for k, v := range p.stats.Requests {
		s.Requests[k] = v
	}
	s.Faults = make(map[Fault]int, len(p.stats.Faults))
	for k, v := range p.stats.Faults {
		s.Faults[k] = v
	}
	return s
}

func known(f Fault) bool {
	for _, k := range AllFaults {
		if f == k {
			return true
		}
	}
	return false
}

// ServeHTTP handles one DynamoDB call.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "faultproxy: read request: "+err.Error(), http.StatusBadGateway)
		return
	}
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}

	if !p.hold(r, op) {
		return
	}
	fault, rng := p.decide(op, body)
	switch fault {
	case "":
		if op == "BatchWriteItem" {
			p.write(w, r, body)
			return
		}
		p.forward(w, r, body)
	case ProvisionedThroughputExceeded:
		writeThrottle(w)
	case Throttling:
		writeError(w, http.StatusBadRequest, "com.amazon.coral.availability#ThrottlingException", "faultproxy: injected: Rate of requests exceeds the allowed throughput.")
	case InternalError:
		writeError(w, http.StatusInternalServerError, "com.amazonaws.dynamodb.v20120810#InternalServerError", "faultproxy: injected: Internal server error")
	case Unavailable:
		writeError(w, http.StatusServiceUnavailable, "com.amazonaws.dynamodb.v20120810#ServiceUnavailable", "faultproxy: injected: Service unavailable")
	case DropRequest:
		drop(w)
	case DropResponse:
		rec := httptest.NewRecorder()
		p.forward(rec, r, body)
		drop(w)
	case Unprocessed:
		p.partial(w, r, body, rng)
	}
}

// decide draws the fault for a call ("" for none) and the generator for
// any further choices.
func (p *Proxy) decide(op string, body []byte) (Fault, *rand.Rand) {
	var sum uint64
	if op == "BatchWriteItem" {
		h := fnv.New64a()
		h.Write(canonical(body))
		sum = h.Sum64()
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Requests[op]++
	if op != "BatchWriteItem" {
		return "", nil
	}
	n := p.seen[sum]
	p.seen[sum] = n + 1
	rng := rand.New(rand.NewPCG(p.cfg.Seed, sum^(n+1)*0x9e3779b97f4a7c15))
	if rng.Float64() >= p.cfg.Rate {
		return "", nil
	}
	f := p.cfg.Faults[rng.IntN(len(p.cfg.Faults))]
	p.stats.Faults[f]++
	return f, rng
}

// canonical re-encodes a JSON body with sorted object keys: clients
// serialize maps in random order, and the fault drawn for a request must
// depend on its content only.
func canonical(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	b, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return b
}

// batchRequest is a BatchWriteItem body with its write requests kept as raw
// JSON, so that nothing (numbers, binary) changes on the way through.
type batchRequest map[string]json.RawMessage

// partial forwards part of a BatchWriteItem call and returns the rest as
// UnprocessedItems.
func (p *Proxy) partial(w http.ResponseWriter, r *http.Request, body []byte, rng *rand.Rand) {
	req, items, ok := parseBatch(body)
	if !ok {
		p.forward(w, r, body) // not ours to judge: let the upstream reject it
		return
	}
	total := 0
	for _, reqs := range items {
		total += len(reqs)
	}
	if total < 2 {
		p.mu.Lock()
		p.stats.Faults[Unprocessed]--
		p.stats.Faults[ProvisionedThroughputExceeded]++
		p.mu.Unlock()
		writeThrottle(w)
		return
	}
	// Withhold each request with probability 1/2, keeping at least one on
	// each side.
	withhold := make([]bool, total)
	n := 0
	for i := range withhold {
		withhold[i] = rng.IntN(2) == 0
		if withhold[i] {
			n++
		}
	}
	if n == 0 {
		withhold[rng.IntN(total)] = true
		n = 1
	} else if n == total {
		withhold[rng.IntN(total)] = false
		n--
	}
	p.mu.Lock()
	p.stats.Withheld += n
	p.mu.Unlock()
	p.forwardPart(w, r, req, items, withhold)
}

func writeThrottle(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
		"faultproxy: The level of configured provisioned throughput for the table was exceeded.")
}

// parseBatch reads a BatchWriteItem body, keeping the write requests as raw
// JSON.
func parseBatch(body []byte) (batchRequest, map[string][]json.RawMessage, bool) {
	var req batchRequest
	var items map[string][]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, false
	}
	if err := json.Unmarshal(req["RequestItems"], &items); err != nil {
		return nil, nil, false
	}
	return req, items, true
}

// forwardPart forwards the write requests not withheld (withhold is in
// the order of the sorted table names, then the requests) and answers with
// the withheld ones merged into the upstream's UnprocessedItems.
func (p *Proxy) forwardPart(w http.ResponseWriter, r *http.Request, req batchRequest, items map[string][]json.RawMessage, withhold []bool) {
	forward := map[string][]json.RawMessage{}
	withheld := map[string][]json.RawMessage{}
	i := 0
	for _, table := range slices.Sorted(maps.Keys(items)) {
		for _, wr := range items[table] {
			if withhold[i] {
				withheld[table] = append(withheld[table], wr)
			} else {
				forward[table] = append(forward[table], wr)
			}
			i++
		}
	}
	req["RequestItems"] = mustMarshal(forward)
	newBody := mustMarshal(req)

	rec := httptest.NewRecorder()
	p.forward(rec, r, newBody)
	resp := rec.Result()
	respBody, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		// The upstream failed the part it got: pass its answer on unchanged;
		// the client will resend everything.
		copyResponse(w, resp.Header, resp.StatusCode, respBody)
		return
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(respBody, &out); err != nil {
		http.Error(w, "faultproxy: upstream answer is not JSON: "+err.Error(), http.StatusBadGateway)
		return
	}
	unprocessed := map[string][]json.RawMessage{}
	if raw, ok := out["UnprocessedItems"]; ok && len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &unprocessed); err != nil {
			http.Error(w, "faultproxy: upstream UnprocessedItems: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	for table, reqs := range withheld {
		unprocessed[table] = append(unprocessed[table], reqs...)
	}
	out["UnprocessedItems"] = mustMarshal(unprocessed)
	copyResponse(w, resp.Header, http.StatusOK, mustMarshal(out))
}

// forward sends the call upstream and copies the answer back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	u := *p.upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range r.Header {
		if hopByHop(k) || k == "Accept-Encoding" || k == "Content-Length" {
			continue
		}
		out.Header[k] = vs
	}
	out.ContentLength = int64(len(body))
	p.mu.Lock()
	p.stats.Forwarded++
	p.mu.Unlock()
	resp, err := p.client.Do(out)
	if err != nil {
		http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	copyResponse(w, resp.Header, resp.StatusCode, respBody)
}

// copyResponse writes an answer with a correct Content-Length and CRC32
// (the DynamoDB client checks X-Amz-Crc32).
func copyResponse(w http.ResponseWriter, h http.Header, status int, body []byte) {
	for k, vs := range h {
		if hopByHop(k) || k == "Content-Length" || k == "X-Amz-Crc32" {
			continue
		}
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", "faultproxy")
	copyResponse(w, h, status, mustMarshal(map[string]string{"__type": typ, "message": msg}))
}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func hopByHop(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host":
		return true
	}
	return false
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("faultproxy: marshal: " + err.Error())) // only maps of raw JSON and strings
	}
	return b
}
