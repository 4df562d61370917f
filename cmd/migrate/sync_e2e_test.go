package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/internal/workload"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// workloadFor is how long the workload of each sync test runs.
const workloadFor = time.Minute

// TestSyncE2E runs the real binary's sync on the bookstore while a
// workload changes it in every way the mapping cares about: cleanly,
// through 30% injected DynamoDB faults, and killed with SIGKILL at random
// moments and restarted. After the workload stops, sync --until-caught-up
// must finish and verify must find the table identical to the source.
// The three run at once, each on its own database and table.
func TestSyncE2E(t *testing.T) {
	bin := buildBinary(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	failures := &failureLog{}
	t.Cleanup(func() { failures.repeat(t) })
	t.Run("workload", func(t *testing.T) {
		t.Parallel()
		testSyncWorkload(failures.record(t), bin, endpoint, nil)
	})
	t.Run("faults", func(t *testing.T) {
		t.Parallel()
		proxy, err := faultproxy.Start(endpoint, faultproxy.Config{Seed: 14, Rate: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		testSyncWorkload(failures.record(t), bin, endpoint, proxy)
	})
	t.Run("kill -9", func(t *testing.T) {
		t.Parallel()
		testSyncKills(failures.record(t), bin, endpoint)
	})
	t.Run("shard counts", func(t *testing.T) {
		t.Parallel()
		testSyncShardCounts(failures.record(t), bin, endpoint)
	})
}

// failureLog keeps the failure messages of TestSyncE2E's subtests, and the
// parent repeats them once all are done, next to its verdict: three
// subtests interleave a minute of lines each, and a message printed in
// the middle is easily lost (a CI log shows its end).
type failureLog struct {
	mu    sync.Mutex
	lines []string
}

// record returns t, whose failures are also kept in l.
func (l *failureLog) record(t *testing.T) testing.TB { return recording{TB: t, log: l} }

func (l *failureLog) repeat(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, msg := range l.lines {
		// The head of a long message (a verify report) says enough.
		if lines := strings.Split(msg, "\n"); len(lines) > 12 {
			msg = strings.Join(lines[:12], "\n") + "\n[...]"
		}
		t.Log("subtest failure, repeated: " + msg)
	}
}

type recording struct {
	testing.TB
	log *failureLog
}

func (r recording) keep(msg string) {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	r.log.lines = append(r.log.lines, r.Name()+": "+msg)
}

func (r recording) Error(args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprint(args...))
	r.TB.Error(args...)
}

func (r recording) Errorf(format string, args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprintf(format, args...))
	r.TB.Errorf(format, args...)
}

func (r recording) Fatal(args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprint(args...))
	r.TB.Fatal(args...)
}

func (r recording) Fatalf(format string, args ...any) {
	r.TB.Helper()
	r.keep(fmt.Sprintf(format, args...))
	r.TB.Fatalf(format, args...)
}

// syncSource is a seeded bookstore with the replica identities sync
// needs, and the table it is synced into.
type syncSource struct {
	pg, endpoint, table, dir string
	bin                      string
}

func newSyncSource(t testing.TB, bin, endpoint string, scale int) *syncSource {
	t.Helper()
	ctx := t.Context()
	s := &syncSource{pg: migratetest.PostgresURL(t), endpoint: endpoint, table: migratetest.TableName(t, "sync"), dir: t.TempDir(), bin: bin}
	if err := sqlschema.Up(ctx, s.pg); err != nil {
		t.Fatalf("schema up: %v", err)
	}
	conn, err := pgx.Connect(ctx, s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: scale, Seed: 3}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	t.Cleanup(func() {
		// The slot must go before the database can.
		name := replicate.DefaultName(s.table)
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: s.pg, Slot: name, Publication: name}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	return s
}

func (s *syncSource) exec(t testing.TB, sql string) {
	t.Helper()
	migratetest.Exec(t, s.pg, sql)
}

// cmd is the binary's sync command into the table through endpoint, with
// the database URL in MIGRATE_PG_URL.
func (s *syncSource) cmd(endpoint string, extra ...string) *exec.Cmd {
	args := append([]string{"sync", "--mapping", bookstoreMapping, "--endpoint", endpoint, "--table", s.table,
		"--state", filepath.Join(s.dir, "state.json")}, extra...)
	cmd := exec.Command(s.bin, args...)
	cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+s.pg)
	return cmd
}

// runWorkload runs the workload for d in the background; wait returns
// its stats.
func runWorkload(t testing.TB, pg string, d time.Duration, seedValue uint64) (wait func() workload.Stats) {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	done := make(chan workload.Stats, 1)
	go func() {
		defer cancel()
		st, err := workload.Run(ctx, pg, workload.Config{Workers: 3, Rate: 25, Seed: seedValue})
		if err != nil {
			t.Errorf("workload: %v", err)
		}
		done <- st
	}()
	return func() workload.Stats {
		st := <-done
		t.Logf("workload: %d transactions committed, %d skipped: %v", st.Committed, st.Skipped, st.ByOp)
		for _, op := range []string{"insert order", "change address", "move address", "change order line", "re-key order line",
			"delete order", "change order date", "change order status", "rename author", "change email"} {
			if st.ByOp[op] == 0 {
				t.Errorf("the workload never committed %q", op)
			}
		}
		return st
	}
}

