package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/s3test"
)

// The export benchmarks run the real binary over the seeded bookstore of
// benchSource (MIGRATE_BENCH_SCALE) and report items/s and peak RSS, to
// compare with BenchmarkMigrateNullEndpoint: the same source and
// transform, files instead of BatchWriteItem.
//
//	make bench BENCH='Export|MigrateNull'

func BenchmarkExportDir(b *testing.B) {
	bin, pg := benchBinary(b), benchSource(b)
	for _, comp := range []string{"gzip", "zstd", "none"} {
		b.Run(comp, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "export")
			benchExport(b, bin, pg, dir, "--compression", comp)
		})
	}
}

// BenchmarkExportS3 exports to the in-process S3 of the tests (in memory,
// in the benchmark's process: it takes CPU from the same two cores).
func BenchmarkExportS3(b *testing.B) {
	bin, pg := benchBinary(b), benchSource(b)
	srv := s3test.New(b, "bench")
	benchExport(b, bin, pg, "s3://bench/export", "--s3-endpoint", srv.URL, "--s3-path-style")
}

// BenchmarkLoadExportNullEndpoint loads an export (run --from-export)
// into the endpoint that acknowledges every batch.
func BenchmarkLoadExportNullEndpoint(b *testing.B) {
	bin, pg := benchBinary(b), benchSource(b)
	dir := filepath.Join(b.TempDir(), "export")
	state := filepath.Join(b.TempDir(), "export.state.json")
	cmd := exec.Command(bin, "export", "--mapping", bookstoreMapping, "--pg", pg, "--to", dir, "--state", state, "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("export: %v\n%s", err, out)
	}
	var items atomic.Int64
	null := httptest.NewServer(nullDynamoDB(&items))
	b.Cleanup(null.Close)
	benchLoop(b, func() *exec.Cmd {
		return exec.Command(bin, "run", "--from-export", dir, "--mapping", bookstoreMapping, "--endpoint", null.URL, "--table", "BenchNull",
			"--quiet", "--fresh", "--state", filepath.Join(b.TempDir(), "load.state.json"))
	})
}

// BenchmarkReaders reads the bookstore with 1, 2 and 4 parallel readers
// (tables analyzed, split into ranges of 5,000 rows), exporting to a
// directory uncompressed and writing into the null endpoint. Besides
// items/s it reports the CPUs the migrate process kept busy: on this
// project's 2-core machine PostgreSQL and migrate share the cores.
func BenchmarkReaders(b *testing.B) {
	bin, pg := benchBinary(b), benchSource(b)
	conn, err := pgx.Connect(b.Context(), pg)
	if err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(b.Context(), "ANALYZE")
	conn.Close(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	var items atomic.Int64
	null := httptest.NewServer(nullDynamoDB(&items))
	b.Cleanup(null.Close)
	for _, readers := range []int{1, 2, 4} {
		par := []string{"--readers", strconv.Itoa(readers), "--range-rows", "5000"}
		b.Run(fmt.Sprintf("export/N=%d", readers), func(b *testing.B) {
			benchExport(b, bin, pg, filepath.Join(b.TempDir(), "export"), append(par, "--compression", "none")...)
		})
		b.Run(fmt.Sprintf("run/N=%d", readers), func(b *testing.B) {
			state := filepath.Join(b.TempDir(), "state.json")
			benchLoop(b, func() *exec.Cmd {
				return exec.Command(bin, append([]string{"run", bookstoreMapping, "--pg", pg, "--endpoint", null.URL, "--table", "BenchNull",
					"--quiet", "--fresh", "--state", state}, par...)...)
			})
		})
	}
}

func benchExport(b *testing.B, bin, pg, to string, extra ...string) {
	b.Helper()
	state := filepath.Join(b.TempDir(), "state.json")
	benchLoop(b, func() *exec.Cmd {
		args := append([]string{"export", "--mapping", bookstoreMapping, "--pg", pg, "--to", to, "--quiet", "--fresh", "--state", state}, extra...)
		return exec.Command(bin, args...)
	})
}

// benchLoop runs the command b.N times and reports items/s (from the
// summary's TOTAL line) and the peak resident memory of the process.
func benchLoop(b *testing.B, mk func() *exec.Cmd) {
	b.Helper()
	var maxRSS, written int64
	var cpu atomic.Int64 // nanoseconds of CPU the process used
	b.ResetTimer()
	for b.Loop() {
		cmd := mk()
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_REGION=us-east-1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
		cpu.Add(int64(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()))
		written = totalWritten(b, out.String())
	}
	b.StopTimer()
	b.ReportMetric(float64(written)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64(cpu.Load())/float64(b.N)/1e9/(b.Elapsed().Seconds()/float64(b.N)), "migrate-CPUs")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
}
