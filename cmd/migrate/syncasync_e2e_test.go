package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/migratetest"
)

// TestSyncCaughtUpCoversAsyncCommits commits changes with
// synchronous_commit = off while the WAL writer waits 10 s between
// flushes: the transactions are visible at once, their commit records
// are written later. `sync --until-caught-up` must apply them before it
// says caught up (verify then finds the table identical), not stop at
// the server's WAL write position, which does not include them yet.
//
// The write position ends exactly at a record when the WAL writer last
// wrote up to an async commit: so each round first commits into a table
// no entity reads and waits for that to be flushed, then commits the
// changes, which wait for the writer's next round.
//
// Not parallel: it slows the WAL writer of the whole server, and puts it
// back before the parallel tests go on.
func TestSyncCaughtUpCoversAsyncCommits(t *testing.T) {
	bin := buildBinary(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	s := newSyncSource(t, bin, endpoint, 3)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL; CREATE TABLE unmapped (n bigint)")
	if res := runCmd(t, s.cmd(endpoint, "--create-table", "--until-caught-up", "--quiet")); res.code != 0 {
		t.Fatalf("initial sync: exit %d\n%s", res.code, res.output())
	}
	s.exec(t, "ALTER SYSTEM SET wal_writer_delay = '10s'")
	s.exec(t, "SELECT pg_reload_conf()")
	t.Cleanup(func() {
		s.exec(t, "ALTER SYSTEM RESET wal_writer_delay")
		s.exec(t, "SELECT pg_reload_conf()")
	})
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		var end string
		err := conn.QueryRow(ctx, "INSERT INTO unmapped VALUES (1) RETURNING NULL").Scan(new(any))
		if err == nil {
			err = conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&end)
		}
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for flushed := false; !flushed; time.Sleep(50 * time.Millisecond) {
			if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() >= $1::text::pg_lsn", end).Scan(&flushed); err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the WAL up to %s was not flushed within a minute", round, end)
			}
		}
		if _, err := conn.Exec(ctx, `
			UPDATE customers SET name = name || '.' WHERE customer_id = (SELECT min(customer_id) FROM customers);
			DELETE FROM orders WHERE order_id = (SELECT max(order_id) FROM orders);
			UPDATE order_items SET quantity = quantity % 9 + 1 WHERE (order_id, book_id) = (SELECT order_id, book_id FROM order_items ORDER BY 1, 2 LIMIT 1)`); err != nil {
			t.Fatal(err)
		}
		res := runCmd(t, s.cmd(endpoint, "--until-caught-up", "--quiet"))
		if res.code != 0 || !strings.Contains(res.stdout, "caught up with the source") {
			t.Fatalf("round %d: sync --until-caught-up: exit %d\n%s", round, res.code, res.output())
		}
		out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", s.pg, "--endpoint", endpoint, "--table", s.table,
			"--state", s.dir+"/state.json")
		if code != 0 || !strings.Contains(out, "IDENTICAL") {
			t.Fatalf("round %d: after sync said caught up, verify exited %d\nsync:\n%s\nverify:\n%s\n%s", round, code, res.stdout, out, errOut)
		}
	}
}
