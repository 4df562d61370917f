package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/gcpace"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
	"github.com/pgdynamo/migrate/transform"
)

// The throughput benchmarks move the seeded sample bookstore
// (MIGRATE_BENCH_SCALE customers, default 2000: about 37,000 source rows
// and 39,000 items; 51300 makes 1,000,435 items) into one in-process
// endpoint that accepts every BatchWriteItem (nullDynamoDB), and compare
// three ways of doing it:
//
//   - the tool: the real binary, `migrate run` (BenchmarkMigrateNullEndpoint);
//   - the baseline: the hand-written script of baseline_test.go, pgx and
//     BatchWriteItem, run as its own process (BenchmarkBaseline);
//   - the ceiling: the SDK alone replaying items built beforehand
//     (BenchmarkCeiling).
//
// Every comparison is like for like: the three make the same number of
// BatchWriteItem calls at a time (MIGRATE_BENCH_CALLS, default 8: the
// tool's --concurrency, the baseline's goroutines, the ceiling's calls in
// flight), and each is timed as a whole process, from its start to its
// exit (the ceiling's building of the items it replays included: it reads
// the first 25,000 items' rows, a fortieth of a 1M-item run).
//
// The machines are shared and their speed drifts, so BenchmarkRatios runs
// the three in turn (tool, baseline, ceiling, tool, ...) and reports the
// median of the ratios of each round; BenchmarkReadOnly compares the
// tool's read pass with `psql \copy` of the same queries the same way.
// Each round logs the load average (/proc/loadavg) it started with.
// Each contender runs as its own process; its CPU time (user+sys) comes
// from the kernel's accounting (getrusage, as /usr/bin/time -v reports
// it) and its peak resident memory from /proc (see watchPeakRSS).
//
// MIGRATE_BENCH_PG_URL names a database to keep between runs (it is seeded
// once per scale; seeding 1M items takes about 15 s); otherwise each
// benchmark seeds a new database on the test Postgres (see migratetest).
// MIGRATE_BENCH_ROUNDS sets the rounds of the ratio benchmarks (default 3).
//
//	make bench BENCH='Ratios|ReadOnly' MIGRATE_BENCH_SCALE=51300
//	make bench BENCH=Ratios MIGRATE_BENCH_CALLS=64                    # at the tool's default --concurrency
//	make bench BENCH=MigrateNullEndpoint MIGRATE_BENCH_SCALE=256500   # 5M items: peak memory
//	make bench BENCH=DirectCalls MIGRATE_BENCH_SCALE=10000            # direct calls vs --sdk-middleware

const benchTable = "BenchNull"

// benchChild names the role of a benchmark's child process (the test
// binary run again): "baseline", "ceiling" or "read".
const benchChild = "MIGRATE_BENCH_CHILD"

