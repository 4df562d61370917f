package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// syncEnv is a seeded bookstore, a DynamoDB table name and the sync
// config streaming one into the other.
type syncEnv struct {
	pg   string
	conn *pgx.Conn
	cfg  engine.SyncConfig
}

func newSyncEnv(t *testing.T, scale int) *syncEnv {
	t.Helper()
	ctx := t.Context()
	e := &syncEnv{pg: migratetest.PostgresURL(t)}
	if err := sqlschema.Up(ctx, e.pg); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, e.pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	e.conn = conn
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: scale, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "sync")
	e.cfg = engine.SyncConfig{
		Mapping: m, Postgres: e.pg, DynamoDB: migratetest.DynamoDBClient(t, endpoint),
		Table: table, CreateTable: true, StateFile: filepath.Join(t.TempDir(), "state.json"),
		UntilCaughtUp: true,
	}
	t.Cleanup(func() {
		c := e.cfg.WithDefaults()
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: e.pg, Slot: c.Slot, Publication: c.Publication}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	return e
}

func (e *syncEnv) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := e.conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (e *syncEnv) verify(t *testing.T) {
	t.Helper()
	v, err := engine.Verify(t.Context(), engine.VerifyConfig{CompareConfig: engine.CompareConfig{
		Mapping: e.cfg.Mapping, Postgres: e.pg, DynamoDB: e.cfg.DynamoDB, Table: e.cfg.Table}})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Identical {
		var diffs []string
		for _, it := range v.Missing {
			diffs = append(diffs, "missing "+it.Entity+" "+it.Key.String())
		}
		for _, it := range v.Unexpected {
			diffs = append(diffs, "unexpected "+it.Entity+" "+it.Key.String())
		}
		for _, it := range v.Different {
			diffs = append(diffs, fmt.Sprintf("different %s %s: %+v", it.Entity, it.Key, it.Attributes))
		}
		t.Fatalf("the table differs from the source: %+v\n%s", v.Summary, strings.Join(diffs, "\n"))
	}
}

// TestSyncAppliesEveryKindOfChange loads the bookstore through a new slot,
// changes the source in every way the mapping cares about, streams the
// changes and verifies the table against the source.
func TestSyncAppliesEveryKindOfChange(t *testing.T) {
	e := newSyncEnv(t, 20)
	ctx := t.Context()

	// Without the identities deletes and key changes need, nothing starts.
	_, err := engine.Sync(ctx, e.cfg)
	if !errors.Is(err, engine.ErrNotReplicable) || !strings.Contains(err.Error(), `ALTER TABLE "public"."orders" REPLICA IDENTITY FULL;`) ||
		!strings.Contains(err.Error(), `ALTER TABLE "public"."addresses" REPLICA IDENTITY FULL;`) {
		t.Fatalf("sync without replica identities: %v", err)
	}
	e.exec(t, `ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL`)

	res, err := engine.Sync(ctx, e.cfg)
	if err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if !res.Slot.SlotCreated || res.Load == nil || !res.CaughtUp {
		t.Fatalf("first sync: %+v", res)
	}
	e.verify(t)

	e.exec(t, `
		-- a new order with lines
		INSERT INTO orders VALUES (100001, 1, 'OPEN', '2024-06-01 10:00:00+00', 12.50, NULL);
		INSERT INTO order_items VALUES (100001, 1, 2, 6.25);
		-- a customer's address: embedded in the customer, copied onto orders
		UPDATE addresses SET city = 'Lisboa' WHERE address_id = (SELECT min(shipping_address_id) FROM orders);
		-- an author: copied onto books and, through books, onto order lines
		UPDATE authors SET name = 'Renamed Author' WHERE author_id = 1;
		-- a key change: placed_at is in the order's sort key
		UPDATE orders SET placed_at = placed_at + interval '1 day' WHERE order_id = (SELECT min(order_id) FROM orders);
		-- status feeds the sharded index key
		UPDATE orders SET status = 'SHIPPED' WHERE order_id IN (SELECT order_id FROM orders ORDER BY order_id LIMIT 5 OFFSET 3);
		-- a deleted order and, by cascade, its lines
		DELETE FROM orders WHERE order_id = (SELECT max(order_id) FROM orders WHERE order_id < 100000);
		-- an address moved to another customer
		UPDATE addresses SET customer_id = 2, label = 'moved' WHERE address_id = (SELECT max(address_id) FROM addresses WHERE customer_id = 3);
		-- a primary key change
		UPDATE order_items SET book_id = 2 WHERE (order_id, book_id) = (SELECT order_id, book_id FROM order_items WHERE book_id = 1 AND order_id NOT IN (SELECT order_id FROM order_items WHERE book_id = 2) LIMIT 1);
	`)
	res, err = engine.Sync(ctx, e.cfg)
	if err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if res.Slot.SlotCreated || res.Load != nil || !res.CaughtUp || res.Final.Changes == 0 {
		t.Fatalf("second sync: %+v", res)
	}
	t.Logf("second sync: %+v", res.Final)
	if res.Final.Fanout.Max < 2 || res.Final.ItemsDeleted == 0 {
		t.Errorf("fan-out %+v, deletes %d: want copies fanned out and deletes", res.Final.Fanout, res.Final.ItemsDeleted)
	}
	e.verify(t)
}

