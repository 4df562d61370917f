package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/migratetest"
)

// testFaults migrates the bookstore in-process through a proxy that faults
// 30% of the BatchWriteItem calls (throttling, partial UnprocessedItems,
// 500/503, connections dropped before or after the write), from a fixed
// seed. The table must equal the clean run's, every kind of fault must
// have been injected, and the summary must report the retries and
// throttles.
func testFaults(t *testing.T, f *fixture) {
	proxy, err := faultproxy.Start(f.endpoint, faultproxy.Config{Seed: 30, Rate: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	table := migratetest.TableName(t, "faults")
	summaryPath := filepath.Join(t.TempDir(), "summary.json")
	out, errOut, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", f.pg, "--endpoint", proxy.URL(),
		"--table", table, "--create-table", "--quiet", "--state", filepath.Join(t.TempDir(), "state.json"),
		"--summary-json", summaryPath,
		// The writer halves its rate on every throttle, down to --min-wcu;
		// with 30% of the calls faulted it would crawl at the default floor.
		// Rate adaptation is the loader's tests' business; this one is about
		// the table's content.
		"--min-wcu", "2000")
	if code != 0 {
		t.Fatalf("run through faults exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("run through faults:\n%s", out)
	stats := proxy.Stats()
	t.Logf("proxy: %+v", stats)
	for _, kind := range faultproxy.AllFaults {
		if stats.Faults[kind] == 0 {
			t.Errorf("the proxy injected no %s fault", kind)
		}
	}
	calls := stats.Requests["BatchWriteItem"]
	faults := 0
	for _, n := range stats.Faults {
		faults += n
	}
	if rate := float64(faults) / float64(calls); rate < 0.2 || rate > 0.4 {
		t.Errorf("%d faults in %d calls (%.0f%%), want about 30%%", faults, calls, rate*100)
	}
	var sum engine.RunResult
	data, err := os.ReadFile(summaryPath)
	if err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("summary JSON: %v\n%s", err, data)
	}
	if sum.Total.Retries == 0 || sum.Total.Throttled == 0 || sum.Writer.ThrottledCalls == 0 {
		t.Errorf("the summary reports no retries or throttles: %+v %+v", sum.Total, sum.Writer)
	}
	if sum.Total.ItemsWritten != int64(len(f.clean)) || sum.Status != "complete" {
		t.Errorf("summary: %d items written, status %s; want %d, complete", sum.Total.ItemsWritten, sum.Status, len(f.clean))
	}
	sameItems(t, "table written through faults", scanCanonical(t, f.ddb, table), f.clean)
}
