package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestSafety checks the ways a run could once end wrong with exit 0, each
// against the real binary, Postgres and DynamoDB Local: a resume into a
// table it did not write, two runs on one state file, a table that cannot
// serve the mapping, prune of items another application wrote, and a
// Ctrl-C after the whole source was read.
func TestSafety(t *testing.T) {
	f := newFixture(t)
	t.Run("resume into another table", func(t *testing.T) { testResumeOtherTable(t, f) })
	t.Run("one run per state file", func(t *testing.T) { testStateFileLock(t, f) })
	t.Run("table that cannot serve the mapping", func(t *testing.T) { testTableMismatch(t, f) })
	t.Run("prune leaves foreign items", func(t *testing.T) { testPruneForeign(t, f) })
	t.Run("Ctrl-C with the source read", func(t *testing.T) { testPromptInterrupt(t, f) })
}

// killAtRows starts cmd, kills it (-9) once the state file records at
// least n rows, and returns the state file's row count then.
func killAtRows(t *testing.T, cmd *exec.Cmd, statePath string, n int64) int64 {
	t.Helper()
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitForRows(t, statePath, n, cmd)
	cmd.Process.Signal(syscall.SIGKILL)
	if res := wait(cmd); !res.signaled {
		t.Fatalf("the run ended (exit %d) before it could be killed; lower --max-wcu\n%s", res.code, res.output())
	}
	st := loadState(t, statePath)
	if st == nil || st.Complete || st.Rows() == 0 {
		t.Fatalf("state after kill -9: %+v", st)
	}
	return st.Rows()
}

// tableExists says whether DynamoDB has the table.
func (f *fixture) tableExists(t *testing.T, table string) bool {
	t.Helper()
	_, err := f.ddb.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &table})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		return true
	case errors.As(err, &nf):
		return false
	}
	t.Fatalf("describe %s: %v", table, err)
	return false
}

