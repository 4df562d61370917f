package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
	"github.com/pgdynamo/migrate/transform"
)

// resilienceScale is the bookstore scale of the resilience tests: about
// 8,000 items, enough for every fault kind to show up many times, and for
// a run paced by --max-wcu to last a few seconds.
const resilienceScale = 400

// killRunWCU paces the killed and interrupted runs so that there is time
// to stop them at several points: the bookstore at resilienceScale is
// about 14,000 write units, so a whole run takes about 14 s, and the state
// file (saved every second) is never more than about 10% behind. A small
// --window keeps the checkpoint close behind the writes (the writer's
// window and the channel hold the items read but not yet acknowledged).
var pacing = []string{"--max-wcu", "1000", "--window", "200", "--quiet"}

// fixture is a seeded bookstore, a DynamoDB endpoint, the migrate binary
// and the items of a clean, uninterrupted run to compare other runs with.
type fixture struct {
	pg, endpoint string
	ddb          *dynamodb.Client
	bin          string
	clean        []string // canonical JSON of every item of the clean run, sorted
	cleanTable   string   // the table of the clean run
	rows         int64    // source rows
}

// TestResilience migrates one seeded bookstore several times: cleanly, then
// through injected faults and a clock 10 minutes off, with kill -9 at
// random moments and resumes, and with Ctrl-C and a resume. Every way must
// produce the clean run's table exactly.
func TestResilience(t *testing.T) {
	f := newFixture(t)
	t.Run("faults", func(t *testing.T) { testFaults(t, f) })
	t.Run("clock skew", func(t *testing.T) { testClockSkew(t, f) })
	t.Run("kill -9 and resume", func(t *testing.T) { testKillResume(t, f) })
	t.Run("SIGINT and resume", func(t *testing.T) { testInterruptResume(t, f) })
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{
		pg:       migratetest.PostgresURL(t),
		endpoint: migratetest.DynamoDBEndpoint(t),
	}
	f.ddb = migratetest.DynamoDBClient(t, f.endpoint)
	if err := sqlschema.Up(ctx, f.pg); err != nil {
		t.Fatalf("schema up: %v", err)
	}
	conn, err := pgx.Connect(ctx, f.pg)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := seed.Load(ctx, conn, seed.Config{Scale: resilienceScale, Seed: 11})
	conn.Close(context.Background())
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	// Rows of the source tables read (addresses are embedded, not read
	// on their own).
	f.rows = counts.Customers + counts.Orders + counts.OrderItems + counts.Authors + counts.Books
	f.bin = buildBinary(t)

	table := migratetest.TableName(t, "clean")
	res := f.run(t, f.cmd(t.TempDir(), table, "--create-table", "--quiet"))
	if res.code != 0 {
		t.Fatalf("clean run exited %d\n%s", res.code, res.output())
	}
	f.clean, f.cleanTable = scanCanonical(t, f.ddb, table), table
	t.Logf("clean run: %d items in %v", len(f.clean), res.elapsed)
	if len(f.clean) < 5000 {
		t.Fatalf("the clean run wrote %d items: too few for these tests", len(f.clean))
	}
	return f
}

// buildBinary builds the migrate command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "migrate")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cmd returns the binary's command migrating the bookstore into table,
// with its state file in dir. The database URL is given through
// MIGRATE_PG_URL, as a careful user would, so that the printed resume
// command can be checked for it.
func (f *fixture) cmd(dir, table string, extra ...string) *exec.Cmd {
	args := append([]string{"run", "--mapping", bookstoreMapping, "--endpoint", f.endpoint, "--table", table,
		"--state", filepath.Join(dir, table+".state.json")}, extra...)
	cmd := exec.Command(f.bin, args...)
	cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+f.pg)
	return cmd
}

type result struct {
	code           int
	signaled       bool
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) output() string { return "stdout:\n" + r.stdout + "\nstderr:\n" + r.stderr }

// run runs cmd to its end.
func (f *fixture) run(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	return wait(cmd)
}

func start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
	return cmd.Start()
}