// TestSyncStopsOnWhatItCannotApplySafely: a change that fans out over
// MaxFanout, and a TRUNCATE without OnTruncateDelete, stop the sync with
// an error naming them, before their transaction; the next sync, told to
// go on, applies them from there.
func TestSyncStopsOnWhatItCannotApplySafely(t *testing.T) {
	e := newSyncEnv(t, 20)
	ctx := t.Context()
	e.exec(t, `ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL`)
	if _, err := engine.Sync(ctx, e.cfg); err != nil {
		t.Fatalf("first sync: %v", err)
	}

	// The author of the most ordered books: renaming them re-renders
	// every book of theirs and every order line of those books.
	var author, lines int
	err := e.conn.QueryRow(ctx, `SELECT b.author_id, count(*) FROM order_items i JOIN books b USING (book_id)
		GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`).Scan(&author, &lines)
	if err != nil {
		t.Fatal(err)
	}
	e.exec(t, fmt.Sprintf(`UPDATE authors SET name = 'Famous Author' WHERE author_id = %d`, author))
	bounded := e.cfg
	bounded.MaxFanout = 5
	_, err = engine.Sync(ctx, bounded)
	var fe *affect.FanoutError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), fmt.Sprintf("update of public.authors (author_id=%d) affects more than 5 items", author)) ||
		!strings.Contains(err.Error(), "OrderLine copies from public.authors") {
		t.Fatalf("sync with MaxFanout 5: %v", err)
	}
	bounded.MaxFanout = -1
	res, err := engine.Sync(ctx, bounded)
	if err != nil {
		t.Fatalf("sync without a bound: %v", err)
	}
	if res.Final.Fanout.Max < int64(lines) || !strings.Contains(res.Final.Fanout.MaxChange, "public.authors") {
		t.Errorf("fan-out %+v; want at least the %d order lines of author %d", res.Final.Fanout, lines, author)
	}
	e.verify(t)

	// A TRUNCATE, and new lines in the same transaction.
	e.exec(t, `BEGIN; TRUNCATE order_items;
		INSERT INTO order_items SELECT order_id, 1, 1, 9.99 FROM orders ORDER BY order_id LIMIT 3; COMMIT`)
	_, err = engine.Sync(ctx, e.cfg)
	if !errors.Is(err, engine.ErrTruncate) || !strings.Contains(err.Error(), "TRUNCATE of public.order_items") || !strings.Contains(err.Error(), "--on-truncate delete") {
		t.Fatalf("sync over a TRUNCATE: %v", err)
	}
	e.cfg.OnTruncate = engine.OnTruncateDelete
	res, err = engine.Sync(ctx, e.cfg)
	if err != nil {
		t.Fatalf("sync with OnTruncate delete: %v", err)
	}
	if res.Final.ItemsDeleted < int64(lines) {
		t.Errorf("deleted %d items; want every order line", res.Final.ItemsDeleted)
	}
	e.verify(t)
}

const whereSchema = `
CREATE TABLE regions (region_id int PRIMARY KEY, name text NOT NULL, active boolean NOT NULL);
CREATE TABLE jobs (job_id int PRIMARY KEY, region_id int REFERENCES regions, title text NOT NULL, end_date date);
INSERT INTO regions VALUES (1, 'north', true), (2, 'south', true);
INSERT INTO jobs SELECT i, 1 + i % 2, 'job ' || i, CASE WHEN i % 3 = 0 THEN date '2020-01-01' END FROM generate_series(1, 30) i;
`