func (f *fixture) deleteTable(t *testing.T, table string) {
	t.Helper()
	if _, err := f.ddb.DeleteTable(t.Context(), &dynamodb.DeleteTableInput{TableName: &table}); err != nil {
		t.Fatalf("delete %s: %v", table, err)
	}
	for f.tableExists(t, table) {
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSettled waits until the table's item count holds still for a
// second: a local engine may apply the calls of a killed process after it
// died (they were queued), so a test that reuses the table's name waits
// for them.
func (f *fixture) waitSettled(t *testing.T, table string) {
	t.Helper()
	last, still := -1, 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		n := len(scanCanonical(t, f.ddb, table))
		if n == last {
			if still++; still >= 4 {
				return
			}
		} else {
			last, still = n, 0
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("table %s kept changing for 30 s after the kill", table)
}

// bookstoreTable is the loader configuration of the bookstore mapping's
// table, named table.
func bookstoreTable(t *testing.T, table string) load.Config {
	t.Helper()
	m, err := engine.LoadMapping(bookstoreMapping)
	if err != nil {
		t.Fatal(err)
	}
	return engine.TableConfig(m, table)
}

func testResumeOtherTable(t *testing.T, f *fixture) {
	table := migratetest.TableName(t, "recreated")
	dir := t.TempDir()
	statePath := filepath.Join(dir, table+".state.json")
	killAtRows(t, f.cmd(dir, table, append([]string{"--create-table"}, pacing...)...), statePath, 1)
	// The killed process's last calls may still sit in the engine's queue:
	// let them land before the table goes, or they land in its successor.
	f.waitSettled(t, table)

	// The table is gone (deleted, or DynamoDB Local restarted): resuming
	// with --create-table would create an empty table and skip every
	// checkpointed row. It is refused, and nothing is created.
	f.deleteTable(t, table)
	res := f.run(t, f.cmd(dir, table, "--resume", "--create-table", "--quiet"))
	if res.code != exitUsage || !strings.Contains(res.stderr, "does not exist any more") || !strings.Contains(res.stderr, "--fresh") {
		t.Errorf("resume --create-table into a deleted table: exit %d, want %d naming the missing table and --fresh\n%s", res.code, exitUsage, res.output())
	}
	if f.tableExists(t, table) {
		t.Errorf("the refused resume created table %s", table)
	}

	// A table of the same name, created again: refused too.
	if err := load.EnsureTable(t.Context(), f.ddb, bookstoreTable(t, table)); err != nil {
		t.Fatal(err)
	}
	res = f.run(t, f.cmd(dir, table, "--resume", "--quiet"))
	if res.code != exitUsage || !strings.Contains(res.stderr, "deleted and created again") {
		t.Errorf("resume into a re-created table: exit %d, want %d saying it was created again\n%s", res.code, exitUsage, res.output())
	}
	if n := len(scanCanonical(t, f.ddb, table)); n != 0 {
		t.Errorf("the refused resume wrote %d items", n)
	}

	// --fresh, as the message says, loads it whole.
	res = f.run(t, f.cmd(dir, table, "--fresh", "--quiet"))
	if res.code != 0 {
		t.Fatalf("--fresh exited %d\n%s", res.code, res.output())
	}
	sameItems(t, "table after --fresh", scanCanonical(t, f.ddb, table), f.clean)
	if st := loadState(t, statePath); st == nil || st.Target == nil || st.Target.CreatedAt.IsZero() {
		t.Errorf("the state file records no target identity: %+v", st)
	}
}

func testStateFileLock(t *testing.T, f *fixture) {
	table := migratetest.TableName(t, "locked")
	dir := t.TempDir()
	statePath := filepath.Join(dir, table+".state.json")
	holder := f.cmd(dir, table, append([]string{"--create-table"}, pacing...)...)
	if err := start(holder); err != nil {
		t.Fatal(err)
	}
	waitForRows(t, statePath, 1, holder)
	if holder.ProcessState != nil {
		t.Fatal("the first run ended before a second one could meet it; lower --max-wcu")
	}
	for _, mode := range []string{"", "--resume", "--fresh"} {
		args := []string{"--quiet"}
		if mode != "" {
			args = append(args, mode)
		}
		res := f.run(t, f.cmd(dir, table, args...))
		want := fmt.Sprintf("in use by another run (pid %d on host", holder.Process.Pid)
		if res.code != exitUsage || !strings.Contains(res.stderr, want) {
			t.Errorf("run %s on a state file in use: exit %d, want %d and %q\n%s", mode, res.code, exitUsage, want, res.output())
		}
	}
	// A crashed holder does not block the next run.
	holder.Process.Signal(syscall.SIGKILL)
	wait(holder)
	res := f.run(t, f.cmd(dir, table, "--resume", "--quiet"))
	if res.code != 0 {
		t.Fatalf("resume after the holder was killed: exit %d\n%s", res.code, res.output())
	}
	sameItems(t, "table after the lock was released", scanCanonical(t, f.ddb, table), f.clean)
}

// copyItems copies every item of table from into table to.
func (f *fixture) copyItems(t *testing.T, from, to string) {
	t.Helper()
	p := dynamodb.NewScanPaginator(f.ddb, &dynamodb.ScanInput{TableName: &from})
	var batch []types.WriteRequest
	flush := func() {
		for len(batch) > 0 {
			out, err := f.ddb.BatchWriteItem(t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{to: batch}})
			if err != nil {
				t.Fatalf("copy into %s: %v", to, err)
			}
			batch = out.UnprocessedItems[to]
		}
	}
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
			if len(batch) == 25 {
				flush()
			}
		}
	}
	flush()
}

func (f *fixture) verb(t *testing.T, verb, table string, extra ...string) result {
	t.Helper()
	args := append([]string{verb, "--mapping", bookstoreMapping, "--endpoint", f.endpoint, "--table", table}, extra...)
	cmd := exec.Command(f.bin, args...)
	cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+f.pg)
	return f.run(t, cmd)
}