func wait(cmd *exec.Cmd) result {
	began := time.Now()
	err := cmd.Wait()
	r := result{stdout: cmd.Stdout.(*bytes.Buffer).String(), stderr: cmd.Stderr.(*bytes.Buffer).String(), elapsed: time.Since(began)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signaled = true
		}
	}
	return r
}

// scanCanonical returns every item of table as canonical JSON, sorted.
func scanCanonical(t *testing.T, ddb *dynamodb.Client, table string) []string {
	t.Helper()
	var out []string
	p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for _, it := range page.Items {
			data, err := transform.MarshalItem(it)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(data))
		}
	}
	slices.Sort(out)
	return out
}

// sameItems compares two sorted item lists and reports the first few
// differences.
func sameItems(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	gs, ws := map[string]bool{}, map[string]bool{}
	for _, s := range got {
		gs[s] = true
	}
	for _, s := range want {
		ws[s] = true
	}
	var missing, extra []string
	for _, s := range want {
		if !gs[s] && len(missing) < 3 {
			missing = append(missing, s)
		}
	}
	for _, s := range got {
		if !ws[s] && len(extra) < 3 {
			extra = append(extra, s)
		}
	}
	t.Errorf("%s: %d items, the clean run has %d\nmissing (first 3): %v\nunexpected (first 3): %v", what, len(got), len(want), missing, extra)
}

// loadState reads a state file; nil if there is none yet.
func loadState(t *testing.T, path string) *checkpoint.State {
	t.Helper()
	st, err := checkpoint.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("state file: %v", err)
	}
	return st
}

// noSecrets fails the test if text holds the database URL or its password.
func (f *fixture) noSecrets(t testing.TB, what, text string) {
	t.Helper()
	u, err := url.Parse(f.pg)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	for _, s := range []string{f.pg, "postgres://", u.Host, u.User.Username() + ":" + pw + "@"} {
		if strings.Contains(text, s) {
			t.Errorf("%s contains %q:\n%s", what, s, text)
		}
	}
}

// testKillResume kills the real binary with SIGKILL at five moments (one
// before the first checkpoint, one near the end, three at random), resumes
// it each time, and compares the final table with the clean run's.
func testKillResume(t *testing.T, f *fixture) {
	table := migratetest.TableName(t, "killed")
	dir := t.TempDir()
	statePath := filepath.Join(dir, table+".state.json")
	rng := rand.New(rand.NewPCG(2024, 5))
	const kills = 5
	killed, early, late := 0, false, false
	for attempt := 0; ; attempt++ {
		if attempt > kills+5 {
			t.Fatalf("no complete run after %d attempts", attempt)
		}
		args := slices.Clone(pacing)
		if attempt == 0 {
			args = append(args, "--create-table")
		} else if loadState(t, statePath) != nil {
			args = append(args, "--resume")
		}
		cmd := f.cmd(dir, table, args...)
		began := time.Now()
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		if killed < kills {
			switch killed {
			case 0: // before the first checkpoint: at most a few hundred ms in
				time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
			case kills - 1: // late: when 60% of the rows are done (the
				// last tables' rows are small and go fast: the checkpoint
				// can leap from 80% to the end in one save)
				waitForRows(t, statePath, f.rows*6/10, cmd)
			default:
				time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGKILL)
		}
		res := wait(cmd)
		if !res.signaled {
			if res.code != 0 {
				t.Fatalf("attempt %d exited %d\n%s", attempt, res.code, res.output())
			}
			if killed < kills {
				t.Fatalf("attempt %d completed before it could be killed (%v); lower --max-wcu", attempt, res.elapsed)
			}
			break
		}
		killed++
		st := loadState(t, statePath)
		done := int64(0)
		if st != nil {
			done = st.Rows()
			if st.Complete {
				t.Fatalf("killed run %d left a state file marked complete", killed)
			}
		}
		early = early || done == 0
		late = late || done >= f.rows*6/10
		t.Logf("kill %d after %v: %d of %d rows checkpointed", killed, time.Since(began).Round(time.Millisecond), done, f.rows)
	}
	if !early || !late {
		t.Errorf("kills before the first checkpoint: %v, near the end: %v; want both", early, late)
	}
	st := loadState(t, statePath)
	if st == nil || !st.Complete || st.Rows() != f.rows {
		t.Errorf("final state: %+v; want complete with %d rows", st, f.rows)
	}
	data, _ := os.ReadFile(statePath)
	f.noSecrets(t, "the state file", string(data))
	sameItems(t, "table after kills and resumes", scanCanonical(t, f.ddb, table), f.clean)
}

