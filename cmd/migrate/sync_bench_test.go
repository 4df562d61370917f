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
	"github.com/pgdynamo/migrate/internal/replicate"
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
//   - Fanout: see benchFanout.
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
	for _, ep := range endpoints {
		b.Run("Fanout/"+ep.name, func(b *testing.B) { benchFanout(b, ep.url) })
	}
}

// confirmSampler records when each confirmed position was first reported.
type confirmSampler struct {
	engine.NopSyncObserver
	mu      sync.Mutex
	samples []confirmSample
}

type confirmSample struct {
	at        time.Time
	confirmed replicate.LSN
}

func (s *confirmSampler) Status(st engine.SyncStatus) {
	s.mu.Lock()
	s.samples = append(s.samples, confirmSample{time.Now(), st.Confirmed})
	s.mu.Unlock()
}

// reached is when the confirmed position first reached lsn (zero: not yet).
func (s *confirmSampler) reached(lsn replicate.LSN) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.samples {
		if c.confirmed >= lsn {
			return c.at
		}
	}
	return time.Time{}
}

// benchFanout: while sync streams the workload at 50 transactions/s, an
// author whose name 2,000 order lines (and the author's books) copy is
// renamed, and a one-item change (a customer's email) is committed right
// after it. Reported: the commit-to-confirmed time of each (sampled every
// 100 ms), i.e. the lag spike of the fan-out and how long it held up the
// change behind it, and the items the rename affected.
func benchFanout(b *testing.B, endpoint string) {
	pg, cfg := benchSync(b, endpoint)
	ctx := b.Context()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The author with the most order lines gets 2,000 of them: more lines
	// of existing orders with their books (applied by the stream, before
	// the measure).
	var author, lines int64
	if err := conn.QueryRow(ctx, `SELECT bk.author_id, count(*) FROM books bk JOIN order_items oi USING (book_id)
		GROUP BY 1 ORDER BY 2 DESC LIMIT 1`).Scan(&author, &lines); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO order_items
		SELECT o.order_id, bk.book_id, 1, bk.price FROM orders o CROSS JOIN books bk
		WHERE bk.author_id = $1 AND NOT EXISTS (SELECT FROM order_items oi WHERE oi.order_id = o.order_id AND oi.book_id = bk.book_id)
		LIMIT $2`, author, max(0, 2000-lines)); err != nil {
		b.Fatal(err)
	}
	var spikes, behind []float64
	var items int64
	for b.Loop() {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM books bk JOIN order_items oi USING (book_id) WHERE bk.author_id = $1`, author).Scan(&lines); err != nil {
			b.Fatal(err)
		}
		sampler := &confirmSampler{}
		cfg.UntilCaughtUp, cfg.Observer, cfg.StatusEvery = false, sampler, 100*time.Millisecond
		stop := backgroundSync(b, ctx, cfg)
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		wdone := make(chan error, 1)
		go func() {
			_, err := workload.Run(wctx, pg, workload.Config{Workers: 3, Rate: 50, Seed: 9})
			wdone <- err
		}()
		time.Sleep(5 * time.Second)
		commit := func(sql string, args ...any) (time.Time, replicate.LSN) {
			if _, err := conn.Exec(ctx, sql, args...); err != nil {
				b.Fatal(err)
			}
			at := time.Now()
			lsn, err := replicate.CurrentLSN(ctx, conn) // past this commit, flushed or not
			if err != nil {
				b.Fatal(err)
			}
			return at, lsn
		}
		renamed, renameLSN := commit("UPDATE authors SET name = name || ' (renamed)' WHERE author_id = $1", author)
		changed, changeLSN := commit("UPDATE customers SET email = 'fanout-' || customer_id || '@example.org' WHERE customer_id = (SELECT min(customer_id) FROM customers)")
		deadline := time.Now().Add(time.Minute)
		for sampler.reached(changeLSN).IsZero() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if sampler.reached(changeLSN).IsZero() {
			b.Fatal("the changes after the rename were not confirmed within a minute")
		}
		spike, after := sampler.reached(renameLSN).Sub(renamed).Seconds(), sampler.reached(changeLSN).Sub(changed).Seconds()
		cancel()
		if err := <-wdone; err != nil {
			b.Fatal(err)
		}
		final := stop()
		spikes, behind = append(spikes, spike), append(behind, after)
		items = max(items, final.Final.Fanout.Max)
		b.Logf("author %d (%d order lines): rename confirmed %.2f s after its commit, the change after it %.2f s; most items by one change: %d (%s)",
			author, lines, spike, after, final.Final.Fanout.Max, final.Final.Fanout.MaxChange)
	}
	b.ReportMetric(median(spikes), "rename-lag-s")
	b.ReportMetric(median(behind), "next-change-lag-s")
	b.ReportMetric(float64(items), "max-fanout-items")
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
// backgroundSync runs engine.Sync with cfg until the returned stop is
// called; stop waits for it and returns its result (the interruption is
// how it ends, not a failure).
func backgroundSync(b *testing.B, ctx context.Context, cfg engine.SyncConfig) (stop func() *engine.SyncResult) {
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var final *engine.SyncResult
	go func() {
		res, err := engine.Sync(sctx, cfg)
		final = res
		done <- err
	}()
	return func() *engine.SyncResult {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, engine.ErrInterrupted) {
			b.Fatal(err)
		}
		return final
	}
}

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
		stop := backgroundSync(b, b.Context(), cfg)
		wctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		st, err := workload.Run(wctx, pg, workload.Config{Workers: 3, Rate: rate, Seed: 8})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		final := stop()
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