// runBenchChild runs the child role named in the environment, if any, and
// reports whether it did (TestMain then exits with its status).
func runBenchChild() (bool, int) {
	role := os.Getenv(benchChild)
	if role == "" {
		return false, 0
	}
	ctx := context.Background()
	pg, endpoint := os.Getenv("MIGRATE_BENCH_PG"), os.Getenv("MIGRATE_BENCH_ENDPOINT")
	calls, err := strconv.Atoi(os.Getenv(benchCallsEnv))
	if err != nil || calls < 1 {
		fmt.Fprintf(os.Stderr, "%s: %s=%q: want a positive number\n", role, benchCallsEnv, os.Getenv(benchCallsEnv))
		return true, 2
	}
	var n int64
	switch role {
	case "baseline":
		n, err = runBaseline(ctx, pg, endpoint, benchTable, calls)
	case "read":
		gcpace.Start(ctx) // the garbage collector's pace of the tool
		n, err = readOnlyPass(ctx, pg)
	case "ceiling":
		var want int64
		want, err = strconv.ParseInt(os.Getenv("MIGRATE_BENCH_ITEMS"), 10, 64)
		if err == nil {
			n, err = runCeiling(ctx, pg, endpoint, want, calls)
		}
	default:
		err = fmt.Errorf("unknown %s %q", benchChild, role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", role, err)
		return true, 1
	}
	fmt.Printf("TOTAL %d %d\n", n, n)
	return true, 0
}

// readOnlyPass reads every source table of the bookstore mapping the way a
// run does (one snapshot, extract's decoding), and does nothing else.
func readOnlyPass(ctx context.Context, pg string) (int64, error) {
	m, err := engine.LoadMapping(bookstoreMapping)
	if err != nil {
		return 0, err
	}
	conn, err := extract.Connect(ctx, pg)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer snap.Close(ctx)
	cat, err := snap.Catalog(ctx, []string{m.Schema})
	if err != nil {
		return 0, err
	}
	if ds := mapping.Check(m, cat); ds != nil {
		return 0, ds
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		return 0, err
	}
	var rows int64
	for _, src := range plan.Sources {
		for _, err := range snap.Rows(ctx, src.Query) {
			if err != nil {
				return rows, err
			}
			rows++
		}
	}
	return rows, nil
}

// benchEnv is one benchmark's source database, tool binary and sink.
type benchEnv struct {
	pg    string
	bin   string
	sink  *httptest.Server
	items *atomic.Int64 // items the sink received
	state string
	calls int // BatchWriteItem calls at a time, for every contender
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	items := new(atomic.Int64)
	sink := httptest.NewServer(nullDynamoDB(items))
	b.Cleanup(sink.Close)
	return &benchEnv{
		pg: benchSource(b), bin: benchBinary(b), sink: sink, items: items,
		state: filepath.Join(b.TempDir(), "state.json"), calls: benchCalls(b),
	}
}

// benchCallsEnv sets the BatchWriteItem calls every contender makes at a
// time (default 8).
const benchCallsEnv = "MIGRATE_BENCH_CALLS"

func benchCalls(b *testing.B) int {
	calls := 8
	if s := os.Getenv(benchCallsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number of calls", benchCallsEnv, s)
		}
		calls = n
	}
	return calls
}

// loadAverage is the machine's 1-minute load average, the condition every
// figure of a shared machine is read with (-1 when unknown).
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

func benchScale(b *testing.B) int {
	scale := 2000
	if s := os.Getenv("MIGRATE_BENCH_SCALE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("MIGRATE_BENCH_SCALE=%q: want a positive number of customers", s)
		}
		scale = n
	}
	return scale
}