// waitForRows waits until the state file records at least n rows done, or
// the process ends.
func waitForRows(t *testing.T, statePath string, n int64, cmd *exec.Cmd) {
	t.Helper()
	waitUntil(t, cmd, fmt.Sprintf("the state file to reach %d rows", n), func() bool {
		st := loadState(t, statePath)
		return st != nil && st.Rows() >= n
	})
}

// waitUntil waits until done says so or cmd's process ends (the caller's
// wait then tells how it ended), and fails the test after 60 s.
func waitUntil(t *testing.T, cmd *exec.Cmd, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !done() && !exited(cmd) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 60 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testInterruptResume sends one SIGINT mid-run: the binary finishes what
// it sent, saves the checkpoint, prints the resume command and exits 130;
// the resume completes the table.
func testInterruptResume(t *testing.T, f *fixture) {
	table := migratetest.TableName(t, "interrupted")
	dir := t.TempDir()
	statePath := filepath.Join(dir, table+".state.json")
	cmd := f.cmd(dir, table, append([]string{"--create-table"}, pacing...)...)
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitForRows(t, statePath, f.rows/3, cmd)
	cmd.Process.Signal(syscall.SIGINT)
	res := wait(cmd)
	if res.code != exitInterrupted {
		t.Fatalf("after SIGINT: exit %d, want %d\n%s", res.code, exitInterrupted, res.output())
	}
	wantCmd := fmt.Sprintf(`migrate run --mapping %s --table %s --endpoint %s --pg "$MIGRATE_PG_URL" --max-wcu 1000 --quiet --window 200 --state %s --resume`,
		bookstoreMapping, table, f.endpoint, statePath)
	if !strings.Contains(res.stderr, "Resume with:\n  "+wantCmd) {
		t.Errorf("stderr lacks the resume command %s\n%s", wantCmd, res.output())
	}
	f.noSecrets(t, "the output", res.output())
	st := loadState(t, statePath)
	if st == nil || st.Complete || st.Rows() < f.rows/3 || st.Rows() >= f.rows {
		t.Fatalf("state after SIGINT: %+v; want incomplete with at least %d of %d rows", st, f.rows/3, f.rows)
	}
	positions := 0
	for _, s := range st.Sources {
		if len(s.After) > 0 {
			positions++
		}
	}
	if positions == 0 {
		t.Errorf("the state file records no position: %+v", st.Sources)
	}
	data, _ := os.ReadFile(statePath)
	f.noSecrets(t, "the state file", string(data))

	// Without --resume or --fresh, run refuses to touch the unfinished run.
	res = f.run(t, f.cmd(dir, table))
	if res.code != exitUsage || !strings.Contains(res.stderr, "pass --resume to continue it, or --fresh to start over") {
		t.Errorf("run over an unfinished state: exit %d\n%s", res.code, res.output())
	}

	summaryPath := filepath.Join(t.TempDir(), "summary.json")
	res = f.run(t, f.cmd(dir, table, "--resume", "--summary-json", summaryPath, "--quiet"))
	if res.code != 0 {
		t.Fatalf("resume exited %d\n%s", res.code, res.output())
	}
	if !strings.Contains(res.stdout, "as computed by the run being resumed") {
		t.Errorf("the resumed run did not reuse the shard count:\n%s", res.stdout)
	}
	var sum engine.RunResult
	if data, err := os.ReadFile(summaryPath); err != nil || json.Unmarshal(data, &sum) != nil {
		t.Fatalf("summary JSON: %v\n%s", err, data)
	}
	if !sum.Resumed || sum.Status != "complete" || sum.AllRuns.Rows != f.rows || sum.Total.ItemsWritten == 0 || sum.Total.ItemsWritten >= int64(len(f.clean)) {
		t.Errorf("resumed summary: %+v", sum)
	}
	sameItems(t, "table after SIGINT and resume", scanCanonical(t, f.ddb, table), f.clean)
}