func testTableMismatch(t *testing.T, f *fixture) {
	// A table with the mapping's keys but without GSI1, holding exactly the
	// clean run's items: once, verify said IDENTICAL and run exited 0.
	table := migratetest.TableName(t, "nogsi1")
	cfg := bookstoreTable(t, table)
	var kept []load.Index
	for _, ix := range cfg.Indexes {
		if ix.Name != "GSI1" {
			kept = append(kept, ix)
		}
	}
	cfg.Indexes = kept
	if err := load.EnsureTable(t.Context(), f.ddb, cfg); err != nil {
		t.Fatal(err)
	}
	f.copyItems(t, f.cleanTable, table)

	res := f.verb(t, "verify", table)
	if res.code != exitDiffers || !strings.Contains(res.stdout, "GSI1") || strings.Contains(res.stdout, "IDENTICAL") {
		t.Errorf("verify of a table without GSI1: exit %d, want %d naming GSI1\n%s", res.code, exitDiffers, res.output())
	}
	res = f.verb(t, "plan", table)
	// A plan with problems exits 1: migrate run would fail.
	if res.code != exitFailure || !strings.Contains(res.stdout, "table-mismatch") || !strings.Contains(res.stdout, "GSI1") || strings.Contains(res.stdout, "Problems: none") {
		t.Errorf("plan of a table without GSI1: exit %d, want the missing index as a problem\n%s", res.code, res.output())
	}
	res = f.verb(t, "prune", table)
	if res.code != exitFailure || !strings.Contains(res.stderr, "GSI1") {
		t.Errorf("prune of a table without GSI1: exit %d, want %d naming GSI1\n%s", res.code, exitFailure, res.output())
	}
	dir := t.TempDir()
	res = f.run(t, f.cmd(dir, table, "--fresh", "--quiet"))
	if res.code != exitFailure || !strings.Contains(res.stderr, "GSI1") {
		t.Errorf("run into a table without GSI1: exit %d, want %d naming GSI1\n%s", res.code, exitFailure, res.output())
	}

	// A table keyed on id: refused before a row is read, naming the key.
	idTable := migratetest.TableName(t, "keyedonid")
	if err := load.EnsureTable(t.Context(), f.ddb, load.Config{Table: idTable, PartitionKey: "id"}); err != nil {
		t.Fatal(err)
	}
	res = f.run(t, f.cmd(dir, idTable, "--quiet"))
	if res.code != exitFailure || !strings.Contains(res.stderr, "PK") {
		t.Errorf("run into a table keyed on id: exit %d, want %d naming PK\n%s", res.code, exitFailure, res.output())
	}
	if strings.Count(res.stderr, "\n") > 10 {
		t.Errorf("run into a table keyed on id wrote %d lines of errors, want one refusal\n%s", strings.Count(res.stderr, "\n"), res.stderr)
	}
	if n := len(scanCanonical(t, f.ddb, idTable)); n != 0 {
		t.Errorf("the refused run wrote %d items", n)
	}
	if st := loadState(t, filepath.Join(dir, idTable+".state.json")); st != nil {
		t.Errorf("the refused run left a state file: %+v", st)
	}
}