// catchUpAndVerify runs sync --until-caught-up, then verify with the
// sync's state file (its shard counts), which must say IDENTICAL.
func (s *syncSource) catchUpAndVerify(t testing.TB, endpoint string) {
	t.Helper()
	began := time.Now()
	res := runCmd(t, s.cmd(endpoint, "--until-caught-up", "--quiet"))
	if res.code != 0 || !strings.Contains(res.stdout, "sync: caught up with the source at") {
		t.Fatalf("sync --until-caught-up exited %d\n%s", res.code, res.output())
	}
	t.Logf("sync --until-caught-up took %v:\n%s", time.Since(began).Round(time.Millisecond), res.stdout)
	out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", s.endpoint, "--table", s.table,
		"--state", filepath.Join(s.dir, "state.json"))
	if code != 0 || !strings.Contains(out, "IDENTICAL") {
		t.Fatalf("verify exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func runCmd(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	return wait(cmd)
}

// testSyncWorkload streams a minute of workload into the table, through
// a fault-injecting proxy when one is given.
func testSyncWorkload(t testing.TB, bin, endpoint string, proxy *faultproxy.Proxy) {
	s := newSyncSource(t, bin, endpoint, 150)
	via := endpoint
	// Rounds of 500 changes: the churn drains over many rounds.
	extra := []string{"--create-table", "--status-every", "2s", "--max-batch", "500"}
	if proxy != nil {
		via = proxy.URL()
		// As in the run through faults: the writer's rate adaptation is
		// the loader's tests' business.
		extra = append(extra, "--min-wcu", "2000")
	}

	if proxy == nil {
		// Without the replica identities deletes and key changes need,
		// validate says what to run, and sync creates nothing.
		out, _, code := runCLI(t, "validate", "--mapping", bookstoreMapping, "--pg", s.pg, "--for-sync")
		if code != exitUsage || !strings.Contains(out, `ALTER TABLE "public"."orders" REPLICA IDENTITY FULL;`) ||
			!strings.Contains(out, `ALTER TABLE "public"."addresses" REPLICA IDENTITY FULL;`) {
			t.Errorf("validate --for-sync without replica identities: exit %d\n%s", code, out)
		}
		res := runCmd(t, s.cmd(via, extra...))
		if res.code != exitUsage || !strings.Contains(res.stderr, "REPLICA IDENTITY FULL;") {
			t.Errorf("sync without replica identities: exit %d\n%s", res.code, res.output())
		}
	}
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	if proxy == nil {
		out, _, code := runCLI(t, "validate", "--mapping", bookstoreMapping, "--pg", s.pg, "--for-sync")
		if code != 0 || !strings.Contains(out, "ready for sync") {
			t.Errorf("validate --for-sync: exit %d\n%s", code, out)
		}
	}

	summary := filepath.Join(s.dir, "sync.json")
	syncCmd := s.cmd(via, append(extra, "--summary-json", summary)...)
	if err := start(syncCmd); err != nil {
		t.Fatal(err)
	}
	waitWorkload := runWorkload(t, s.pg, workloadFor, 1)
	waitWorkload()
	if syncCmd.ProcessState != nil {
		t.Fatalf("sync ended during the workload")
	}
	syncCmd.Process.Signal(syscall.SIGINT)
	res := wait(syncCmd)
	if res.code != exitInterrupted {
		t.Fatalf("sync after SIGINT: exit %d, want %d\n%s", res.code, exitInterrupted, res.output())
	}
	name := replicate.DefaultName(s.table)
	for _, want := range []string{"created replication slot " + name, "replication slot " + name + " remains", "migrate sync --drop", "sync: streaming"} {
		if !strings.Contains(res.stderr+res.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, res.output())
		}
	}
	(&fixture{pg: s.pg}).noSecrets(t, "sync's output", res.output())
	var doc render.SyncSummaryDoc
	if data, err := os.ReadFile(summary); err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("summary: %v\n%s", err, data)
	}
	t.Logf("sync during the workload: %+v", doc)
	if doc.Load == nil || doc.Changes == 0 || doc.ItemsPut == 0 || doc.ItemsDel == 0 || doc.FanoutMax < 10 || doc.FanoutMaxBy == "" {
		t.Errorf("summary of the sync that ran during the workload: %+v", doc)
	}

	s.catchUpAndVerify(t, via)
	if proxy != nil {
		st := proxy.Stats()
		t.Logf("proxy: %+v", st)
		for _, kind := range faultproxy.AllFaults {
			if st.Faults[kind] == 0 {
				t.Errorf("the proxy injected no %s fault", kind)
			}
		}
	}
	res = runCmd(t, s.cmd(via, "--drop"))
	if res.code != 0 || !strings.Contains(res.stdout, "sync: dropped replication slot "+name) || !strings.Contains(res.stdout, "sync: dropped publication "+name) {
		t.Errorf("sync --drop: exit %d\n%s", res.code, res.output())
	}
}

