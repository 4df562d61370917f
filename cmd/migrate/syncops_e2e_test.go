package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestSyncOpsE2E runs sync as a service is run: scraped for metrics and
// health while a workload runs and after a kill, guarded against the
// source's disk filling behind a stalled target, read by sync status,
// run as a role with only the grants the README names, and finished by
// cutover, GO once the writes stop and NO-GO while they go on.
func TestSyncOpsE2E(t *testing.T) {
	bin := buildBinary(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	t.Run("metrics and health", func(t *testing.T) {
		t.Parallel()
		testSyncMetrics(t, bin, endpoint)
	})
	t.Run("slot guard", func(t *testing.T) {
		t.Parallel()
		testSlotGuard(t, bin, endpoint)
	})
	t.Run("cutover", func(t *testing.T) {
		t.Parallel()
		testCutover(t, bin, endpoint)
	})
	t.Run("slot creation waits", func(t *testing.T) {
		t.Parallel()
		testSlotCreationWait(t, bin, endpoint)
	})
	t.Run("least privilege", func(t *testing.T) {
		t.Parallel()
		testSyncLeastPrivilege(t, bin, endpoint)
	})
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// scrape GETs a path of the metrics listener: its status and body, or
// code 0 when nothing answers.
func scrape(addr, path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// metricValue reads one sample of a scrape: name with its labels as
// printed, e.g. `migrate_items_written_total{entity="Order"}`.
func metricValue(body, name string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

func waitFor(t testing.TB, what string, d time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testSyncMetrics(t *testing.T, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 100)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	addr := freeAddr(t)
	args := []string{"--create-table", "--status-every", "1s", "--metrics-addr", addr, "--ready-lag", "20s", "--log-format", "json"}
	cmd := s.cmd(endpoint, args...)
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/healthz", time.Minute, func() bool { code, _ := scrape(addr, "/healthz"); return code == 200 })
	waitFor(t, "/readyz to say ready", 2*time.Minute, func() bool {
		if exited(cmd) {
			res := wait(cmd)
			t.Fatalf("sync ended: exit %d\n%s", res.code, res.output())
		}
		code, _ := scrape(addr, "/readyz")
		return code == 200
	})
	waitWorkload := runWorkload(t, s.pg, 20*time.Second, 5)
	time.Sleep(10 * time.Second)
	code, body := scrape(addr, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for _, name := range []string{"migrate_sync_lag_seconds", "migrate_sync_lag_bytes", "migrate_sync_confirmed_lsn", "migrate_sync_received_lsn",
		"migrate_sync_source_wal_lsn", "migrate_sync_slot_retained_wal_bytes", "migrate_last_error_timestamp_seconds", "migrate_sync_streaming"} {
		if _, ok := metricValue(body, name); !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	waitWorkload()
	// Counters move with the workload: scrape again once it has been read.
	waitFor(t, "the changes to show in /metrics", time.Minute, func() bool {
		_, body = scrape(addr, "/metrics")
		v, _ := metricValue(body, `migrate_sync_changes_total{table="public.orders"}`)
		w, _ := metricValue(body, `migrate_items_written_total{entity="Order"}`)
		return v > 0 && w > 0
	})
	if v, _ := metricValue(body, "migrate_sync_confirmed_lsn"); v <= 0 {
		t.Errorf("confirmed LSN %v", v)
	}
	for _, secret := range []string{s.pg, "password", "postgres://"} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics carries %q", secret)
		}
	}

	// kill -9: nothing answers; the same command restarted is ready again.
	cmd.Process.Signal(syscall.SIGKILL)
	wait(cmd)
	if code, _ := scrape(addr, "/healthz"); code != 0 {
		t.Errorf("/healthz answers %d after the kill", code)
	}
	cmd = s.cmd(endpoint, args...)
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz after the restart", 2*time.Minute, func() bool {
		if exited(cmd) {
			res := wait(cmd)
			t.Fatalf("sync ended: exit %d\n%s", res.code, res.output())
		}
		code, _ := scrape(addr, "/readyz")
		return code == 200
	})
	if code, body := scrape(addr, "/metrics"); code != 200 || !strings.Contains(body, "migrate_sync_caught_up") {
		t.Errorf("/metrics after the restart: %d", code)
	}
	// sync status sees it streaming.
	out, errOut, code := runCLI(t, "sync", "status", "--mapping", bookstoreMapping, "--pg", s.pg, "--table", s.table, "--state", filepath.Join(s.dir, "state.json"))
	if code != 0 || !regexp.MustCompile(`slot\s+`+replicate.DefaultName(s.table)+`, active`).MatchString(out) || !strings.Contains(out, "initial load complete") {
		t.Errorf("sync status while streaming: exit %d\n%s\n%s", code, out, errOut)
	}

	// SIGTERM: stops within seconds, with the position confirmed; every
	// line of its log is JSON.
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	res := wait(cmd)
	if took := time.Since(began); res.code != exitInterrupted || took > 15*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v, want %d within 15 s\n%s", res.code, took, exitInterrupted, res.output())
	}
	if !strings.Contains(res.stderr, "confirmed up to") {
		t.Errorf("the stop does not name the confirmed position:\n%s", res.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("a stderr line is not JSON under --log-format json: %s", line)
		}
	}
	out, _, code = runCLI(t, "sync", "status", "--mapping", bookstoreMapping, "--pg", s.pg, "--table", s.table)
	if code != 0 || !strings.Contains(out, "inactive") {
		t.Errorf("sync status once stopped: exit %d\n%s", code, out)
	}
	s.catchUpAndVerify(t, endpoint)
}

// stallProxy forwards to a DynamoDB endpoint until stalled; from then on
// it holds every call until its client gives up.
type stallProxy struct {
	srv     *http.Server
	url     string
	stalled atomic.Bool
	held    atomic.Int64
}

func newStallProxy(t testing.TB, endpoint string) *stallProxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{url: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.stalled.Load() {
			p.held.Add(1)
			<-r.Context().Done()
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// testSlotGuard stalls the target while the source keeps writing WAL:
// sync warns, then stops and drops the slot before it holds more than
// --max-slot-wal.
func testSlotGuard(t *testing.T, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 30)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL; CREATE TABLE wal_filler (x text)")
	proxy := newStallProxy(t, endpoint)
	const limit = 48 << 20
	cmd := s.cmd(proxy.url, "--create-table", "--status-every", "1s", "--max-slot-wal", "48MiB", "--max-batch-elapsed", "10m")
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, filepath.Join(s.dir, "state.json"), cmd)
	name := replicate.DefaultName(s.table)
	waitFor(t, "the sync to stream", time.Minute, func() bool {
		out, _, _ := runCLI(t, "sync", "status", "--mapping", bookstoreMapping, "--pg", s.pg, "--table", s.table)
		return strings.Contains(out, name+", active") || exited(cmd)
	})
	proxy.stalled.Store(true)
	// A change the sync must write (and cannot), then WAL past the limit.
	s.exec(t, "UPDATE authors SET name = name || ' (stalled)' WHERE author_id = (SELECT min(author_id) FROM authors)")
	waitFor(t, "the sync to try a write", time.Minute, func() bool { return proxy.held.Load() > 0 || exited(cmd) })
	// WAL in steps of about 3 MiB, slower than the guard looks (every 2 s),
	// so that it sees the slot between 80% and the limit.
	for i := 0; i < 40 && !exited(cmd); i++ {
		s.exec(t, "INSERT INTO wal_filler SELECT repeat(md5(g::text), 32) FROM generate_series(1, 2500) g")
		time.Sleep(2500 * time.Millisecond)
	}
	waitFor(t, "the guard to stop the sync", 2*time.Minute, func() bool { return exited(cmd) })
	res := wait(cmd)
	if res.code != exitFailure || !strings.Contains(res.stderr, "reached --max-slot-wal") || !strings.Contains(res.stderr, "was dropped to protect the source's disk") {
		t.Fatalf("sync behind a stalled target: exit %d, want %d with the limit and the drop named\n%s", res.code, exitFailure, res.output())
	}
	if !strings.Contains(res.stderr, "near --max-slot-wal") {
		t.Errorf("no warning before the limit:\n%s", res.stderr)
	}
	conn, err := pgx.Connect(t.Context(), s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var slots int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", name).Scan(&slots); err != nil || slots != 0 {
		t.Errorf("the slot remains: %d (%v)", slots, err)
	}
	t.Logf("guard stopped the sync with %d calls held; limit %d", proxy.held.Load(), limit)
	if _, _, code := runCLI(t, "sync", "status", "--mapping", bookstoreMapping, "--pg", s.pg, "--table", s.table); code != exitDiffers {
		t.Errorf("sync status without a slot: exit %d, want %d", code, exitDiffers)
	}
}

// testCutover: writes that stop give GO; writes that go on give NO-GO.
func testCutover(t *testing.T, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 60)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	if res := runCmd(t, s.cmd(endpoint, "--create-table", "--until-caught-up", "--quiet")); res.code != 0 {
		t.Fatalf("initial sync: exit %d\n%s", res.code, res.output())
	}
	cutover := func() (string, string, int) {
		return runCLI(t, "cutover", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table,
			"--state", filepath.Join(s.dir, "state.json"), "--quiet-period", "4s")
	}
	// Writes that keep going: NO-GO, exit 3.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := pgx.Connect(ctx, s.pg)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = conn.Exec(ctx, "UPDATE customers SET email = 'c'||customer_id||'.'||$1::int||'@example.com' WHERE customer_id = (SELECT min(customer_id) FROM customers)", i)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	out, errOut, code := cutover()
	cancel()
	<-done
	if code != exitDiffers || !strings.Contains(out, "NO-GO") || !strings.Contains(out, "during the 4s quiet period") {
		t.Errorf("cutover while writes go on: exit %d, want %d and NO-GO\nstdout:\n%s\nstderr:\n%s", code, exitDiffers, out, errOut)
	}
	// A transaction that wrote and stays open: NO-GO, naming it.
	conn, err := pgx.Connect(t.Context(), s.pg)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "UPDATE books SET title = title WHERE false"); err != nil {
		t.Fatal(err)
	}
	out, _, code = cutover()
	tx.Rollback(context.Background())
	conn.Close(context.Background())
	if code != exitDiffers || !strings.Contains(out, "write lock held: pid") || !strings.Contains(out, "on public.books") {
		t.Errorf("cutover with an open writing transaction: exit %d\n%s", code, out)
	}
	// Writes stopped: GO, exit 0, with the evidence.
	out, errOut, code = cutover()
	if code != 0 || !strings.Contains(out, "GO: the table holds every change") || !strings.Contains(out, "no write to a mapped table during the 4s quiet period") ||
		!regexp.MustCompile(`verify \(every item\): (\d+) expected, (\d+) matching, 0 missing, 0 different, 0 unexpected`).MatchString(out) {
		t.Errorf("cutover once writes stopped: exit %d, want 0 and GO\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A running sync is refused: cutover applies the last changes itself.
	cmd := s.cmd(endpoint, "--quiet")
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	name := replicate.DefaultName(s.table)
	waitFor(t, "the sync to stream", time.Minute, func() bool {
		out, _, _ := runCLI(t, "sync", "status", "--mapping", bookstoreMapping, "--pg", s.pg, "--table", s.table)
		return strings.Contains(out, name+", active")
	})
	_, errOut, code = runCLI(t, "cutover", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table, "--wait-for-sync", "2s")
	cmd.Process.Signal(syscall.SIGINT)
	wait(cmd)
	if code != exitUsage || !strings.Contains(errOut, "stop the sync service first") {
		t.Errorf("cutover while sync runs: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
}

// testSyncLeastPrivilege runs sync as a role with only what the README
// names: LOGIN REPLICATION, SELECT on the mapped tables, and a publication
// the tables' owner created.
func testSyncLeastPrivilege(t *testing.T, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 40)
	name := replicate.DefaultName(s.table)
	role := "sync_" + strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if len(role) > 60 {
		role = role[:60]
	}
	s.exec(t, fmt.Sprintf(`ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL;
		CREATE ROLE %[1]s LOGIN REPLICATION PASSWORD 'pw-%[1]s';
		GRANT USAGE ON SCHEMA public TO %[1]s;
		GRANT SELECT ON customers, addresses, authors, books, orders, order_items TO %[1]s;
		CREATE PUBLICATION %[2]s FOR TABLE customers, addresses, authors, books, orders, order_items`, role, pgx.Identifier{name}.Sanitize()))
	t.Cleanup(func() {
		migratetest.Exec(t, s.pg, fmt.Sprintf("DROP OWNED BY %[1]s; DROP ROLE IF EXISTS %[1]s", role))
	})
	u, err := url.Parse(s.pg)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "pw-"+role)
	restricted := u.String()

	cmd := s.cmd(endpoint, "--create-table", "--until-caught-up", "--quiet")
	cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+restricted)
	res := runCmd(t, cmd)
	if res.code != 0 || !strings.Contains(res.stdout, "caught up") {
		t.Fatalf("sync as %s: exit %d\n%s", role, res.code, res.output())
	}
	s.exec(t, "UPDATE authors SET name = name || ' II'; DELETE FROM order_items WHERE order_id IN (SELECT min(order_id) FROM orders)")
	cmd = s.cmd(endpoint, "--until-caught-up", "--quiet")
	cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+restricted)
	if res := runCmd(t, cmd); res.code != 0 {
		t.Fatalf("second sync as %s: exit %d\n%s", role, res.code, res.output())
	} else if strings.Contains(res.output(), "pw-"+role) {
		t.Errorf("the password shows in sync's output")
	}
	out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table,
		"--state", filepath.Join(s.dir, "state.json"))
	if code != 0 || !strings.Contains(out, "IDENTICAL") {
		t.Errorf("verify after a sync as %s: exit %d\n%s\n%s", role, code, out, errOut)
	}
}

// testSlotCreationWait holds a transaction open while sync creates its
// slot: sync says what it waits for (the blocking backend's pid and age)
// until the transaction ends, then goes on.
func testSlotCreationWait(t *testing.T, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 20)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL; CREATE TABLE blocker (x int)")
	conn, err := pgx.Connect(t.Context(), s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var pid int32
	if err := conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), "INSERT INTO blocker VALUES (1)"); err != nil { // an xid: slot creation waits for it
		t.Fatal(err)
	}
	logPath := filepath.Join(s.dir, "stderr.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := s.cmd(endpoint, "--create-table", "--until-caught-up", "--quiet")
	cmd.Stdout, cmd.Stderr = io.Discard, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pid %d (postgres", pid)
	waitFor(t, "sync to name the open transaction", time.Minute, func() bool {
		data, _ := os.ReadFile(logPath)
		return strings.Contains(string(data), "waits until the transactions open on the source end") && strings.Contains(string(data), want)
	})
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			data, _ := os.ReadFile(logPath)
			t.Fatalf("sync after the transaction ended: %v\n%s", err, data)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("sync did not finish within 2 minutes of the transaction's end")
	}
}
