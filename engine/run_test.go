package engine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

// These tests drive Run through its API with fake targets: no process, no
// terminal, no DynamoDB. The source is a real PostgreSQL.

const shopSchema = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, balance numeric);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, total numeric NOT NULL);
INSERT INTO customers SELECT i, 'customer ' || i, i * 1.5 FROM generate_series(1, 50) i;
INSERT INTO orders SELECT i, 1 + i % 50, i * 10.25 FROM generate_series(1, 200) i;
`

const shopMapping = `table: Shop
keys: { partition: PK, sort: SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{id}", sk: "PROFILE" }
    attributes: { name: name, balance: balance }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{id:8}" }
    attributes: { total: total }
`

// shop returns a source database with the shop schema and its mapping.
func shop(t *testing.T, extraSQL string) (string, *mapping.Mapping) {
	t.Helper()
	pg := migratetest.PostgresURL(t)
	migratetest.Exec(t, pg, shopSchema+extraSQL)
	m, err := mapping.Parse("shop.yaml", []byte(shopMapping))
	if err != nil {
		t.Fatal(err)
	}
	return pg, m
}

// fakeTarget stores items in memory and acknowledges them, or refuses some
// (Fail), or fails the whole Write after a number of items.
type fakeTarget struct {
	mu      sync.Mutex
	items   map[string]map[string]types.AttributeValue // by PK|SK
	opened  int
	openErr error
	refuse  func(contract.Item) bool
	// failAfter > 0 stops Write with an error after that many items.
	failAfter int
	// cancelAfter > 0 calls cancel after that many items (an interrupt).
	cancelAfter int
	cancel      func()
	seen        int
}

func newFakeTarget() *fakeTarget {
	return &fakeTarget{items: map[string]map[string]types.AttributeValue{}}
}

func (f *fakeTarget) Open(context.Context) (contract.TargetInfo, error) {
	f.opened++
	return contract.TargetInfo{Kind: "fake", Name: "memory"}, f.openErr
}

var errTargetDown = errors.New("fake target: connection lost")

func (f *fakeTarget) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	var st contract.Stats
	for it := range items {
		if ctx.Err() != nil { // a Target stops when ctx ends
			return st, ctx.Err()
		}
		f.mu.Lock()
		f.seen++
		seen := f.seen
		f.mu.Unlock()
		if f.failAfter > 0 && seen > f.failAfter {
			return st, errTargetDown
		}
		if f.cancelAfter > 0 && seen == f.cancelAfter {
			f.cancel()
		}
		if f.refuse != nil && f.refuse(it) {
			ie := &contract.ItemError{Origin: it.Origin, Reason: "refused by the fake target", Err: load.ErrInvalidItem}
			it.Fail(ie)
			continue
		}
		f.mu.Lock()
		f.items[keyOf(it.Attrs)] = it.Attrs
		f.mu.Unlock()
		st.Total.Written++
		it.Ack()
	}
	return st, nil
}

func keyOf(attrs map[string]types.AttributeValue) string {
	return attrs["PK"].(*types.AttributeValueMemberS).Value + "|" + attrs["SK"].(*types.AttributeValueMemberS).Value
}

func (f *fakeTarget) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.items {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu          sync.Mutex
	started     []contract.RunStart
	progress    []contract.Progress
	interrupted int
}

func (r *recorder) Started(s contract.RunStart) {
	r.mu.Lock()
	r.started = append(r.started, s)
	r.mu.Unlock()
}
func (r *recorder) Progress(p contract.Progress) {
	r.mu.Lock()
	r.progress = append(r.progress, p)
	r.mu.Unlock()
}
func (r *recorder) Interrupted() { r.mu.Lock(); r.interrupted++; r.mu.Unlock() }

func allShopKeys() []string {
	var out []string
	for i := 1; i <= 50; i++ {
		out = append(out, fmt.Sprintf("CUSTOMER#%d|PROFILE", i))
	}
	for i := 1; i <= 200; i++ {
		out = append(out, fmt.Sprintf("CUSTOMER#%d|ORDER#%08d", 1+i%50, i))
	}
	slices.Sort(out)
	return out
}

func TestRunIntoFakeTarget(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	target, rec := newFakeTarget(), &recorder{}
	state := filepath.Join(t.TempDir(), "state.json")
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: target, StateFile: state, Observer: rec})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Status != engine.StatusComplete || res.Total.RowsRead != 250 || res.Total.ItemsWritten != 250 || res.AllRuns.Items != 250 {
		t.Errorf("result: status %s, rows %d, items %d, all runs %+v", res.Status, res.Total.RowsRead, res.Total.ItemsWritten, res.AllRuns)
	}
	if got, want := target.keys(), allShopKeys(); !slices.Equal(got, want) {
		t.Errorf("target holds %d keys, want %d", len(got), len(want))
	}
	if got := target.items["CUSTOMER#7|PROFILE"]["balance"]; got.(*types.AttributeValueMemberN).Value != "10.5" {
		t.Errorf("customer 7 balance = %v, want the exact decimal 10.5", got)
	}
	if target.opened != 1 || res.Target.Kind != "fake" {
		t.Errorf("Open called %d times; result target %+v", target.opened, res.Target)
	}
	// The observer: started once with both entities, progress ending Done
	// with the final counts.
	if len(rec.started) != 1 || len(rec.started[0].Entities) != 2 {
		t.Fatalf("Started: %+v", rec.started)
	}
	last := rec.progress[len(rec.progress)-1]
	if !last.Done || last.Entities[0].ItemsWritten+last.Entities[1].ItemsWritten != 250 {
		t.Errorf("last progress: %+v", last)
	}
	if rec.interrupted != 0 {
		t.Errorf("Interrupted called %d times", rec.interrupted)
	}
	// A second run without Resume or Fresh starts over: the state file
	// records a completed run.
	if res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(), StateFile: state}); err != nil || res.Resumed {
		t.Errorf("second run: resumed %v, %v", res != nil && res.Resumed, err)
	}
}

func TestRunRejectsWhatTheTargetRefuses(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "UPDATE customers SET balance = 'NaN' WHERE id = 3;")
	target := newFakeTarget()
	target.refuse = func(it contract.Item) bool { return it.Origin.SourceKey == "id=10" && it.Origin.Entity == "Order" }
	dir := t.TempDir()
	rejects := filepath.Join(dir, "rejects.jsonl")
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: target,
		StateFile: filepath.Join(dir, "state.json"), OnError: engine.OnErrorReject, RejectFile: rejects, MaxRejects: -1})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Total.Rejects != 2 || res.Total.ItemsWritten != 248 || res.AllRuns.Rejects != 2 {
		t.Errorf("rejects %d, items %d, all runs %+v; want 2 and 248", res.Total.Rejects, res.Total.ItemsWritten, res.AllRuns)
	}
	lines := readLines(t, rejects)
	if len(lines) != 2 || !strings.Contains(lines[0]+lines[1], `"sourceKey":"id=3"`) || !strings.Contains(lines[0]+lines[1], "refused by the fake target") {
		t.Errorf("reject file:\n%s", strings.Join(lines, "\n"))
	}
	// With the default MaxRejects (0) the same run ends ErrTooManyRejects.
	_, err = engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(),
		StateFile: filepath.Join(dir, "state2.json"), OnError: engine.OnErrorReject, RejectFile: filepath.Join(dir, "r2.jsonl")})
	if !errors.Is(err, engine.ErrTooManyRejects) {
		t.Errorf("MaxRejects 0: %v, want ErrTooManyRejects", err)
	}
}

func TestRunFailsThenResumes(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	state := filepath.Join(t.TempDir(), "state.json")
	broken := newFakeTarget()
	broken.failAfter = 120
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: broken, StateFile: state})
	if !errors.Is(err, errTargetDown) || res == nil || res.Status != engine.StatusFailed {
		t.Fatalf("Run into a failing target: %v (result %+v)", err, res)
	}
	// Without a choice, the unfinished state file refuses a new run.
	if _, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(), StateFile: state}); !errors.Is(err, engine.ErrState) {
		t.Fatalf("run over an unfinished state file: %v, want ErrState", err)
	}
	// The source changes in between: a customer is added to a table the
	// first run finished. The resumed run does not read it again, and says
	// so.
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "INSERT INTO customers VALUES (51, 'late customer', 0)"); err != nil {
		t.Fatal(err)
	}
	resumed := newFakeTarget()
	res, err = engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: resumed, StateFile: state, Resume: true})
	if err != nil || !res.Resumed || res.Status != engine.StatusComplete {
		t.Fatalf("resume: %v (result %+v)", err, res)
	}
	wantChange := []engine.SourceChange{{Source: "public.customers", RowsThen: 50, RowsNow: 51, LastKeyThen: "50", LastKeyNow: "51"}}
	if !slices.Equal(res.SourceChanges, wantChange) {
		t.Errorf("source changes %+v, want %+v", res.SourceChanges, wantChange)
	}
	// Everything arrived, over both runs; the resumed run skipped what the
	// first one had acknowledged.
	got := append(broken.keys(), resumed.keys()...)
	slices.Sort(got)
	got = slices.Compact(got)
	if want := allShopKeys(); !slices.Equal(got, want) {
		t.Errorf("both runs wrote %d distinct keys, want %d", len(got), len(want))
	}
	if n := len(resumed.keys()); n >= 250 || res.AllRuns.Items != 250 {
		t.Errorf("resumed run wrote %d items (all runs: %+v); want fewer than 250, and 250 over both", n, res.AllRuns)
	}
	// Nothing left to resume.
	if _, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(), StateFile: state, Resume: true}); !errors.Is(err, engine.ErrNothingToResume) {
		t.Errorf("resume of a complete run: %v, want ErrNothingToResume", err)
	}
}

func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	state := filepath.Join(t.TempDir(), "state.json")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	target, rec := newFakeTarget(), &recorder{}
	target.cancelAfter, target.cancel = 60, cancel
	res, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pg, Target: target, StateFile: state, Observer: rec,
		ResumeCommand: "migrate run --resume"})
	if !errors.Is(err, engine.ErrInterrupted) || res.Status != engine.StatusInterrupted {
		t.Fatalf("interrupted run: %v (status %s)", err, res.Status)
	}
	if !strings.Contains(err.Error(), "Resume with:\n  migrate run --resume") {
		t.Errorf("error does not show the resume command: %v", err)
	}
	if rec.interrupted != 1 {
		t.Errorf("Interrupted called %d times, want 1", rec.interrupted)
	}
	// The target stopped at the signal, and what it acknowledged is counted.
	if n := int64(len(target.keys())); n != res.Total.ItemsWritten || n < 60 || n >= 250 {
		t.Errorf("target holds %d items, result says %d written", n, res.Total.ItemsWritten)
	}
	resumed := newFakeTarget()
	if _, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: resumed, StateFile: state, Resume: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	got := append(target.keys(), resumed.keys()...)
	slices.Sort(got)
	if got = slices.Compact(got); !slices.Equal(got, allShopKeys()) {
		t.Errorf("interrupted + resumed runs wrote %d distinct keys, want 250", len(got))
	}
}

func TestRunRefusesBeforeReading(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	dir := t.TempDir()
	target := newFakeTarget()
	target.openErr = fmt.Errorf("%w: no such table", engine.ErrTable)
	state := filepath.Join(dir, "state.json")
	_, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: target, StateFile: state})
	if !errors.Is(err, engine.ErrTable) {
		t.Fatalf("Run: %v, want ErrTable", err)
	}
	if _, statErr := os.Stat(state); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a refused run left a state file: %v", statErr)
	}
	if target.seen != 0 {
		t.Errorf("the target received %d items", target.seen)
	}
	// Config problems come all at once, each an ErrConfig.
	_, err = engine.Run(t.Context(), engine.RunConfig{OnError: "maybe", Resume: true, Fresh: true, MaxRejects: -5})
	if !errors.Is(err, engine.ErrConfig) || strings.Count(err.Error(), "\n") < 4 {
		t.Errorf("bad config: %v", err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// TestRunFindsDuplicateKeysAfterWriting: keys the mapping cannot prove
// unique ({id}{customer_id} has no separator between its placeholders)
// are checked on disk once written, and the duplicates are named, both
// rows of each.
func TestRunFindsDuplicateKeysAfterWriting(t *testing.T) {
	t.Parallel()
	// 301 and 23 make O#30123, and so do 3012 and 3.
	pg, _ := shop(t, "INSERT INTO orders VALUES (301, 23, 1), (3012, 3, 2);")
	m, err := mapping.Parse("shop.yaml", []byte(strings.Replace(shopMapping,
		`key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{id:8}" }`, `key: { pk: "O#{id}{customer_id}", sk: "X" }`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	proof, _, err := engine.ValidateKeys(t.Context(), m, pg)
	if err != nil {
		t.Fatal(err)
	}
	if proof.Proven() || proof.Entities[0].Entity != "Customer" || !proof.Entities[0].Unique || proof.Entities[1].Unique {
		t.Fatalf("proof %+v: want Customer proven unique, Order not", proof)
	}
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(),
		StateFile: filepath.Join(t.TempDir(), "state.json"), TempDir: t.TempDir()})
	if !errors.Is(err, load.ErrDuplicateKey) || res == nil || res.Status != engine.StatusFailed {
		t.Fatalf("Run: %v (result %+v), want a duplicate-key failure", err, res)
	}
	for _, want := range []string{`PK="O#30123" SK="X"`, "public.orders row id=301 (entity Order)", "public.orders row id=3012 (entity Order)", "1 item of this run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

// holdingTarget takes every item before acknowledging any, and in between
// asks PostgreSQL whether a transaction of the run is still open.
type holdingTarget struct {
	fakeTarget
	pg             string
	openTxnsBefore int
}

func (h *holdingTarget) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	var held []contract.Item
	for it := range items { // closed once the last row is read
		held = append(held, it)
	}
	conn, err := pgx.Connect(ctx, h.pg)
	if err != nil {
		return contract.Stats{}, err
	}
	defer conn.Close(context.Background())
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`).Scan(&h.openTxnsBefore)
	if err != nil {
		return contract.Stats{}, err
	}
	for _, it := range held {
		it.Ack()
	}
	return contract.Stats{}, nil
}

// The source snapshot is released as soon as the last row is read, not
// when the last item is written: a slow target must not hold back VACUUM.
func TestRunReleasesTheSnapshotOnceRead(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	h := &holdingTarget{fakeTarget: *newFakeTarget(), pg: pg}
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: h, StateFile: filepath.Join(t.TempDir(), "s.json")})
	if err != nil || res.AllRuns.Items != 250 {
		t.Fatalf("Run: %v (%+v)", err, res)
	}
	if h.openTxnsBefore != 0 {
		t.Errorf("%d transactions of the run were still open while its last items were written", h.openTxnsBefore)
	}
}
