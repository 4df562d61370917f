package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestSyncDDLE2E alters every table of the bookstore while the real
// binary's sync streams it. Added columns are followed: the workload goes
// on, and verify finds the table identical, new columns and their
// defaults included. Each change sync cannot follow stops it with exit 1
// and a message naming the change and how to go on, and so does every
// later start, until the slot is dropped.
func TestSyncDDLE2E(t *testing.T) {
	bin := buildBinary(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	failures := &failureLog{}
	t.Cleanup(func() { failures.repeat(t) })
	t.Run("add columns", func(t *testing.T) {
		t.Parallel()
		testSyncAddColumns(failures.record(t), bin, endpoint)
	})
	for _, c := range []ddlStop{
		{
			name: "type change", ddl: "ALTER TABLE books ALTER COLUMN price TYPE numeric(12,3)",
			then: "UPDATE books SET title = title || '.' WHERE book_id = 1",
			want: "table public.books: column price changed type numeric(10,2) → numeric(12,3), which the mapping reads",
		},
		{
			name: "rename", ddl: "ALTER TABLE customers RENAME COLUMN phone TO phone_number",
			then: "UPDATE customers SET name = name || '.' WHERE customer_id = 1",
			want: "table public.customers: column phone was renamed to phone_number, which the mapping reads",
		},
		{
			// Customer embeds addresses with attributes: "*".
			name: "drop", ddl: "ALTER TABLE addresses DROP COLUMN line2",
			then: "UPDATE addresses SET city = city || '.' WHERE address_id = (SELECT min(address_id) FROM addresses)",
			want: "table public.addresses: column line2 (text) was dropped, which the mapping reads",
		},
		{
			name: "primary key", ddl: "ALTER TABLE order_items DROP CONSTRAINT order_items_pkey, ADD PRIMARY KEY (book_id, order_id)",
			then: "UPDATE order_items SET quantity = quantity + 1 WHERE order_id = (SELECT min(order_id) FROM order_items)",
			want: "table public.order_items: primary key (order_id, book_id) → (book_id, order_id)",
		},
		{
			name: "replica identity", ddl: "ALTER TABLE orders REPLICA IDENTITY DEFAULT",
			then: "UPDATE orders SET status = 'SHIPPED' WHERE order_id = (SELECT min(order_id) FROM orders)",
			want: "table public.orders: replica identity FULL → DEFAULT (order_id), which lacks customer_id, placed_at that deletes and key changes need",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testSyncDDLStop(failures.record(t), bin, endpoint, c)
		})
	}
}

// startStreaming starts sync and returns once its initial load is
// complete.
func (s *syncSource) startStreaming(t testing.TB, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := s.cmd(s.endpoint, append([]string{"--create-table", "--status-every", "1s"}, extra...)...)
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, filepath.Join(s.dir, "state.json"), cmd)
	return cmd
}

