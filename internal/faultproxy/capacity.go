package faultproxy

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// bucket is a token bucket of write units; rate 0 means unlimited.
type bucket struct {
	rate, size, tokens float64
	filled             time.Time
}

func newBucket(rate float64, burst time.Duration, now time.Time) bucket {
	size := rate * burst.Seconds()
	return bucket{rate: rate, size: size, tokens: size, filled: now}
}

func (b *bucket) refill(now time.Time) {
	if b.rate > 0 {
		b.tokens = min(b.size, b.tokens+now.Sub(b.filled).Seconds()*b.rate)
	}
	b.filled = now
}

func (b *bucket) has(units float64) bool { return b.rate == 0 || b.tokens >= units }

func (b *bucket) take(units float64) {
	if b.rate > 0 {
		b.tokens -= units
	}
}

// write forwards a BatchWriteItem call that drew no fault, within the
// emulated capacity.
func (p *Proxy) write(w http.ResponseWriter, r *http.Request, body []byte) {
	if !p.cfg.Capacity.enabled() {
		p.forward(w, r, body)
		return
	}
	req, items, ok := parseBatch(body)
	if !ok {
		p.forward(w, r, body)
		return
	}
	type request struct {
		units     float64
		partition int
	}
	var reqs []request
	for _, table := range slices.Sorted(maps.Keys(items)) {
		for _, raw := range items[table] {
			reqs = append(reqs, request{writeUnits(raw), p.partitionOf(raw)})
		}
	}
	withhold := make([]bool, len(reqs))
	refused := 0
	p.mu.Lock()
	now := p.now()
	p.table.refill(now)
	if c := p.cfg.Capacity; c.OnDemand {
		// The rate beyond which DynamoDB throttles an on-demand table:
		// twice its peak within the window, or what it took at once.
		p.table.rate = max(c.TableWCU, 2*p.peaks.Peak(now, c.PeakWindow))
		p.table.size = p.table.rate * c.Burst.Seconds()
		p.table.tokens = min(p.table.tokens, p.table.size)
	}
	for i := range p.partitions {
		p.partitions[i].refill(now)
	}
	for i, rq := range reqs {
		part := &p.partitions[rq.partition]
		if p.table.has(rq.units) && part.has(rq.units) {
			p.table.take(rq.units)
			part.take(rq.units)
			p.stats.Written++
			p.stats.WriteUnits += rq.units
			p.peaks.Add(now, rq.units)
			continue
		}
		withhold[i] = true
		refused++
	}
	if refused > 0 {
		p.stats.OverCapacity++
		p.stats.Refused += refused
	}
	p.mu.Unlock()
	switch {
	case refused == 0:
		p.forward(w, r, body)
	case refused == len(reqs):
		writeThrottle(w)
	default:
		p.forwardPart(w, r, req, items, withhold)
	}
}

// writeRequest is a PutRequest or DeleteRequest in DynamoDB JSON.
type writeRequest struct {
	PutRequest *struct {
		Item map[string]json.RawMessage
	}
	DeleteRequest *struct {
		Key map[string]json.RawMessage
	}
}

// writeUnits is what a write request costs: ceil(item size / 1 KB) by
// DynamoDB's size rules (ddbvalue.ItemSize), one for a delete or for an
// item DynamoDB would refuse.
func writeUnits(raw json.RawMessage) float64 {
	var put struct {
		PutRequest *struct {
			Item map[string]any
		}
	}
	if json.Unmarshal(raw, &put) != nil || put.PutRequest == nil {
		return 1
	}
	item, err := ddbvalue.DecodeItem(put.PutRequest.Item)
	if err != nil {
		return 1
	}
	return math.Max(1, math.Ceil(float64(ddbvalue.ItemSize(item))/1024))
}

// partitionOf hashes the request's partition key value to a partition.
func (p *Proxy) partitionOf(raw json.RawMessage) int {
	n := len(p.partitions)
	if n <= 1 {
		return 0
	}
	var wr writeRequest
	if json.Unmarshal(raw, &wr) != nil {
		return 0
	}
	var key json.RawMessage
	switch {
	case wr.PutRequest != nil:
		key = wr.PutRequest.Item[p.cfg.Capacity.PartitionKey]
	case wr.DeleteRequest != nil:
		key = wr.DeleteRequest.Key[p.cfg.Capacity.PartitionKey]
	}
	h := fnv.New64a()
	h.Write(canonical(key))
	return int(h.Sum64() % uint64(n))
}

// StartSink returns a started Proxy whose upstream is an in-process
// endpoint that acknowledges every write and describes any table as the
// emulated capacity has it (DescribeTable: a provisioned table of TableWCU,
// an on-demand one warm for TableWCU, or on demand without a table limit),
// and answers nothing else of interest: for measuring a writer against
// faults and capacity limits without an engine's own cost. No request
// leaves the process.
func StartSink(cfg Config) (*Proxy, error) {
	p, err := New("http://sink.invalid", cfg)
	if err != nil {
		return nil, err
	}
	p.upstream = &url.URL{Scheme: "http", Host: "sink.invalid"}
	p.client = &http.Client{Transport: sink{cfg.Capacity}}
	p.srv = httptest.NewServer(p)
	return p, nil
}

// sink is an http.RoundTripper that plays a DynamoDB endpoint accepting
// every write, its tables of the capacity given.
type sink struct{ capacity Capacity }

func (s sink) RoundTrip(r *http.Request) (*http.Response, error) {
	var req []byte
	if r.Body != nil {
		req, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	body := `{}`
	switch target := r.Header.Get("X-Amz-Target"); {
	case strings.HasSuffix(target, ".BatchWriteItem"):
		body = `{"UnprocessedItems":{}}`
	case strings.HasSuffix(target, ".DescribeTable"):
		body = s.describe(req)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}, nil
}

// describe answers DescribeTable for the table the request names.
func (s sink) describe(req []byte) string {
	var in struct{ TableName string }
	_ = json.Unmarshal(req, &in)
	t := map[string]any{"TableName": in.TableName, "TableStatus": "ACTIVE"}
	wcu := int64(math.Round(s.capacity.TableWCU))
	switch {
	case s.capacity.TableWCU > 0 && !s.capacity.OnDemand:
		t["BillingModeSummary"] = map[string]any{"BillingMode": "PROVISIONED"}
		t["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": wcu, "WriteCapacityUnits": wcu}
	default:
		t["BillingModeSummary"] = map[string]any{"BillingMode": "PAY_PER_REQUEST"}
		t["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
		if s.capacity.OnDemand {
			t["WarmThroughput"] = map[string]any{"WriteUnitsPerSecond": wcu, "ReadUnitsPerSecond": 3 * wcu, "Status": "ACTIVE"}
		}
	}
	b, _ := json.Marshal(map[string]any{"Table": t})
	return string(b)
}
