package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// The migrate benchmarks run the real binary over a seeded bookstore
// (MIGRATE_BENCH_SCALE customers, default 2000: about 40,000 source rows and
// 40,000 items) and report items/s and the process's peak resident memory.
// Running them at two scales shows whether memory grows with the table:
//
//	make bench BENCH=Migrate MIGRATE_BENCH_SCALE=20000
//
// NullEndpoint measures the tool itself against an in-process endpoint that
// acknowledges every batch; DynamoDBLocal measures it against the reference
// engine, which is CPU-bound far below real DynamoDB.
func BenchmarkMigrateNullEndpoint(b *testing.B) {
	bin, pg := benchSource(b)
	var items atomic.Int64
	null := httptest.NewServer(nullDynamoDB(&items))
	b.Cleanup(null.Close)
	benchRun(b, bin, pg, null.URL, "BenchNull", false)
	b.ReportMetric(float64(items.Load())/float64(b.N), "items/op")
}

func BenchmarkMigrateDynamoDBLocal(b *testing.B) {
	bin, pg := benchSource(b)
	endpoint := migratetest.DynamoDBEndpoint(b)
	benchRun(b, bin, pg, endpoint, migratetest.TableName(b, "bench"), true)
}

func benchSource(b *testing.B) (bin, pg string) {
	b.Helper()
	scale := 2000
	if s := os.Getenv("MIGRATE_BENCH_SCALE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("MIGRATE_BENCH_SCALE: %v", err)
		}
		scale = n
	}
	pg = migratetest.PostgresURL(b)
	ctx := b.Context()
	if err := sqlschema.Up(ctx, pg); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	counts, err := seed.Load(ctx, conn, seed.Config{Scale: scale, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("source: scale %d, %d rows", scale, counts.Total())
	bin = filepath.Join(b.TempDir(), "migrate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, pg
}

func benchRun(b *testing.B, bin, pg, endpoint, table string, create bool) {
	b.Helper()
	var maxRSS int64
	var written int64
	state := filepath.Join(b.TempDir(), "state.json")
	b.ResetTimer()
	for b.Loop() {
		args := []string{"run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", endpoint, "--table", table, "--quiet", "--fresh", "--state", state}
		if create {
			args = append(args, "--create-table")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_REGION=us-east-1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("migrate run: %v\n%s", err, out.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
		written = totalWritten(b, out.String())
	}
	b.StopTimer()
	b.ReportMetric(float64(written)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
}

// totalWritten reads ITEMS WRITTEN from the TOTAL line of the summary.
func totalWritten(b *testing.B, out string) int64 {
	for _, line := range bytes.Split([]byte(out), []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) >= 3 && string(f[0]) == "TOTAL" {
			n, err := strconv.ParseInt(strings.ReplaceAll(string(f[2]), ",", ""), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	b.Fatalf("no TOTAL line in the summary:\n%s", out)
	return 0
}

// nullDynamoDB answers DescribeTable with an ACTIVE table and every
// BatchWriteItem with success, counting the items, as fast as it can.
func nullDynamoDB(items *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var resp []byte
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.BatchWriteItem":
			var in struct {
				RequestItems map[string][]json.RawMessage
			}
			_ = json.Unmarshal(body, &in)
			for _, reqs := range in.RequestItems {
				items.Add(int64(len(reqs)))
			}
			resp = []byte(`{"UnprocessedItems":{}}`)
		case "DynamoDB_20120810.DescribeTable":
			// The bookstore's table: run checks its keys and indexes.
			resp = fmt.Appendf(nil, `{"Table":{"TableName":"BenchNull","TableStatus":"ACTIVE","CreationDateTime":%d,
				"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"},{"AttributeName":"SK","KeyType":"RANGE"}],
				"GlobalSecondaryIndexes":[
					{"IndexName":"GSI1","KeySchema":[{"AttributeName":"GSI1PK","KeyType":"HASH"},{"AttributeName":"GSI1SK","KeyType":"RANGE"}]},
					{"IndexName":"GSI2","KeySchema":[{"AttributeName":"GSI2PK","KeyType":"HASH"},{"AttributeName":"GSI2SK","KeyType":"RANGE"}]}]}}`, time.Now().Unix())
		default:
			w.WriteHeader(http.StatusBadRequest)
			resp = []byte(`{"__type":"com.amazon.coral.validate#ValidationException","message":"not supported by the null endpoint"}`)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(resp)), 10))
		w.Write(resp)
	})
}
