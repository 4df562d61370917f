package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/internal/workload"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// The sync benchmarks stream the workload of internal/workload into the
// bookstore's table through engine.Sync, in-process:
//
//   - Drain: the workload runs unthrottled for a while with no sync
//     running, building a backlog in the slot; then sync --until-caught-up
//     applies it. Reported: changes/s and items/s applied.
//   - Steady: sync runs while the workload commits a steady 50
//     transactions/s (MIGRATE_BENCH_SYNC_RATE) for 30 s. Reported: the
//     commit-to-acknowledged latency of each round (p50, p95, max, as
//     sampled every second) and the mean lag in bytes.
//
// Each runs against DynamoDB Local (the reference engine, CPU-bound) and
// against an in-process endpoint that accepts every batch (the tool's own
// cost). They are slow; run them on their own:
//
//	make bench BENCH=Sync
func BenchmarkSync(b *testing.B) {
	null := httptest.NewServer(nullWithIndexes(nullDynamoDB(new(atomic.Int64))))
	b.Cleanup(null.Close)
	endpoints := []struct{ name, url string }{{"DynamoDBLocal", ""}, {"NullEndpoint", null.URL}}
	for _, ep := range endpoints {
		b.Run("Drain/"+ep.name, func(b *testing.B) { benchDrain(b, ep.url) })
	}
	for _, ep := range endpoints {
		b.Run("Steady/"+ep.name, func(b *testing.B) { benchSteady(b, ep.url) })
	}
}

// benchSync is a seeded bookstore and the config syncing it.
func benchSync(b *testing.B, endpoint string) (string, engine.SyncConfig) {
	b.Helper()
	ctx := b.Context()
	pg := migratetest.PostgresURL(b)
	if err := sqlschema.Up(ctx, pg); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: 500, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL"); err != nil {
		b.Fatal(err)
	}
	table := "BenchNull"
	create := false
	if endpoint == "" {
		endpoint, table, create = migratetest.DynamoDBEndpoint(b), migratetest.TableName(b, "syncbench"), true
	}
	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: endpoint})
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.SyncConfig{
		Mapping: mustMapping(b), Postgres: pg, DynamoDB: client, Table: table, CreateTable: create,
		StateFile: filepath.Join(b.TempDir(), "state.json"), Slot: "bench", Publication: "bench",
	}
	b.Cleanup(func() {
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: pg, Slot: "bench", Publication: "bench"}); err != nil {
			b.Errorf("drop sync: %v", err)
		}
	})
	// The initial load, and the slot.
	cfg.UntilCaughtUp = true
	if _, err := engine.Sync(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	return pg, cfg
}

func mustMapping(b *testing.B) *mapping.Mapping {
	m, err := engine.LoadMapping(bookstoreMapping)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func benchDrain(b *testing.B, endpoint string) {
	pg, cfg := benchSync(b, endpoint)
	var changes, items int64
	var elapsed time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), 20*time.Second)
		st, err := workload.Run(ctx, pg, workload.Config{Workers: 4, Seed: 7})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("backlog: %d transactions", st.Committed)
		began := time.Now()
		res, err := engine.Sync(b.Context(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(began)
		changes += res.Final.Changes
		items += res.Final.ItemsPut + res.Final.ItemsDeleted
		b.Logf("drained %d transactions, %d changes, %d items in %v (fan-out: %+v)", res.Final.Transactions, res.Final.Changes,
			res.Final.ItemsPut+res.Final.ItemsDeleted, time.Since(began).Round(time.Millisecond), res.Final.Fanout)
	}
	b.ReportMetric(float64(changes)/elapsed.Seconds(), "changes/s")
	b.ReportMetric(float64(items)/elapsed.Seconds(), "items/s")
}

// lagSampler records the stream's status every second.
type lagSampler struct {
	engine.NopSyncObserver
	mu      sync.Mutex
	samples []engine.SyncStatus
}

func (s *lagSampler) Status(st engine.SyncStatus) {
	s.mu.Lock()
	s.samples = append(s.samples, st)
	s.mu.Unlock()
}

func benchSteady(b *testing.B, endpoint string) {
	pg, cfg := benchSync(b, endpoint)
	rate := 50.0
	if s := os.Getenv("MIGRATE_BENCH_SYNC_RATE"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatalf("MIGRATE_BENCH_SYNC_RATE: %v", err)
		}
		rate = r
	}
	var latencies []float64
	var lagBytes, changes int64
	var span time.Duration
	for b.Loop() {
		sampler := &lagSampler{}
		cfg.UntilCaughtUp, cfg.Observer, cfg.StatusEvery = false, sampler, time.Second
		ctx, stop := context.WithCancel(b.Context())
		done := make(chan error, 1)
		var final *engine.SyncResult
		go func() {
			res, err := engine.Sync(ctx, cfg)
			final = res
			done <- err
		}()
		wctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		st, err := workload.Run(wctx, pg, workload.Config{Workers: 3, Rate: rate, Seed: 8})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		stop()
		if err := <-done; err != nil && !errors.Is(err, engine.ErrInterrupted) {
			b.Fatal(err)
		}
		sampler.mu.Lock()
		for _, s := range sampler.samples[min(3, len(sampler.samples)):] { // after the first rounds
			latencies = append(latencies, s.LastLatency)
			lagBytes += s.LagBytes
		}
		sampler.mu.Unlock()
		changes += final.Final.Changes
		span += final.Final.Elapsed
		b.Logf("workload: %d transactions at %.0f/s; sync: %d changes, %d items", st.Committed, rate, final.Final.Changes, final.Final.ItemsPut+final.Final.ItemsDeleted)
	}
	if len(latencies) == 0 {
		b.Fatal("no status samples")
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(changes)/span.Seconds(), "changes/s")
	b.ReportMetric(latencies[len(latencies)/2], "lag-p50-s")
	b.ReportMetric(latencies[len(latencies)*95/100], "lag-p95-s")
	b.ReportMetric(latencies[len(latencies)-1], "lag-max-s")
	b.ReportMetric(float64(lagBytes)/float64(len(latencies)), "lag-bytes")
}

// nullWithIndexes describes the null endpoint's table with the
// bookstore's indexes, which sync checks before it loads.
func nullWithIndexes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.DescribeTable" {
			next.ServeHTTP(w, r)
			return
		}
		gsi := func(name string) string {
			return fmt.Sprintf(`{"IndexName":%q,"IndexStatus":"ACTIVE","KeySchema":[{"AttributeName":"%sPK","KeyType":"HASH"},{"AttributeName":"%sSK","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}`, name, name, name)
		}
		resp := fmt.Appendf(nil, `{"Table":{"TableName":"BenchNull","TableStatus":"ACTIVE","CreationDateTime":%d,
			"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],
			"GlobalSecondaryIndexes":[%s,%s]}}`, time.Now().Unix(), gsi("GSI1"), gsi("GSI2"))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(resp)), 10))
		w.Write(resp)
	})
}
