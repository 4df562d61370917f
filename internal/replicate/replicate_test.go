package replicate_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

func TestNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		table, want string
	}{
		{"Bookstore", "migrate_bookstore"},
		{"sync-712fb172977d", "migrate_sync_712fb172977d"},
		{"a.b", "migrate_a_b"},
		{strings.Repeat("x", 100), "migrate_" + strings.Repeat("x", 55)},
	} {
		got := replicate.DefaultName(c.table)
		if got != c.want {
			t.Errorf("DefaultName(%q) = %q, want %q", c.table, got, c.want)
		}
		if err := replicate.CheckName("slot", got); err != nil {
			t.Errorf("the default name %q is refused: %v", got, err)
		}
	}
	for _, bad := range []string{"", "Upper", "with space", "semi;colon", "quote'", strings.Repeat("x", 64)} {
		if replicate.CheckName("slot", bad) == nil {
			t.Errorf("CheckName accepted %q", bad)
		}
	}
}

const schema = `
CREATE TABLE parent (id int PRIMARY KEY, name text NOT NULL, big text);
CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL, note text);
ALTER TABLE child REPLICA IDENTITY FULL;
CREATE TABLE other (id int PRIMARY KEY);
INSERT INTO parent VALUES (1, 'one', NULL), (2, 'two', NULL);
`

func setup(t *testing.T) (url string, conn *pgx.Conn) {
	t.Helper()
	url = migratetest.PostgresURL(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), schema); err != nil {
		t.Fatal(err)
	}
	if err := replicate.CheckWALLevel(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	return url, conn
}

