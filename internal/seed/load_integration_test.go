package seed_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	schema "github.com/pgdynamo/migrate/sql"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

var _ seed.Beginner = (*pgxpool.Pool)(nil)

// setup returns a connection to a fresh database with the bookstore schema.
func setup(t testing.TB) *pgx.Conn {
	t.Helper()
	url := migratetest.PostgresURL(t)
	if err := schema.Up(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// orderBy is each table's primary key, for checksums.
var orderBy = map[string]string{
	"customers":   "customer_id",
	"addresses":   "address_id",
	"authors":     "author_id",
	"books":       "book_id",
	"orders":      "order_id",
	"order_items": "order_id, book_id",
}

// checksums returns every table's row count and an md5 of its rows' text
// form, in primary key order.
func checksums(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table, key := range orderBy {
		var sum string
		q := fmt.Sprintf(`SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, E'\n' ORDER BY %s)), '') FROM %s t`,
			key, pgx.Identifier{table}.Sanitize())
		if err := conn.QueryRow(t.Context(), q).Scan(&sum); err != nil {
			t.Fatalf("checksum %s: %v", table, err)
		}
		out[table] = sum
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := seed.Config{Scale: 200, Seed: 11}
	conn := setup(t)

	counts, err := seed.Load(ctx, conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %+v", counts)

	// The counts are the generator's and the tables'.
	g, err := seed.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := seed.Counts{
		Customers: count(g.Customers()), Addresses: count(g.Addresses()), Authors: count(g.Authors()),
		Books: count(g.Books()), Orders: count(g.Orders()), OrderItems: count(g.OrderItems()),
	}
	if counts != want {
		t.Fatalf("Load counts %+v, generator %+v", counts, want)
	}
	for table, n := range counts.All() {
		var got int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("%s: %d rows, Load reported %d", table, got, n)
		}
	}

	// Properties that only the database can confirm: values survive the
	// round trip exactly, and the data is as skewed as promised.
	for _, c := range []struct{ name, query string }{
		{"customer 1's name", `SELECT name = 'Zoë Ångström' FROM customers WHERE customer_id = 1`},
		{"customer 3's name", `SELECT name = '李小龙' FROM customers WHERE customer_id = 3`},
		{"prices 0.10 and 1234567.89", `SELECT count(*) = 2 FROM books WHERE price::text IN ('0.10', '1234567.89')`},
		{"exact jsonb decimal", `SELECT metadata->>'list_price' = '19.990' FROM books WHERE book_id = 5`},
		{"jsonb integer beyond int64", `SELECT metadata->'sku' = '12345678901234567890'::jsonb FROM books WHERE book_id = 5`},
		{"jsonb nested object", `SELECT metadata #>> '{dimensions,height_cm}' = '21.0' FROM books WHERE book_id = 5`},
		{"title with #", `SELECT bool_or(title LIKE '%#%') FROM books`},
		{"tag with a space", `SELECT bool_or(EXISTS (SELECT FROM unnest(tags) tag WHERE tag LIKE '% %')) FROM books`},
		{"empty tags", `SELECT bool_or(tags = '{}') FROM books`},
		{"email with +", `SELECT bool_or(email LIKE '%+%') FROM customers`},
		{"NULLs", `SELECT bool_or(email IS NULL) AND bool_or(phone IS NULL) FROM customers`},
		{"NULL metadata and dates", `SELECT bool_or(metadata IS NULL) AND bool_or(published IS NULL) FROM books`},
		{"orders without shipping address", `SELECT bool_or(shipping_address_id IS NULL) FROM orders`},
		{"microseconds", `SELECT bool_or(extract(microseconds FROM placed_at)::bigint % 1000 <> 0) FROM orders`},
		{"whole seconds", `SELECT bool_or(date_trunc('second', placed_at) = placed_at) FROM orders`},
		{"OPEN orders", `SELECT count(*) FILTER (WHERE status = 'OPEN') * 100 >= count(*) * 15 FROM orders`},
		{"about 20% of customers without orders", `
			SELECT count(*) BETWEEN 0.15 * 200 AND 0.3 * 200 FROM customers c
			WHERE NOT EXISTS (SELECT FROM orders o WHERE o.customer_id = c.customer_id)`},
		{"1% of customers hold about 20% of orders", `
			SELECT sum(n) * 100 >= (SELECT count(*) FROM orders) * 15
			FROM (SELECT count(*) n FROM orders GROUP BY customer_id ORDER BY n DESC LIMIT 2) top`},
		{"totals are the sum of the items", `
			SELECT bool_and(o.total = i.sum) FROM orders o
			JOIN (SELECT order_id, sum(quantity * unit_price) sum FROM order_items GROUP BY order_id) i USING (order_id)`},
		{"shipping addresses belong to the customer", `
			SELECT bool_and(a.customer_id = o.customer_id) FROM orders o JOIN addresses a ON a.address_id = o.shipping_address_id`},
		{"1..5 addresses per customer", `
			SELECT min(n) >= 1 AND max(n) <= 5 AND count(*) = 200
			FROM (SELECT count(a.address_id) n FROM customers c LEFT JOIN addresses a USING (customer_id) GROUP BY c.customer_id) x`},
	} {
		var ok bool
		if err := conn.QueryRow(ctx, c.query).Scan(&ok); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if !ok {
			t.Errorf("%s: not so", c.name)
		}
	}

	// Same seed, another database: the same rows, byte for byte.
	first := checksums(t, conn)
	other := setup(t)
	if _, err := seed.Load(ctx, other, cfg); err != nil {
		t.Fatal(err)
	}
	if second := checksums(t, other); fmt.Sprint(second) != fmt.Sprint(first) {
		t.Fatalf("same seed, different data:\n%v\n%v", first, second)
	}

	// A second load is refused unless told to replace, and replacing gives
	// the same rows again.
	if _, err := seed.Load(ctx, other, cfg); !errors.Is(err, seed.ErrNotEmpty) {
		t.Fatalf("Load into a seeded database: %v, want ErrNotEmpty", err)
	}
	if _, err := seed.Load(ctx, other, seed.Config{Scale: 150, Seed: 12, Replace: true}); err != nil {
		t.Fatal(err)
	}
	if sums := checksums(t, other); sums["customers"] == first["customers"] {
		t.Fatal("replacing with another seed left customers unchanged")
	}
	cfg.Replace = true
	if _, err := seed.Load(ctx, other, cfg); err != nil {
		t.Fatal(err)
	}
	if again := checksums(t, other); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("replace with the same seed, different data:\n%v\n%v", first, again)
	}

	// The identity sequence was moved past the explicit ids.
	var id int64
	if err := other.QueryRow(ctx, `INSERT INTO customers (name) VALUES ('New') RETURNING customer_id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != 201 {
		t.Errorf("new customer got id %d, want 201", id)
	}

	// Down removes everything Load filled.
	if err := schema.Down(ctx, other.Config().ConnString()); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = ANY($1) AND relkind = 'r'`,
		[]string{"customers", "addresses", "authors", "books", "orders", "order_items"}).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d bookstore tables left after Down", left)
	}
}

func TestLoadWithoutSchema(t *testing.T) {
	t.Parallel()
	conn, err := pgx.Connect(t.Context(), migratetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := seed.Load(t.Context(), conn, seed.Config{Scale: 10}); !errors.Is(err, seed.ErrNoSchema) {
		t.Fatalf("Load without schema: %v, want ErrNoSchema", err)
	}
}

func TestLoadCancelled(t *testing.T) {
	t.Parallel()
	conn := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := seed.Load(ctx, conn, seed.Config{Scale: 50_000})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Load with an expiring context: %v, want context.DeadlineExceeded", err)
	}
	// Nothing was committed.
	check, err := pgx.Connect(t.Context(), conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(context.Background())
	var n int64
	if err := check.QueryRow(t.Context(), `SELECT count(*) FROM customers`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d customers after a cancelled load", n)
	}
}

func count[T any](rows iter.Seq[T]) int64 {
	var n int64
	for range rows {
		n++
	}
	return n
}

// BenchmarkLoad loads about a million rows per iteration (scale 55000);
// -benchtime=1x runs it once:
//
//	go test ./internal/seed -run '^$' -bench Load -benchtime 1x
func BenchmarkLoad(b *testing.B) {
	conn := setup(b)
	cfg := seed.Config{Scale: 55_000, Replace: true}
	var rows int64
	for b.Loop() {
		start := time.Now()
		counts, err := seed.Load(b.Context(), conn, cfg)
		if err != nil {
			b.Fatal(err)
		}
		rows = counts.Total()
		b.Logf("%d rows in %.2fs: %+v", rows, time.Since(start).Seconds(), counts)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
