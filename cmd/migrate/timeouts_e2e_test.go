package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestCallTimeouts puts a proxy in front of DynamoDB that holds some calls
// for longer than --call-timeout, as a stuck connection or an overloaded
// endpoint does. Held calls must be abandoned and sent again within
// --max-batch-elapsed, by run's writer and by verify's reads alike: the
// run ends complete with the clean run's table, and verify finds it equal.
// (One held call used to end the run: its header timeout was taken for a
// cancellation.)
func TestCallTimeouts(t *testing.T) {
	f := newFixture(t)
	// Calls wait in DynamoDB Local's queue, longer the more are in flight
	// and the busier the machine: the timeout leaves room for that.
	const callTimeout, hold = 3 * time.Second, 8 * time.Second

	t.Run("run", func(t *testing.T) {
		heldWrites := map[int]bool{2: true, 3: true, 10: true, 40: true, 41: true}
		proxy, err := faultproxy.Start(f.endpoint, faultproxy.Config{Hold: func(op string, n int) time.Duration {
			if op == "DescribeTable" && n == 0 || op == "BatchWriteItem" && heldWrites[n] {
				return hold
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		table := migratetest.TableName(t, "held")
		summaryPath := filepath.Join(t.TempDir(), "summary.json")
		// The binary, at its default concurrency, as a user runs it.
		res := f.run(t, f.cmd(t.TempDir(), table, "--endpoint", proxy.URL(), "--create-table", "--quiet",
			"--summary-json", summaryPath, "--call-timeout", callTimeout.String()))
		st := proxy.Stats()
		t.Logf("run through held calls in %v; proxy: held %d, abandoned %d, calls %v", res.elapsed.Round(time.Millisecond), st.Held, st.Abandoned, st.Requests)
		if res.code != 0 {
			t.Fatalf("run through held calls exited %d\n%s", res.code, res.output())
		}
		if st.Held != len(heldWrites)+1 || st.Abandoned != st.Held {
			t.Errorf("the proxy held %d calls and their clients abandoned %d; want %d held, all abandoned", st.Held, st.Abandoned, len(heldWrites)+1)
		}
		var sum engine.RunResult
		data, err := os.ReadFile(summaryPath)
		if err != nil || json.Unmarshal(data, &sum) != nil {
			t.Fatalf("summary JSON: %v\n%s", err, data)
		}
		if sum.Status != "complete" || sum.Total.ItemsWritten != int64(len(f.clean)) || sum.Total.Retries < int64(len(heldWrites)) {
			t.Errorf("summary: status %s, %d items written, %d retries; want complete, %d, at least %d", sum.Status, sum.Total.ItemsWritten, sum.Total.Retries, len(f.clean), len(heldWrites))
		}
		sameItems(t, "table written through held calls", scanCanonical(t, f.ddb, table), f.clean)
	})

	t.Run("verify", func(t *testing.T) {
		// The first two Scan pages are held: the first attempt of two
		// segments, or two attempts of one.
		proxy, err := faultproxy.Start(f.endpoint, faultproxy.Config{Hold: func(op string, n int) time.Duration {
			if op == "Scan" && n < 2 {
				return hold
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", f.pg, "--endpoint", proxy.URL(),
			"--table", f.cleanTable, "--call-timeout", callTimeout.String())
		st := proxy.Stats()
		t.Logf("verify through held scans: held %d, abandoned %d, calls %v", st.Held, st.Abandoned, st.Requests)
		if code != 0 {
			t.Fatalf("verify through held scans exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if st.Held != 2 || st.Abandoned != 2 || st.Requests["Scan"] < 3 {
			t.Errorf("held %d, abandoned %d, %d Scan calls; want 2 held and abandoned, and the pages asked again", st.Held, st.Abandoned, st.Requests["Scan"])
		}
	})

	t.Run("a call slower than every attempt", func(t *testing.T) {
		// Every Scan is held: verify gives up after --max-batch-elapsed,
		// counts the attempts and names the flags.
		proxy, err := faultproxy.Start(f.endpoint, faultproxy.Config{Hold: func(op string, _ int) time.Duration {
			if op == "Scan" {
				return hold
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		start := time.Now()
		_, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", f.pg, "--endpoint", proxy.URL(),
			"--table", f.cleanTable, "--segments", "1", "--call-timeout", "300ms", "--max-batch-elapsed", "2s")
		elapsed := time.Since(start)
		if code != exitFailure {
			t.Fatalf("verify exited %d, want 1\nstderr:\n%s", code, errOut)
		}
		for _, want := range []string{"gave up after", "attempts", "no answer within the call timeout (300ms)", "--call-timeout", "--max-batch-elapsed"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr does not say %q:\n%s", want, errOut)
			}
		}
		if strings.Contains(errOut, "0 attempts") || strings.Contains(errOut, "MaxBatchElapsed") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if elapsed > 30*time.Second {
			t.Errorf("gave up after %v, want about 2s plus reading the source", elapsed)
		}
	})
}