const whereMapping = `table: Jobs
keys: { partition: PK, sort: SK }
entities:
  CurrentJob:                    # only open jobs of active regions
    from: jobs
    where: "end_date IS NULL AND regions.active"
    key: { pk: "JOB#{job_id}", sk: "CURRENT" }
    attributes: { title: title }
    copy:
      - from: regions
        join: { region_id: region_id }
        attributes: { region: name }
`

// TestSyncFollowsWhereClauses: a row that an entity's where clause stops
// accepting, by a change of its own columns or of the parent row it
// copies from, loses its item; one it starts accepting gains it.
func TestSyncFollowsWhereClauses(t *testing.T) {
	pg := migratetest.PostgresURL(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, whereSchema); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("jobs.yaml", []byte(whereMapping))
	if err != nil {
		t.Fatal(err)
	}
	e := &syncEnv{pg: pg, conn: conn}
	e.cfg = engine.SyncConfig{
		Mapping: m, Postgres: pg, DynamoDB: migratetest.DynamoDBClient(t, migratetest.DynamoDBEndpoint(t)),
		Table: migratetest.TableName(t, "jobs"), CreateTable: true, StateFile: filepath.Join(t.TempDir(), "state.json"),
		UntilCaughtUp: true,
	}
	t.Cleanup(func() {
		c := e.cfg.WithDefaults()
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: pg, Slot: c.Slot, Publication: c.Publication}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	if _, err := engine.Sync(ctx, e.cfg); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	e.verify(t)
	e.exec(t, `
		UPDATE jobs SET end_date = date '2024-01-01' WHERE job_id = 1;  -- closed: its item goes
		UPDATE jobs SET end_date = NULL WHERE job_id = 3;               -- reopened: its item comes
		UPDATE regions SET active = false WHERE region_id = 2;          -- every open job of the south goes
	`)
	res, err := engine.Sync(ctx, e.cfg)
	if err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if res.Final.ItemsDeleted < 9 {
		t.Errorf("%d items deleted; want the closed job's and the south's open jobs'", res.Final.ItemsDeleted)
	}
	e.verify(t)
	e.exec(t, `UPDATE regions SET active = true WHERE region_id = 2`)
	if _, err := engine.Sync(ctx, e.cfg); err != nil {
		t.Fatalf("third sync: %v", err)
	}
	e.verify(t)
}

// TestSyncFollowsAddedColumns: columns added to a table an entity reads
// with attributes: "*" (Author) or embeds with "*" (addresses in
// Customer) are picked up, existing rows' default values included; a
// column added to a table mapped with an explicit list changes nothing;
// the table ends identical to the source. A mapped column changing type
// then stops the sync, naming it, also on the next start.
func TestSyncFollowsAddedColumns(t *testing.T) {
	e := newSyncEnv(t, 10)
	ctx := t.Context()
	e.exec(t, `ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL`)
	if _, err := engine.Sync(ctx, e.cfg); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	e.exec(t, `
		ALTER TABLE authors ADD COLUMN website text DEFAULT 'https://example.org';
		ALTER TABLE addresses ADD COLUMN floor int;
		ALTER TABLE books ADD COLUMN stock int NOT NULL DEFAULT 7;
		UPDATE authors SET name = name || '.' WHERE author_id = 1;
		UPDATE addresses SET floor = 3 WHERE address_id = (SELECT min(address_id) FROM addresses);
	`)
	res, err := engine.Sync(ctx, e.cfg)
	if err != nil {
		t.Fatalf("sync after ADD COLUMN: %v", err)
	}
	t.Logf("sync after ADD COLUMN: %+v", res.Final)
	e.verify(t)

	e.exec(t, `ALTER TABLE authors ADD COLUMN rank int DEFAULT 1`)
	e.exec(t, `ALTER TABLE books ALTER COLUMN price TYPE numeric(12,3)`)
	e.exec(t, `UPDATE books SET title = title || '.' WHERE book_id = 1`)
	for range 2 {
		_, err = engine.Sync(ctx, e.cfg)
		if !errors.Is(err, engine.ErrSchemaChanged) || !strings.Contains(err.Error(), "table public.books: column price changed type numeric(10,2) → numeric(12,3), which the mapping reads") ||
			!strings.Contains(err.Error(), "migrate sync --drop") {
			t.Fatalf("sync after ALTER COLUMN TYPE: %v", err)
		}
	}
	t.Log(err)
}