func testPruneForeign(t *testing.T, f *fixture) {
	table := migratetest.TableName(t, "prune")
	cfg := bookstoreTable(t, table)
	if err := load.EnsureTable(t.Context(), f.ddb, cfg); err != nil {
		t.Fatal(err)
	}
	f.copyItems(t, f.cleanTable, table)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(pk, sk, entity string, more ...string) {
		item := map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk), "type": s(entity)}
		for i := 0; i+1 < len(more); i += 2 {
			item[more[i]] = s(more[i+1])
		}
		if _, err := f.ddb.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	type key struct{ pk, sk string }
	const at = "2024-05-01T10:00:00.000000Z"
	// Items under our entity names whose keys no source row of the
	// columns' types can produce: someone else's, never deleted.
	foreign := []key{
		{"OTHERAPP#1", "PROFILE"},                                             // another prefix
		{"CUSTOMER#abc", "PROFILE"},                                           // text in a bigint slot
		{"CUSTOMER#0042", "PROFILE"},                                          // a bigint is never written with leading zeros
		{"CUSTOMER#1#2", "PROFILE"},                                           // an extra separator
		{"ORDER#99x", "ORDER"},                                                // OrderSummary, not a number
		{"CUSTOMER#999999", "ORDER#" + at + "#00000099999"},                   // 11 digits where {order_id:12} writes 12
		{"CUSTOMER#999999", "ORDER#2024-05-01 10:00:00#000000099999"},         // another timestamp format
		{"CUSTOMER#999999", "ORDER#2024-02-30T10:00:00.000000Z#000000099999"}, // no such day
		{"CUSTOMER#999999", "ORDER#" + at + "#000000099998"},                  // an index key in a shard beyond the count (below)
	}
	for _, k := range foreign[:len(foreign)-1] {
		entity := "Customer"
		switch {
		case strings.HasPrefix(k.sk, "ORDER#"):
			entity = "Order"
		case k.sk == "ORDER":
			entity = "OrderSummary"
		}
		put(k.pk, k.sk, entity)
	}
	last := foreign[len(foreign)-1]
	put(last.pk, last.sk, "Order", "GSI2PK", "STATUS#OPEN#9999", "GSI2SK", at+"#000000099998")
	// Real orphans: rows the source no longer has.
	stale := []key{{"CUSTOMER#999999", "PROFILE"}, {"CUSTOMER#999999", "ORDER#" + at + "#000000099999"}}
	put(stale[0].pk, stale[0].sk, "Customer")
	put(stale[1].pk, stale[1].sk, "Order", "GSI2PK", "STATUS#OPEN#0", "GSI2SK", at+"#000000099999")

	res := f.verb(t, "prune", table, "--yes")
	if res.code != 0 || !strings.Contains(res.stdout, "deleted 2 stale items") || !strings.Contains(res.stdout, "OTHERAPP#1") {
		t.Errorf("prune: exit %d, want the 2 stale items deleted and OTHERAPP#1 listed as foreign\n%s", res.code, res.output())
	}
	exists := func(k key) bool {
		got, err := f.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &table,
			Key: map[string]types.AttributeValue{"PK": s(k.pk), "SK": s(k.sk)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return got.Item != nil
	}
	for _, k := range foreign {
		if !exists(k) {
			t.Errorf("prune deleted %s | %s, an item the mapping could not have written", k.pk, k.sk)
		}
		if !strings.Contains(res.stdout, k.pk+" | "+k.sk) {
			t.Errorf("prune did not list %s | %s as foreign\n%s", k.pk, k.sk, res.stdout)
		}
	}
	for _, k := range stale {
		if exists(k) {
			t.Errorf("prune left the stale %s | %s", k.pk, k.sk)
		}
	}
}

func testPromptInterrupt(t *testing.T, f *fixture) {
	// A window larger than the source: the whole bookstore is read into
	// it within a second or two, then written at 500 WCU for half a
	// minute. Before, Ctrl-C let that half minute run and exited 0.
	table := migratetest.TableName(t, "prompt")
	dir := t.TempDir()
	statePath := filepath.Join(dir, table+".state.json")
	cmd := f.cmd(dir, table, "--create-table", "--max-wcu", "500", "--window", "50000", "--quiet")
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitForRows(t, statePath, 1, cmd)
	time.Sleep(2 * time.Second)
	if cmd.ProcessState != nil {
		t.Fatal("the run ended before the signal; lower --max-wcu")
	}
	cmd.Process.Signal(syscall.SIGINT)
	signaled := time.Now()
	done := make(chan result, 1)
	go func() { done <- wait(cmd) }()
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run did not stop within 30 s of Ctrl-C")
	}
	t.Logf("stopped %v after Ctrl-C", time.Since(signaled).Round(time.Millisecond))
	if res.code != exitInterrupted || !strings.Contains(res.stderr, "Resume with:\n  migrate run") {
		t.Fatalf("after Ctrl-C: exit %d, want %d and the resume command\n%s", res.code, exitInterrupted, res.output())
	}
	st := loadState(t, statePath)
	if st == nil || st.Complete || st.Rows() >= f.rows {
		t.Fatalf("state after Ctrl-C: %+v; want an unfinished run", st)
	}
	if n := len(scanCanonical(t, f.ddb, table)); n >= len(f.clean) {
		t.Errorf("the interrupted run wrote every item (%d) instead of stopping", n)
	}
	res = f.run(t, f.cmd(dir, table, "--resume", "--quiet"))
	if res.code != 0 {
		t.Fatalf("resume exited %d\n%s", res.code, res.output())
	}
	sameItems(t, "table after Ctrl-C and resume", scanCanonical(t, f.ddb, table), f.clean)
}
