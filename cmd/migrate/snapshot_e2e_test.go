package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/migratetest"
)

const idleMapping = `table: Idle
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{id}", sk: "PROFILE" }
    attributes: { id: id, name: name }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{id}" }
    attributes: { id: id, total: total }
`

// TestSnapshotSurvivesIdleTimeout runs the real CLI against a source whose
// DBA ends sessions idle in a transaction after 5 s and statements after
// 3 s (ALTER DATABASE ... SET, as in production), with a writer slowed to
// 100 write units/s, 4 calls in flight and a small window: the first table's rows are all
// sent by the server long before the writer takes the last of them, so
// the snapshot's session waits, idle in its transaction, about 10 s
// before it asks for the second table. Before the snapshot turned these
// timeouts off for itself the server ended it there (SQLSTATE 25P03). The
// run must complete, with the same items as a clean run, log and list
// which settings it overrode, and report how long it held the snapshot;
// with one reader and with two (whose exporting session sits idle
// throughout). verify and plan then read the same source, and plan
// reports the snapshot's hold.
func TestSnapshotSurvivesIdleTimeout(t *testing.T) {
	pg, endpoint := migratetest.PostgresURL(t), migratetest.DynamoDBEndpoint(t)
	ddb := migratetest.DynamoDBClient(t, endpoint)
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var db string
	if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`CREATE TABLE customers (id int8 PRIMARY KEY, name text NOT NULL)`,
		`CREATE TABLE orders (id int8 PRIMARY KEY, customer_id int8 NOT NULL, total numeric NOT NULL)`,
		`INSERT INTO customers SELECT i, 'customer ' || i FROM generate_series(1, 1500) i`,
		`INSERT INTO orders SELECT i, 1 + i % 1500, i * 1.25 FROM generate_series(1, 200) i`,
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` SET idle_in_transaction_session_timeout = '5s'`,
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` SET statement_timeout = '3s'`,
	} {
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	dir := t.TempDir()
	mappingFile := filepath.Join(dir, "idle.yaml")
	if err := os.WriteFile(mappingFile, []byte(idleMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, table string, args ...string) (engine.RunResult, string) {
		t.Helper()
		summary := filepath.Join(t.TempDir(), "summary.json")
		args = append([]string{"run", "--mapping", mappingFile, "--pg", pg, "--endpoint", endpoint, "--table", table,
			"--create-table", "--quiet", "--state", filepath.Join(t.TempDir(), "state.json"), "--summary-json", summary}, args...)
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		var res engine.RunResult
		data, err := os.ReadFile(summary)
		if err != nil || json.Unmarshal(data, &res) != nil {
			t.Fatalf("summary JSON: %v\n%s", err, data)
		}
		return res, out + errOut
	}

	clean := migratetest.TableName(t, "idle-clean")
	run(t, clean)
	want := scanCanonical(t, ddb, clean)
	if len(want) != 1700 {
		t.Fatalf("the clean run wrote %d items, want 1,700", len(want))
	}
	for _, readers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d readers", readers), func(t *testing.T) {
			table := migratetest.TableName(t, "idle")
			res, logs := run(t, table, "--max-wcu", "100", "--min-wcu", "25", "--window", "100", "--concurrency", "4", "--readers", fmt.Sprint(readers))
			t.Logf("run with %d readers: %.1f s, snapshot %+v", readers, res.Seconds, res.Snapshot)
			sameItems(t, "table written by the slow run", scanCanonical(t, ddb, table), want)
			if res.Seconds < 10 {
				t.Errorf("the run took %.1f s: too fast to have waited past the idle timeout", res.Seconds)
			}
			if res.Snapshot == nil || res.Snapshot.HeldSeconds < 5 {
				t.Errorf("summary snapshot = %+v, want it held more than the 5 s timeout", res.Snapshot)
			} else {
				got := map[string]string{}
				for _, s := range res.Snapshot.Overrides {
					got[s.Name] = s.Value + " " + s.Source
				}
				if got["idle_in_transaction_session_timeout"] != "5s database" || got["statement_timeout"] != "3s database" {
					t.Errorf("summary overrides = %v, want both timeouts, 5s and 3s from the database's settings", got)
				}
			}
			for _, want := range []string{"source timeout turned off for the snapshot's own transaction", "source snapshot held"} {
				if !strings.Contains(logs, want) {
					t.Errorf("the run's output does not mention %q:\n%s", want, logs)
				}
			}
		})
	}
	// verify and plan hold their snapshot under the same rules; plan says
	// how long a run and the plan itself hold it.
	if out, errOut, code := runCLI(t, "verify", "--mapping", mappingFile, "--pg", pg, "--endpoint", endpoint, "--table", clean); code != 0 {
		t.Errorf("verify exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code := runCLI(t, "plan", "--mapping", mappingFile, "--pg", pg, "--endpoint", endpoint, "--table", clean, "--format", "json")
	if code != 0 {
		t.Fatalf("plan exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var plan report.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, out)
	}
	sn := plan.Capacity.Snapshot
	if sn == nil || sn.PlanSeconds <= 0 || sn.RunSeconds != plan.Capacity.EstimatedSeconds || len(sn.Overrides) != 2 {
		t.Errorf("plan's capacity.snapshot = %+v, want the plan's and a run's hold and both overrides", sn)
	}
}