// benchSource returns a database holding the bookstore at the benchmark
// scale.
func benchSource(b *testing.B) string {
	b.Helper()
	scale := benchScale(b)
	pg := os.Getenv("MIGRATE_BENCH_PG_URL")
	if pg == "" {
		pg = migratetest.PostgresURL(b)
	}
	ctx := b.Context()
	if err := sqlschema.Up(ctx, pg); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The same seed and scale make the same rows; a kept database with as
	// many customers is taken as seeded.
	var have int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM customers").Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have != scale {
		start := time.Now()
		counts, err := seed.Load(ctx, conn, seed.Config{Scale: scale, Seed: 1, Replace: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("source: seeded scale %d, %d rows in %.1fs", scale, counts.Total(), time.Since(start).Seconds())
	}
	return pg
}

var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "migrate-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "migrate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// benchBinary builds the tool once per process.
func benchBinary(b *testing.B) string {
	b.Helper()
	bin, err := buildOnce()
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// measure is one process run: wall time, items, and the kernel's
// accounting of the process.
type measure struct {
	wall   time.Duration
	items  int64
	cpu    time.Duration // user + sys
	maxRSS int64         // bytes
}

func (m measure) itemsPerSec() float64 { return float64(m.items) / m.wall.Seconds() }
func (m measure) cpuPerItem() float64 {
	return float64(m.cpu.Microseconds()) / float64(max(m.items, 1))
}

// runProcess runs a command that prints the tool's summary (or a TOTAL
// line like it) and measures it.
func runProcess(b *testing.B, cmd *exec.Cmd) measure {
	b.Helper()
	cmd.Env = append(cmd.Environ(), "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_REGION=us-east-1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	hwm := watchPeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	wall := time.Since(start)
	peak := hwm()
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	m := measure{wall: wall, items: totalWritten(b, out.String()), maxRSS: peak}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if m.maxRSS == 0 {
			m.maxRSS = ru.Maxrss << 10 // KiB on Linux; see watchPeakRSS
		}
	}
	return m
}

// watchPeakRSS follows a process's peak resident memory (VmHWM in
// /proc/PID/status) until the returned function is called after the
// process ended, and returns the last value read, 0 if none. The kernel's
// ru_maxrss of a child cannot serve: Linux counts the parent's resident
// size at the time of the start as a floor of it, and the benchmark's
// process holds the sink. The peak of the last 20 ms of a run may be
// missed.
func watchPeakRSS(pid int) func() int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	path := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				for line := range strings.Lines(string(b)) {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
							peak.Store(max(peak.Load(), kb<<10))
						}
					}
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// tool runs `migrate run` into the sink, with --concurrency e.calls
// (extra flags come after it and may set another).
func (e *benchEnv) tool(b *testing.B, extra ...string) measure {
	args := []string{"run", "--mapping", bookstoreMapping, "--pg", e.pg, "--endpoint", e.sink.URL,
		"--table", benchTable, "--quiet", "--fresh", "--state", e.state, "--concurrency", strconv.Itoa(e.calls)}
	return runProcess(b, exec.Command(e.bin, append(args, extra...)...))
}

// child runs this test binary in a child role.
func (e *benchEnv) child(b *testing.B, role string, env ...string) measure {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchChild+"="+role, "MIGRATE_BENCH_PG="+e.pg, "MIGRATE_BENCH_ENDPOINT="+e.sink.URL,
		fmt.Sprintf("%s=%d", benchCallsEnv, e.calls))
	cmd.Env = append(cmd.Env, env...)
	return runProcess(b, cmd)
}

// ceiling runs the SDK's replay of want items in a child process,
// measured as a whole process like the others.
func (e *benchEnv) ceiling(b *testing.B, want int64) measure {
	return e.child(b, "ceiling", fmt.Sprintf("MIGRATE_BENCH_ITEMS=%d", want))
}

// runCeiling replays items built beforehand through the SDK, the given
// number of calls in flight, until want items were written. The first
// 25,000 items are built and replayed again and again: holding more would
// only add garbage collection work.
func runCeiling(ctx context.Context, pg, endpoint string, want int64, calls int) (int64, error) {
	const hold = 25_000
	var built []avmap
	errFull := errors.New("enough items")
	err := baselineItems(ctx, pg, func(it avmap) error {
		built = append(built, it)
		if len(built) == hold {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return 0, err
	}
	client, err := baselineClient(ctx, endpoint)
	if err != nil {
		return 0, err
	}
	items := make(chan avmap, 400)
	go func() {
		defer close(items)
		for i := range want {
			select {
			case items <- built[i%int64(len(built))]:
			case <-ctx.Done():
				return
			}
		}
	}()
	return baselineWrite(ctx, client, benchTable, calls, items)
}

func reportProcess(b *testing.B, ms []measure) {
	var wall time.Duration
	var items, rss int64
	var cpu time.Duration
	for _, m := range ms {
		wall += m.wall
		items += m.items
		cpu += m.cpu
		rss = max(rss, m.maxRSS)
	}
	b.ReportMetric(float64(items)/wall.Seconds(), "items/s")
	b.ReportMetric(float64(items)/float64(len(ms)), "items/op")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(items), "cpu-µs/item")
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
	}
}

func BenchmarkMigrateNullEndpoint(b *testing.B) {
	e := newBenchEnv(b)
	var ms []measure
	for b.Loop() {
		ms = append(ms, e.tool(b))
	}
	reportProcess(b, ms)
}