func TestPublication(t *testing.T) {
	t.Parallel()
	_, conn := setup(t)
	ctx := t.Context()
	tables := []replicate.Table{{Schema: "public", Name: "parent"}, {Schema: "public", Name: "child"}}
	created, err := replicate.EnsurePublication(ctx, conn, "pub_a", tables)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if created, err := replicate.EnsurePublication(ctx, conn, "pub_a", tables); err != nil || created {
		t.Fatalf("reuse: %v %v", created, err)
	}
	_, err = replicate.EnsurePublication(ctx, conn, "pub_a", append(tables, replicate.Table{Schema: "public", Name: "other"}))
	if err == nil || !strings.Contains(err.Error(), `ALTER PUBLICATION "pub_a" ADD TABLE "public"."other"`) {
		t.Errorf("a publication lacking a table: %v", err)
	}
	if _, err := conn.Exec(ctx, `CREATE PUBLICATION pub_b FOR TABLE parent WITH (publish = 'insert, update')`); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.EnsurePublication(ctx, conn, "pub_b", tables[:1]); err == nil || !strings.Contains(err.Error(), "does not publish every kind of change") {
		t.Errorf("a publication without deletes: %v", err)
	}
	if _, err := conn.Exec(ctx, `CREATE PUBLICATION pub_c FOR TABLE parent WHERE (id > 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.EnsurePublication(ctx, conn, "pub_c", tables[:1]); err == nil || !strings.Contains(err.Error(), "row filter") {
		t.Errorf("a publication with a row filter: %v", err)
	}
	for _, p := range []string{"pub_a", "pub_b"} {
		if dropped, err := replicate.DropPublication(ctx, conn, p); err != nil || !dropped {
			t.Errorf("drop %s: %v %v", p, dropped, err)
		}
	}
	if dropped, err := replicate.DropPublication(ctx, conn, "pub_a"); err != nil || dropped {
		t.Errorf("drop a dropped publication: %v %v", dropped, err)
	}
}

// TestStream creates a slot, makes every kind of change and reads them
// back: values as text, old versions as the replica identity has them,
// unchanged TOASTed values, transactions and their positions.
func TestStream(t *testing.T) {
	t.Parallel()
	url, conn := setup(t)
	ctx := t.Context()
	tables := []replicate.Table{{Schema: "public", Name: "parent"}, {Schema: "public", Name: "child"}}
	if _, err := replicate.EnsurePublication(ctx, conn, "pub", tables); err != nil {
		t.Fatal(err)
	}
	repl, err := replicate.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	slot, err := replicate.CreateSlot(ctx, repl, "slot_t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The server ends the stream's process a moment after the
		// connection closed.
		repl.Close(context.Background())
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := replicate.DropSlot(context.Background(), conn, "slot_t")
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("drop slot: %v", err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if slot.Snapshot == "" || slot.ConsistentPoint == 0 {
		t.Fatalf("slot %+v", slot)
	}
	info, err := replicate.ReadSlot(ctx, conn, "slot_t")
	if err != nil || info == nil || info.Plugin != "pgoutput" || info.ConfirmedFlush != slot.ConsistentPoint {
		t.Fatalf("read slot: %+v %v", info, err)
	}
	if err := replicate.CheckSlot(info, "other_db"); err == nil {
		t.Error("a slot of another database passed the check")
	}

	for _, sql := range []string{
		// 12,800 characters that do not compress: stored out of line (TOAST).
		`INSERT INTO parent SELECT 3, 'three', string_agg(md5(i::text), '') FROM generate_series(1, 400) i`,
		`UPDATE parent SET name = 'THREE' WHERE id = 3`, // big unchanged: not sent
		`UPDATE parent SET id = 4 WHERE id = 3`,         // a key change: the old key is sent
		`INSERT INTO child VALUES (10, 1, NULL)`,
		`UPDATE child SET parent_id = 2 WHERE id = 10`, // FULL: the whole old row
		`DELETE FROM parent WHERE id = 1`,              // default identity: the key only
		`TRUNCATE other, child`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	stream, err := replicate.Start(ctx, repl, replicate.StreamConfig{Slot: "slot_t", Publication: "pub", StatusEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	msgs := make(chan replicate.Message, 100)
	done := make(chan error, 1)
	go func() { done <- stream.Run(rctx, msgs) }()

	var got []string
	var lastCommit replicate.LSN
	timeout := time.After(20 * time.Second)
	for len(got) < 7 {
		select {
		case m := <-msgs:
			switch m.Kind {
			case replicate.KindChange:
				got = append(got, describe(m.Change))
			case replicate.KindTruncate:
				got = append(got, "truncate "+m.Truncated[0].String())
			case replicate.KindCommit:
				if m.LSN <= lastCommit {
					t.Errorf("commit at %s after one at %s", m.LSN, lastCommit)
				}
				lastCommit = m.LSN
			}
		case err := <-done:
			t.Fatalf("stream stopped: %v", err)
		case <-timeout:
			t.Fatalf("timed out; got %v", got)
		}
	}
	want := []string{
		"insert public.parent new=[3 three c*12800] old=-",
		"update public.parent new=[3 THREE ?] old=-",
		"update public.parent new=[4 THREE ?] old=key[3]",
		"insert public.child new=[10 1 NULL] old=-",
		"update public.child new=[10 2 NULL] old=[10 1 NULL]",
		"delete public.parent new=- old=key[1]",
		"truncate public.child", // other is not published
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("change %d:\n got  %v\n want %s", i, got[i], want[i])
		}
	}

	// Confirm the last commit: the slot's confirmed position follows.
	stream.Confirm(lastCommit)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := replicate.ReadSlot(ctx, conn, "slot_t")
		if err != nil {
			t.Fatal(err)
		}
		if info.ConfirmedFlush >= lastCommit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot is confirmed up to %s, not %s", info.ConfirmedFlush, lastCommit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
}

// describe renders a change: each version's values, "?" for a value not
// sent, "x*N" for N x's.
func describe(c *replicate.Change) string {
	render := func(present bool, value func(int) (replicate.Value, bool)) string {
		if !present {
			return "-"
		}
		var parts []string
		for i := range c.Rel.Columns {
			v, ok := value(i)
			switch {
			case !ok:
				parts = append(parts, "?")
			case v.Null:
				parts = append(parts, "NULL")
			case len(v.Text) > 100:
				parts = append(parts, v.Text[:1]+"*"+strconv.Itoa(len(v.Text)))
			default:
				parts = append(parts, v.Text)
			}
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	old := render(c.Old != nil, c.OldValue)
	if c.Old != nil && c.OldKeyOnly {
		var parts []string
		for i, col := range c.Rel.Columns {
			if col.Key {
				v, _ := c.OldValue(i)
				parts = append(parts, v.Text)
			}
		}
		old = "key[" + strings.Join(parts, " ") + "]"
	}
	return c.Op.String() + " " + c.Rel.Table.String() + " new=" + render(c.New != nil, c.NewValue) + " old=" + old
}
