package load_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// BenchmarkFaultsLocal measures the writer at its default settings in
// front of DynamoDB Local, clean and with 30% of the calls faulted (10%
// throttled, 10% partial batches, 5% 5xx, 5% connections dropped after
// the write), in pairs: clean, faulted, clean, faulted, ... each into a
// new table through the same fault proxy (rate 0 for the clean runs), every
// other pair faulted first, so that the machine's drift and the engine's
// warming up hit both alike. It reports the median of the
// pairs' faulted ÷ clean items/s (x-clean, the target is ≥ 0.5) and the
// range.
//
//	make bench PKGS=./load BENCH=FaultsLocal
//
// MIGRATE_BENCH_ITEMS sets the items of a run (default 20,000: DynamoDB
// Local writes 2,000-4,000 a second on two cores), MIGRATE_BENCH_ROUNDS
// the pairs (default 3).
func BenchmarkFaultsLocal(b *testing.B) {
	n := envInt(b, "MIGRATE_BENCH_ITEMS", 20_000)
	rounds := envInt(b, "MIGRATE_BENCH_ROUNDS", 3)
	endpoint := migratetest.DynamoDBEndpoint(b)
	direct := migratetest.DynamoDBClient(b, endpoint)
	items := faultWorkload(n)
	faults := []faultproxy.Fault{
		faultproxy.Throttling, faultproxy.ProvisionedThroughputExceeded,
		faultproxy.Unprocessed, faultproxy.Unprocessed,
		faultproxy.Unavailable, faultproxy.DropResponse,
	}
	var ratios, clean, faulted []float64
	for b.Loop() {
		for r := range rounds {
			// Every other pair runs the faulted write first: the engine
			// warms up, its tables pile up, the machine's load drifts.
			var c, f float64
			cleanRun := func() { c = writeLocal(b, endpoint, direct, items, faultproxy.Config{}) }
			faultRun := func() {
				f = writeLocal(b, endpoint, direct, items, faultproxy.Config{Seed: uint64(100 + r), Rate: 0.3, Faults: faults})
			}
			if r%2 == 0 {
				cleanRun()
				faultRun()
			} else {
				faultRun()
				cleanRun()
			}
			clean, faulted, ratios = append(clean, c), append(faulted, f), append(ratios, f/c)
			// On stderr: the benchmark's log is cut after a few lines.
			fmt.Fprintf(os.Stderr, "BenchmarkFaultsLocal pair %d: clean %.0f items/s, faulted %.0f items/s: %.2fx\n", r+1, c, f, f/c)
		}
	}
	b.ReportMetric(median(ratios), "x-clean")
	b.ReportMetric(slices.Min(ratios), "x-clean-min")
	b.ReportMetric(slices.Max(ratios), "x-clean-max")
	b.ReportMetric(median(clean), "clean-items/s")
	b.ReportMetric(median(faulted), "faulted-items/s")
	b.ReportMetric(0, "ns/op")
}

// writeLocal writes items into a new table through a fault proxy with
// cfg, at the writer's and client's defaults, and returns items/s.
func writeLocal(b *testing.B, endpoint string, direct *dynamodb.Client, items []contract.Item, cfg faultproxy.Config) float64 {
	b.Helper()
	ctx := context.Background()
	wcfg := load.Config{Table: migratetest.TableName(b, "faults"), PartitionKey: "PK", SortKey: "SK"}
	if err := load.EnsureTable(ctx, direct, wcfg); err != nil {
		b.Fatalf("EnsureTable: %v", err)
	}
	defer func() {
		if _, err := direct.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(wcfg.Table)}); err != nil {
			b.Errorf("DeleteTable %s: %v", wcfg.Table, err)
		}
	}()
	p, err := faultproxy.Start(endpoint, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: p.URL(), Region: "us-east-1", Credentials: load.TestCreds})
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("MIGRATE_BENCH_VERBOSE") != "" {
		wcfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	w, err := load.NewWriter(client, wcfg)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	stats, err := w.Write(ctx, load.Feed(items...))
	elapsed := time.Since(start)
	if err != nil {
		b.Fatalf("write: %v", err)
	}
	if stats.Total.Written != int64(len(items)) {
		b.Fatalf("%d of %d items written", stats.Total.Written, len(items))
	}
	st := p.Stats()
	fmt.Fprintf(os.Stderr, "BenchmarkFaultsLocal: fault rate %.1f: %d items in %v, %d calls, faults %v, %d throttled calls\n",
		cfg.Rate, len(items), elapsed.Round(time.Millisecond), stats.Calls, st.Faults, stats.ThrottledCalls)
	return float64(len(items)) / elapsed.Seconds()
}

// faultWorkload is n items of about 200 bytes (1 write unit), 10 per
// partition key.
func faultWorkload(n int) []contract.Item {
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

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