func BenchmarkBaseline(b *testing.B) {
	e := newBenchEnv(b)
	var ms []measure
	for b.Loop() {
		ms = append(ms, e.child(b, "baseline"))
	}
	reportProcess(b, ms)
}

func BenchmarkCeiling(b *testing.B) {
	e := newBenchEnv(b)
	want := e.tool(b).items // as many items as a run writes
	var ms []measure
	b.ResetTimer()
	for b.Loop() {
		ms = append(ms, e.ceiling(b, want))
	}
	reportProcess(b, ms)
}

// BenchmarkRatios runs tool, baseline and ceiling in turn, each making
// e.calls calls at a time and timed as a whole process, and reports the
// median of each round's ratios (items/s, and CPU per item, which a
// shared machine moves less), the tool's CPU per item and peak RSS, and
// the highest load average a round started with.
func BenchmarkRatios(b *testing.B) {
	e := newBenchEnv(b)
	rounds := benchRounds(b)
	var tools []measure
	var vsBase, vsCeil, cpuBase, cpuCeil, loads []float64
	b.Logf("%d BatchWriteItem calls at a time for each contender", e.calls)
	b.ResetTimer()
	for b.Loop() {
		for r := range rounds {
			loads = append(loads, loadAverage())
			t := e.tool(b)
			bl := e.child(b, "baseline")
			cl := e.ceiling(b, t.items)
			if bl.items != t.items {
				b.Fatalf("the baseline wrote %d items, the tool %d", bl.items, t.items)
			}
			tools = append(tools, t)
			vsBase = append(vsBase, t.itemsPerSec()/bl.itemsPerSec())
			vsCeil = append(vsCeil, t.itemsPerSec()/cl.itemsPerSec())
			cpuBase = append(cpuBase, t.cpuPerItem()/bl.cpuPerItem())
			cpuCeil = append(cpuCeil, t.cpuPerItem()/cl.cpuPerItem())
			b.Logf("round %d (load average %.1f): tool %.0f items/s (%.1f µs CPU/item, %.0f MiB), baseline %.0f items/s (%.1f µs CPU/item, %.0f MiB), ceiling %.0f items/s (%.1f µs CPU/item); tool/baseline %.2f, tool/ceiling %.2f",
				r+1, loads[len(loads)-1], t.itemsPerSec(), t.cpuPerItem(), float64(t.maxRSS)/(1<<20), bl.itemsPerSec(), bl.cpuPerItem(), float64(bl.maxRSS)/(1<<20),
				cl.itemsPerSec(), cl.cpuPerItem(), vsBase[len(vsBase)-1], vsCeil[len(vsCeil)-1])
		}
	}
	b.ReportMetric(median(vsBase), "tool/baseline")
	b.ReportMetric(median(vsCeil), "tool/ceiling")
	// CPU per item moves less than wall time when the machine is shared.
	b.ReportMetric(median(cpuBase), "cpu-tool/baseline")
	b.ReportMetric(median(cpuCeil), "cpu-tool/ceiling")
	b.ReportMetric(median(mapSlice(tools, measure.cpuPerItem)), "cpu-µs/item")
	b.ReportMetric(median(mapSlice(tools, measure.itemsPerSec)), "items/s")
	b.ReportMetric(float64(slices.MaxFunc(tools, func(a, b measure) int { return int(a.maxRSS - b.maxRSS) }).maxRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(slices.Max(loads), "max-loadavg")
}

// BenchmarkReadOnly compares the tool's read pass (every source query,
// decoded as a run decodes it) with `psql \copy` of the same queries to
// /dev/null, in turn, and reports the median ratio of wall times.
func BenchmarkReadOnly(b *testing.B) {
	if _, err := exec.LookPath("psql"); err != nil {
		b.Skip("BenchmarkReadOnly needs psql on the PATH")
	}
	e := newBenchEnv(b)
	script := filepath.Join(b.TempDir(), "copy.sql")
	var sb strings.Builder
	for _, q := range baselineQueries {
		fmt.Fprintf(&sb, "\\copy (%s) to '/dev/null'\n", q)
	}
	if err := os.WriteFile(script, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	rounds := benchRounds(b)
	var ratios []float64
	b.ResetTimer()
	for b.Loop() {
		for r := range rounds {
			load := loadAverage()
			read := e.child(b, "read")
			start := time.Now()
			if out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", script, e.pg).CombinedOutput(); err != nil {
				b.Fatalf("psql: %v\n%s", err, out)
			}
			copyWall := time.Since(start)
			ratios = append(ratios, read.wall.Seconds()/copyWall.Seconds())
			b.Logf("round %d (load average %.1f): read pass %.2fs (%d rows, %.1f µs CPU/row), psql \\copy %.2fs: %.2fx",
				r+1, load, read.wall.Seconds(), read.items, read.cpuPerItem(), copyWall.Seconds(), ratios[len(ratios)-1])
		}
	}
	b.ReportMetric(median(ratios), "read/copy")
}

func benchRounds(b *testing.B) int {
	rounds := 3
	if s := os.Getenv("MIGRATE_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("MIGRATE_BENCH_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	return rounds
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mapSlice[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// BenchmarkConcurrency runs the tool at several --concurrency settings
// into a sink that answers each call after MIGRATE_BENCH_LATENCY (default
// 10ms, a BatchWriteItem round trip inside an AWS region), to choose the
// default: enough calls in flight to keep the CPU busy while each waits.
func BenchmarkConcurrency(b *testing.B) {
	latency := 10 * time.Millisecond
	if s := os.Getenv("MIGRATE_BENCH_LATENCY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MIGRATE_BENCH_LATENCY: %v", err)
		}
		latency = d
	}
	e := newBenchEnv(b)
	items := new(atomic.Int64)
	null := nullDynamoDB(items)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
			time.Sleep(latency)
		}
		null.ServeHTTP(w, r)
	}))
	b.Cleanup(slow.Close)
	e.sink = slow
	for _, n := range []int{4, 8, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("c=%d", n), func(b *testing.B) {
			var ms []measure
			for b.Loop() {
				ms = append(ms, e.tool(b, "--concurrency", strconv.Itoa(n)))
			}
			reportProcess(b, ms)
		})
	}
}