// testSyncKills kills sync with SIGKILL at random moments while the
// workload runs (once during the initial load, the rest while streaming)
// and restarts it each time.
func testSyncKills(t testing.TB, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 300)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	statePath := filepath.Join(s.dir, "state.json")
	rng := rand.New(rand.NewPCG(14, 9))
	waitWorkload := runWorkload(t, s.pg, workloadFor, 2)
	deadline := time.Now().Add(workloadFor)
	kills, duringLoad, streaming := 0, 0, 0
	for attempt := 0; time.Now().Before(deadline) || kills < 5; attempt++ {
		// The same command every time, as an operator restarts it: a kill
		// before the table was created (creating the slot waits for the
		// workload's open transactions) leaves it to the next attempt.
		args := []string{"--quiet", "--create-table"}
		if attempt == 0 {
			// Paced so that the initial load (about 7,000 items, 14,000
			// write units) takes several seconds and can be killed.
			args = append(args, "--max-wcu", "2000")
		}
		cmd := s.cmd(endpoint, args...)
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		pause := time.Duration(1500+rng.IntN(1000)) * time.Millisecond
		if attempt > 0 {
			// From the second attempt on, kill while streaming: once the
			// resumed load is complete, at a random moment.
			pause = time.Duration(1000+rng.IntN(6000)) * time.Millisecond
			waitLoaded(t, statePath, cmd)
		}
		time.Sleep(pause)
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGKILL)
		}
		res := wait(cmd)
		if !res.signaled {
			t.Fatalf("attempt %d ended by itself: exit %d\n%s", attempt, res.code, res.output())
		}
		kills++
		st, err := checkpoint.Load(statePath)
		loaded := err == nil && st.Complete
		if loaded {
			streaming++
		} else {
			duringLoad++
		}
		t.Logf("kill %d, %v after start or load (initial load complete: %v)", kills, pause, loaded)
	}
	waitWorkload()
	if kills < 5 || duringLoad == 0 || streaming < 3 {
		t.Errorf("%d kills, %d during the initial load, %d while streaming; want at least 5, 1 and 3", kills, duringLoad, streaming)
	}
	s.catchUpAndVerify(t, endpoint)
}

// waitLoaded waits until the state file records a complete initial load;
// if the process ends first, the test fails with its output.
func waitLoaded(t testing.TB, statePath string, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if st, err := checkpoint.Load(statePath); err == nil && st.Complete {
			return
		}
		if exited(cmd) {
			res := wait(cmd)
			t.Fatalf("sync ended before its initial load completed: exit %d\n%s", res.code, res.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	res := wait(cmd)
	t.Fatalf("the initial load did not complete within 2 minutes\n%s", res.output())
}

// exited reports whether a started process has ended (a zombie no one
// waited for yet).
func exited(cmd *exec.Cmd) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// testSyncShardCounts grows every order item by about 50 bytes through a
// copied attribute, which changes the "count: auto" shard count the source
// gives now: sync keeps writing with its initial load's count, and verify
// must take that count from the state file to find the table identical.
func testSyncShardCounts(t testing.TB, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 150)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	if res := runCmd(t, s.cmd(endpoint, "--create-table", "--until-caught-up", "--quiet")); res.code != 0 {
		t.Fatalf("initial sync: exit %d\n%s", res.code, res.output())
	}
	st, err := checkpoint.Load(filepath.Join(s.dir, "state.json"))
	if err != nil || len(st.Shards) != 1 {
		t.Fatalf("state file: %v, shards %+v", err, st)
	}
	s.exec(t, "UPDATE addresses SET city = city || ', ' || repeat('x', 50)")
	s.catchUpAndVerify(t, endpoint)

	// Without the state file, verify computes another count and says why
	// the items may differ.
	out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table)
	if code != exitDiffers || !strings.Contains(out, "GSI2PK") || !strings.Contains(errOut, "give that run's state file with --state") {
		t.Errorf("verify without the state file: exit %d, want %d with GSI2PK differences and a hint\nstdout:\n%s\nstderr:\n%s", code, exitDiffers, out, errOut)
	}
	want := fmt.Sprintf("verify: shards for Order GSI2: %d (count: auto, from %s)", st.Shards[0].Count, filepath.Join(s.dir, "state.json"))
	if _, errOut, _ := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table, "--state", filepath.Join(s.dir, "state.json")); !strings.Contains(errOut, want) {
		t.Errorf("verify --state: stderr lacks %q:\n%s", want, errOut)
	}
	// prove asks the shards the items were written to.
	if out, errOut, code := runCLI(t, "prove", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table,
		"--state", filepath.Join(s.dir, "state.json")); code != 0 || !strings.Contains(errOut, strings.Replace(want, "verify:", "prove:", 1)) {
		t.Errorf("prove --state: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A state file of another table is refused.
	other := filepath.Join(s.dir, "other.json")
	st.Table = "another-table"
	if err := checkpoint.Save(other, st); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table, "--state", other); code != exitUsage || !strings.Contains(errOut, "is for table another-table") {
		t.Errorf("verify with another table's state file: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
}
