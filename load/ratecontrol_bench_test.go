package load

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/faultproxy"
)

// The rate-control benchmarks run the Writer with the real SDK client
// against the project's fault proxy in front of an in-process endpoint
// that acknowledges every write (faultproxy.StartSink), so that the
// writer's reaction to faults and limits, not an engine, sets the pace:
//
//	go test ./load -run '^$' -bench 'WriteUnder|WriteAtCapacity' -benchtime 1x
//
// BenchmarkWriteUnderFaults/clean and /faults compare items/s without
// faults and with 30% of calls faulted (10% throttled, 10% partial
// batches, 5% 5xx, 5% dropped connections): throttling and partial
// batches must slow the writer only as much as they cost, 5xx and drops
// not at all. Besides items/s end to end it reports items/s until 99% of
// the items are written (the last batches may retry for seconds), items
// per CPU second and the CPUs used: on a shared machine, other processes
// decide how much CPU each run gets. BenchmarkWriteAtCapacity writes behind a table limit of
// 3,000 WCU/s and a partition limit of 1,000 WCU/s (4 partitions) and
// reports the write units per second the proxy accepted and the share of
// calls it throttled, both after the first 10 s.
//
// MIGRATE_BENCH_ITEMS sets the items of one op; MIGRATE_BENCH_VERBOSE=1
// shows the writer's rate changes.

// benchItems is the number of items of one benchmark op.
func benchItems(b *testing.B, def int) int {
	if s := os.Getenv("MIGRATE_BENCH_ITEMS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("MIGRATE_BENCH_ITEMS: %v", err)
		}
		return n
	}
	return def
}

// benchWorkload is n items of about 200 bytes (1 write unit), 10 per
// partition key, as item collections arrive from a source table.
func benchWorkload(n int) []contract.Item {
	items := make([]contract.Item, n)
	body := &types.AttributeValueMemberS{Value: strings.Repeat("x", 150)}
	for i := range items {
		items[i] = contract.Item{Attrs: map[string]types.AttributeValue{
			"PK":   &types.AttributeValueMemberS{Value: fmt.Sprintf("CUSTOMER#%07d", i/10)},
			"SK":   &types.AttributeValueMemberS{Value: fmt.Sprintf("ORDER#%07d", i%10)},
			"body": body,
		}, Origin: contract.Origin{Entity: "Order", Table: "orders", SourceKey: strconv.Itoa(i)}}
	}
	return items
}

// benchWrite writes items through a new Writer and client to endpoint. It
// also returns when 99% of the items were acknowledged: the last few
// batches of a run may spend seconds in retries (a chain of faults of 1 in
// 10,000 batches), a fixed cost that a long migration does not notice.
func benchWrite(b *testing.B, endpoint string, items []contract.Item) (contract.Stats, time.Duration) {
	b.Helper()
	ctx := context.Background()
	client, err := NewClient(ctx, ClientConfig{Endpoint: endpoint, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "")})
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "bench", PartitionKey: "PK", SortKey: "SK", Logger: benchLogger(), Concurrency: benchConcurrency()})
	if err != nil {
		b.Fatal(err)
	}
	var acked atomic.Int64
	var at99 atomic.Int64 // nanoseconds since start
	start := time.Now()
	mark := int64(len(items)) * 99 / 100
	ch := make(chan contract.Item, 1024)
	go func() {
		defer close(ch)
		for _, it := range items {
			it.Ack = func() {
				if acked.Add(1) == mark {
					at99.Store(int64(time.Since(start)))
				}
			}
			ch <- it
		}
	}()
	stats, err := w.Write(ctx, ch)
	if err != nil {
		b.Fatalf("write: %v", err)
	}
	if stats.Total.Written != int64(len(items)) {
		b.Fatalf("%d of %d items written", stats.Total.Written, len(items))
	}
	return stats, time.Duration(at99.Load())
}