func BenchmarkMigrateDynamoDBLocal(b *testing.B) {
	pg, bin := benchSource(b), benchBinary(b)
	endpoint := migratetest.DynamoDBEndpoint(b)
	table := migratetest.TableName(b, "bench")
	state := filepath.Join(b.TempDir(), "state.json")
	var ms []measure
	for b.Loop() {
		ms = append(ms, runProcess(b, exec.Command(bin, "run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", endpoint,
			"--table", table, "--quiet", "--fresh", "--state", state, "--create-table")))
	}
	reportProcess(b, ms)
}

// totalWritten reads ITEMS WRITTEN from the TOTAL line of the summary.
func totalWritten(b *testing.B, out string) int64 {
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "TOTAL" {
			n, err := strconv.ParseInt(strings.ReplaceAll(f[2], ",", ""), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	b.Fatalf("no TOTAL line in the output:\n%s", out)
	return 0
}

// nullDynamoDB answers DescribeTable with an ACTIVE table shaped like the
// bookstore mapping's and every BatchWriteItem with success, counting the
// items. Every benchmark writes into it, so that they all pay the same
// for the other end of the connection; it does as little as it can, so
// that the contenders' own costs decide. It counts the requests without
// decoding the body: inside a JSON string a quote is escaped, so
// {"PutRequest": appears only where a request starts, unless an item has
// an attribute of that name (the bookstore's have none). The tests check
// what the requests hold (recordingSink, and the end-to-end tests against
// DynamoDB Local).
func nullDynamoDB(items *atomic.Int64) http.Handler {
	put, del := []byte(`{"PutRequest":`), []byte(`{"DeleteRequest":`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var resp []byte
		status := http.StatusOK
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.BatchWriteItem":
			items.Add(int64(bytes.Count(body, put) + bytes.Count(body, del)))
			resp = []byte(`{"UnprocessedItems":{}}`)
		case "DynamoDB_20120810.DescribeTable":
			// The bookstore's table: run checks its keys and indexes.
			resp = fmt.Appendf(nil, `{"Table":{"TableName":%q,"TableStatus":"ACTIVE","CreationDateTime":%d,
				"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],
				"GlobalSecondaryIndexes":[
					{"IndexName":"GSI1","IndexStatus":"ACTIVE","KeySchema":[{"AttributeName":"GSI1PK","KeyType":"HASH"},{"AttributeName":"GSI1SK","KeyType":"RANGE"}]},
					{"IndexName":"GSI2","IndexStatus":"ACTIVE","KeySchema":[{"AttributeName":"GSI2PK","KeyType":"HASH"},{"AttributeName":"GSI2SK","KeyType":"RANGE"}]}]}}`,
				benchTable, time.Now().Unix())
		default:
			status = http.StatusBadRequest
			resp = []byte(`{"__type":"com.amazon.coral.validate#ValidationException","message":"not supported by the null endpoint"}`)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(resp)), 10))
		w.WriteHeader(status)
		w.Write(resp)
	})
}