// testSyncAddColumns adds a column to every table mid-stream, with and
// without defaults, while the workload runs: Author (attributes: "*")
// and Customer (embeds addresses with "*") gain them, the entities with
// explicit lists do not, and the table ends identical.
func testSyncAddColumns(t testing.TB, bin, endpoint string) {
	s := newSyncSource(t, bin, endpoint, 30)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	syncCmd := s.startStreaming(t)
	waitWorkload := runWorkload(t, s.pg, 20*time.Second, 5)
	time.Sleep(5 * time.Second)
	// The workload's transactions take the same tables' locks in other
	// orders: the server may pick the DDL as a deadlock's victim.
	s.execRetryingDeadlocks(t, `
		ALTER TABLE authors ADD COLUMN website text DEFAULT 'https://example.org';
		ALTER TABLE addresses ADD COLUMN floor int NOT NULL DEFAULT 0;
		ALTER TABLE addresses ADD COLUMN door text;
		ALTER TABLE customers ADD COLUMN vip boolean NOT NULL DEFAULT false;
		ALTER TABLE books ADD COLUMN stock int DEFAULT 5;
		ALTER TABLE orders ADD COLUMN note text;
		ALTER TABLE order_items ADD COLUMN discount numeric(4,2) NOT NULL DEFAULT 0`)
	s.exec(t, `
		UPDATE authors SET website = 'https://a.example' WHERE author_id IN (1, 2);
		UPDATE addresses SET door = 'B' WHERE address_id IN (SELECT address_id FROM addresses ORDER BY 1 LIMIT 3)`)
	waitWorkload()
	if exited(syncCmd) {
		res := wait(syncCmd)
		t.Fatalf("sync ended during the workload: exit %d\n%s", res.code, res.output())
	}
	syncCmd.Process.Signal(syscall.SIGINT)
	res := wait(syncCmd)
	if res.code != exitInterrupted {
		t.Fatalf("sync after SIGINT: exit %d, want %d\n%s", res.code, exitInterrupted, res.output())
	}
	// A table behind the source after the catch-up needs the log of the
	// sync that streamed (what it applied, followed and confirmed).
	defer func() {
		if t.Failed() {
			t.Logf("the sync that streamed during the workload:\n%s", res.output())
		}
	}()
	for _, want := range []string{
		"sync follows a schema change", "table public.authors: column website (text) was added, with a default",
		"table public.addresses: column door (text) was added, NULL in existing rows",
		"rendering the items of every row again", "public.authors (Author)", "public.customers (Customer)",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("sync's log lacks %q:\n%s", want, res.output())
		}
	}
	s.catchUpAndVerify(t, s.endpoint)
}

// ddlStop is DDL sync cannot follow, a change after it, and the message
// sync must stop with.
type ddlStop struct {
	name, ddl, then, want string
}

func testSyncDDLStop(t testing.TB, bin, endpoint string, c ddlStop) {
	s := newSyncSource(t, bin, endpoint, 10)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	syncCmd := s.startStreaming(t)
	s.exec(t, c.ddl)
	s.exec(t, c.then)
	done := make(chan result, 1)
	go func() { done <- wait(syncCmd) }()
	var res result
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		syncCmd.Process.Kill()
		res = <-done
		t.Fatalf("sync did not stop within a minute of the DDL\n%s", res.output())
	}
	name := replicate.DefaultName(s.table)
	check := func(what string, res result, wants ...string) {
		t.Helper()
		if res.code != exitFailure {
			t.Errorf("%s: exit %d, want %d\n%s", what, res.code, exitFailure, res.output())
		}
		for _, want := range append(wants, c.want, "in a way sync cannot follow", "migrate sync --drop", "new or emptied table") {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("%s: stderr lacks %q\n%s", what, want, res.output())
			}
		}
	}
	check("sync after "+c.ddl, res, "replication slot "+name+" remains")
	t.Logf("sync after %s stopped with exit %d:\n%s", c.ddl, res.code, res.stderr)
	// A restart stops as well, before streaming: the state file recorded
	// the definitions the items were rendered with.
	check("sync started again", runCmd(t, s.cmd(s.endpoint, "--quiet")), "since the last sync")
	if res := runCmd(t, s.cmd(s.endpoint, "--drop")); res.code != 0 || !strings.Contains(res.stdout, "sync: dropped replication slot "+name) {
		t.Errorf("sync --drop: exit %d\n%s", res.code, res.output())
	}
}

// execRetryingDeadlocks runs sql, again when the server aborted it to end
// a deadlock (with the workload's transactions, in the tests that alter
// tables under it).
func (s *syncSource) execRetryingDeadlocks(t testing.TB, sql string) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for try := 1; ; try++ {
		_, err := conn.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if err == nil || try == 5 || !errors.As(err, &pgErr) || pgErr.Code != "40P01" {
			if err != nil {
				t.Fatalf("exec %.200s (try %d): %v", sql, try, err)
			}
			return
		}
		t.Logf("exec: %v; again", err)
	}
}