// benchFaults is 30% of calls faulted: 10% throttled, 10% partial, 5%
// 5xx, 5% dropped connections (the proxy draws uniformly from the list).
var benchFaults = []faultproxy.Fault{
	faultproxy.Throttling, faultproxy.ProvisionedThroughputExceeded,
	faultproxy.Unprocessed, faultproxy.Unprocessed,
	faultproxy.Unavailable, faultproxy.DropResponse,
}

func BenchmarkWriteUnderFaults(b *testing.B) {
	items := benchWorkload(benchItems(b, 300_000))
	for _, tc := range []struct {
		name string
		cfg  faultproxy.Config
	}{
		{"clean", faultproxy.Config{}},
		{"faults", faultproxy.Config{Seed: 7, Rate: 0.3, Faults: benchFaults}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := faultproxy.StartSink(tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			var last contract.Stats
			var bulk time.Duration
			cpu := cpuTime()
			for b.Loop() {
				s, at99 := benchWrite(b, p.URL(), items)
				last, bulk = s, bulk+at99
			}
			cpu = cpuTime() - cpu
			b.ReportMetric(float64(len(items)*b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(0.99*float64(len(items)*b.N)/bulk.Seconds(), "items/s-to-99%")
			// On a shared machine other processes take CPU time from the
			// benchmark: items per CPU second compares clean and faulted runs
			// whatever they get (the writer, proxy and sink share the process).
			if cpu > 0 {
				b.ReportMetric(float64(len(items)*b.N)/cpu.Seconds(), "items/cpu-s")
				b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cpus")
			}
			b.ReportMetric(0, "ns/op")
			s := p.Stats()
			b.Logf("%d items in %v; calls %d, faults %v; writer: %d retries, %d throttled calls",
				len(items), last.Elapsed.Round(time.Millisecond), s.Requests["BatchWriteItem"], s.Faults, last.Total.Retries, last.ThrottledCalls)
		})
	}
}

func BenchmarkWriteAtCapacity(b *testing.B) {
	const tableWCU, warmup = 3000.0, 10 * time.Second
	items := benchWorkload(benchItems(b, 120_000))
	p, err := faultproxy.StartSink(faultproxy.Config{Capacity: faultproxy.Capacity{
		TableWCU: tableWCU, PartitionWCU: 1000, Partitions: 4, PartitionKey: "PK",
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var atWarm faultproxy.Stats
	var warmAt time.Time
	for b.Loop() {
		start := time.Now()
		t := time.AfterFunc(warmup, func() {
			mu.Lock()
			defer mu.Unlock()
			atWarm, warmAt = p.Stats(), time.Now()
		})
		benchWrite(b, p.URL(), items)
		t.Stop()
		end, endAt := p.Stats(), time.Now()
		mu.Lock()
		if warmAt.IsZero() {
			mu.Unlock()
			b.Fatalf("the write took %v, less than the %v warm-up: raise MIGRATE_BENCH_ITEMS", endAt.Sub(start), warmup)
		}
		units := (end.WriteUnits - atWarm.WriteUnits) / endAt.Sub(warmAt).Seconds()
		calls := end.Requests["BatchWriteItem"] - atWarm.Requests["BatchWriteItem"]
		throttled := end.OverCapacity - atWarm.OverCapacity
		mu.Unlock()
		b.ReportMetric(units, "wcu/s")
		b.ReportMetric(units/tableWCU, "x-limit")
		b.ReportMetric(100*float64(throttled)/float64(max(1, calls)), "%throttled")
		b.Logf("after %v: %.0f WCU/s accepted (%.2fx the limit), %d of %d calls throttled; over the whole run %d calls, %d throttled",
			warmup, units, units/tableWCU, throttled, calls, end.Requests["BatchWriteItem"], end.OverCapacity)
	}
	b.ReportMetric(0, "ns/op")
}

// benchLogger shows the writer's rate changes on stderr when
// MIGRATE_BENCH_VERBOSE is set.
func benchLogger() *slog.Logger {
	if os.Getenv("MIGRATE_BENCH_VERBOSE") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func benchConcurrency() int {
	n, _ := strconv.Atoi(os.Getenv("MIGRATE_BENCH_CONCURRENCY"))
	return n
}