// BenchmarkDirectCalls measures what the writer's direct calls buy (see
// load/direct.go): the tool sending its calls directly and the tool with
// every call through the SDK's whole stack (--sdk-middleware), in turn
// (A/B/A/B), into the null endpoint and into the same endpoint answering
// each call after MIGRATE_BENCH_LATENCY (default 10ms, a round trip inside
// an AWS region). It reports the medians of each pair's ratios, direct ÷
// SDK: items/s and CPU per item.
func BenchmarkDirectCalls(b *testing.B) {
	latency := 10 * time.Millisecond
	if s := os.Getenv("MIGRATE_BENCH_LATENCY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MIGRATE_BENCH_LATENCY: %v", err)
		}
		latency = d
	}
	e := newBenchEnv(b)
	null := e.sink
	items := new(atomic.Int64)
	sink := nullDynamoDB(items)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
			time.Sleep(latency)
		}
		sink.ServeHTTP(w, r)
	}))
	b.Cleanup(slow.Close)
	for _, target := range []struct {
		name string
		srv  *httptest.Server
	}{{"null", null}, {"latency=" + latency.String(), slow}} {
		b.Run(target.name, func(b *testing.B) {
			e.sink = target.srv
			rounds := benchRounds(b)
			var speed, cpu []float64
			var directs []measure
			for b.Loop() {
				for r := range rounds {
					d := e.tool(b, directFlags...)
					s := e.tool(b, sdkFlags...)
					if d.items != s.items {
						b.Fatalf("direct calls wrote %d items, the SDK's %d", d.items, s.items)
					}
					directs = append(directs, d)
					speed = append(speed, d.itemsPerSec()/s.itemsPerSec())
					cpu = append(cpu, d.cpuPerItem()/s.cpuPerItem())
					b.Logf("pair %d: direct %.0f items/s, %.1f µs CPU/item; SDK %.0f items/s, %.1f µs CPU/item; items/s %.2fx, CPU/item %.2fx",
						r+1, d.itemsPerSec(), d.cpuPerItem(), s.itemsPerSec(), s.cpuPerItem(), speed[len(speed)-1], cpu[len(cpu)-1])
				}
			}
			b.ReportMetric(median(speed), "direct/sdk-items/s")
			b.ReportMetric(median(cpu), "direct/sdk-cpu/item")
			b.ReportMetric(median(mapSlice(directs, measure.itemsPerSec)), "items/s")
		})
	}
}

// The flags of the two contenders of BenchmarkDirectCalls.
var (
	directFlags = []string{}
	sdkFlags    = []string{"--sdk-middleware"}
)
