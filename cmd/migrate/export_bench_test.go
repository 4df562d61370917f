package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/internal/s3test"
	"github.com/pgdynamo/migrate/load"
)

// The export benchmarks run the real binary over the seeded bookstore of
// benchSource (MIGRATE_BENCH_SCALE) and report items/s and peak RSS, to
// compare with BenchmarkMigrateNullEndpoint: the same source and
// transform, files instead of BatchWriteItem.
//
//	make bench BENCH='Export|MigrateNull'
//	make bench BENCH=ExportVsRun MIGRATE_BENCH_SCALE=51300 MIGRATE_BENCH_ROUNDS=5

// BenchmarkExportVsRun runs `migrate export` to a directory (zstd, then
// gzip) and `migrate run` into the in-process endpoint (at its default
// --concurrency, as a user runs it) in turn, each a whole process over the
// same seeded source, and reports per compression the median of each
// round's ratios export ÷ run of items/s and of CPU per item, the
// export's items/s, MB/s of DYNAMODB_JSON (uncompressed, what Import from
// S3 reads and bills; 10^6 bytes) and CPU per item (user+sys), and the
// highest load average a round started with.
func BenchmarkExportVsRun(b *testing.B) {
	e := newBenchEnv(b)
	rounds := benchRounds(b)
	comps := []string{export.CompressionZstd, export.CompressionGzip}
	ratios := map[string][]float64{}
	exports := map[string][]measure{}
	mbps := map[string][]float64{}
	cpus := map[string][]float64{}
	var runs []measure
	var loads []float64
	b.ResetTimer()
	for b.Loop() {
		for r := range rounds {
			loads = append(loads, loadAverage())
			line := fmt.Sprintf("round %d (load average %.1f):", r+1, loads[len(loads)-1])
			for _, comp := range comps {
				run := e.tool(b, "--concurrency", strconv.Itoa(load.DefaultConcurrency))
				dir := filepath.Join(b.TempDir(), "export")
				x := runProcess(b, exec.Command(e.bin, "export", "--mapping", bookstoreMapping, "--pg", e.pg, "--to", dir,
					"--compression", comp, "--quiet", "--fresh", "--state", filepath.Join(b.TempDir(), "state.json")))
				if x.items != run.items {
					b.Fatalf("export wrote %d items, run %d", x.items, run.items)
				}
				raw := exportedBytes(b, dir)
				runs = append(runs, run)
				exports[comp] = append(exports[comp], x)
				ratios[comp] = append(ratios[comp], x.itemsPerSec()/run.itemsPerSec())
				mbps[comp] = append(mbps[comp], float64(raw)/1e6/x.wall.Seconds())
				cpus[comp] = append(cpus[comp], x.cpuPerItem()/run.cpuPerItem())
				line += fmt.Sprintf(" run %.0f items/s (%.1f µs CPU/item), export %s %.0f items/s, %.1f MB/s (%.1f µs CPU/item, %.0f MiB): %.2fx;",
					run.itemsPerSec(), run.cpuPerItem(), comp, x.itemsPerSec(), mbps[comp][len(mbps[comp])-1], x.cpuPerItem(), float64(x.maxRSS)/(1<<20), ratios[comp][len(ratios[comp])-1])
				os.RemoveAll(dir)
			}
			b.Log(line)
		}
	}
	for _, comp := range comps {
		b.ReportMetric(median(ratios[comp]), comp+"/run")
		b.ReportMetric(median(mapSlice(exports[comp], measure.itemsPerSec)), comp+"-items/s")
		b.ReportMetric(median(mbps[comp]), comp+"-MB/s")
		b.ReportMetric(median(mapSlice(exports[comp], measure.cpuPerItem)), comp+"-cpu-µs/item")
		b.ReportMetric(median(cpus[comp]), comp+"-cpu/run")
	}
	b.ReportMetric(median(mapSlice(runs, measure.itemsPerSec)), "run-items/s")
	b.ReportMetric(median(mapSlice(runs, measure.cpuPerItem)), "run-cpu-µs/item")
	b.ReportMetric(slices.Max(loads), "max-loadavg")
}

// exportedBytes reads the uncompressed bytes of a complete export from its
// manifest.
func exportedBytes(b *testing.B, dir string) int64 {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		b.Fatal(err)
	}
	var m export.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	return m.UncompressedBytes
}

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
