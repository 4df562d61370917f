package sql

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

func TestPgx5URL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "postgres://u:p@h:5432/db?sslmode=disable", want: "pgx5://u:p@h:5432/db?sslmode=disable&x-migrations-table=migrate_sample_schema_migrations"},
		{in: "postgresql://h/db", want: "pgx5://h/db?x-migrations-table=migrate_sample_schema_migrations"},
		{in: "pgx5://h/db", want: "pgx5://h/db?x-migrations-table=migrate_sample_schema_migrations"},
		// A table the user named is replaced: the sample's history is its own.
		{in: "postgres://h/db?x-migrations-table=schema_migrations", want: "pgx5://h/db?x-migrations-table=migrate_sample_schema_migrations"},
		{in: "mysql://u:s3cret@h/db", wantErr: `database URL: scheme "mysql", want postgres:// or postgresql://`},
		{in: "host=h dbname=db", wantErr: `database URL: scheme "", want postgres:// or postgresql://`},
		{in: "postgres://u:s3cret@h:port/db", wantErr: `database URL: invalid port ":port" after host`},
		{in: "postgres://u:s3%zzcret@h/db", wantErr: "database URL: invalid %-escape"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, _, err := pgx5URL(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("pgx5URL(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("pgx5URL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestErrorsHideThePassword needs no server: every URL fails before or while
// connecting.
func TestErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	const password = "s3cret-pw"
	for _, url := range []string{
		"postgres://u:" + password + "@127.0.0.1:1/db?connect_timeout=5",
		"postgres://u:" + password + "@127.0.0.1:1/db?sslmode=bogus",
		"postgres://u:" + password + "@h:port/db",
		"postgres://u:" + password + "%zz@h/db",
		"postgres://u:" + password + "@[::1/db",
	} {
		for name, f := range map[string]func(context.Context, string) error{"Up": Up, "Down": Down} {
			err := f(t.Context(), url)
			if err == nil {
				t.Fatalf("%s(%q) succeeded", name, url)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("%s error shows the password: %v", name, err)
			}
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	err := redact(errors.New(`open "pgx5://u:p%40ss@h/db": p@ss`), "p@ss")
	if got, want := err.Error(), `open "pgx5://u:xxxxx@h/db": xxxxx`; got != want {
		t.Fatalf("redact = %q, want %q", got, want)
	}
	inner := errors.New("no secret here")
	if got := redact(inner, "p@ss"); got != inner {
		t.Fatalf("redact changed an error without the password: %v", got)
	}
}

func TestUpCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Up(ctx, "postgres://u:p@127.0.0.1:1/db"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Up with a cancelled context: %v, want context.Canceled", err)
	}
}

// Tables made before the sample kept its own history (or by hand) are not
// migrated over: Up says what to do.
func TestUpOverUntrackedTables(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE customers (customer_id bigint PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := Up(ctx, url); !errors.Is(err, ErrUntracked) {
		t.Fatalf("Up over an untracked customers table: %v, want ErrUntracked", err)
	}
}

var bookstoreTables = []string{"customers", "addresses", "authors", "books", "orders", "order_items"}

func TestUpDown(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	tables := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)`,
			bookstoreTables).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The user's own golang-migrate history, which the sample must not touch.
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL);
		INSERT INTO schema_migrations VALUES (20240101120000, false)`); err != nil {
		t.Fatal(err)
	}
	userHistory := func(when string) {
		t.Helper()
		var version int64
		var dirty bool
		if err := conn.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil || version != 20240101120000 || dirty {
			t.Fatalf("%s: the user's schema_migrations holds %d (dirty %v), %v; want 20240101120000, untouched", when, version, dirty, err)
		}
	}
	sampleVersion := func() (v int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+pgx.Identifier{MigrationsTable}.Sanitize()).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	for range 2 { // the second time there is nothing to do, which is success
		if err := Up(ctx, url); err != nil {
			t.Fatal(err)
		}
	}
	if n := tables(); n != len(bookstoreTables) {
		t.Fatalf("after Up: %d of %d tables", n, len(bookstoreTables))
	}
	userHistory("after Up")
	if v := sampleVersion(); v != 1 {
		t.Fatalf("after Up: %s holds version %d, want 1", MigrationsTable, v)
	}

	// The constraints are real.
	setup := `
		INSERT INTO customers (customer_id, name, created_at) VALUES (1, 'Zoë Ångström', now());
		INSERT INTO authors (author_id, name) VALUES (1, 'Ørjan Ødegård');
		INSERT INTO books (book_id, author_id, isbn, title, price) VALUES (1, 1, '9780306406157', 'C# in Depth', 0.10);
		INSERT INTO orders (order_id, customer_id, status, placed_at, total) VALUES (1, 1, 'OPEN', now(), 0.10)`
	if _, err := conn.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, sql, code string }{
		{"quantity > 0", `INSERT INTO order_items VALUES (1, 1, 0, 0.10)`, "23514"},
		{"order FK", `INSERT INTO order_items VALUES (2, 1, 1, 0.10)`, "23503"},
		{"book FK", `INSERT INTO order_items VALUES (1, 2, 1, 0.10)`, "23503"},
		{"status enum", `INSERT INTO orders VALUES (2, 1, 'LOST', now(), 0)`, "22P02"},
		{"unique label", `INSERT INTO addresses VALUES (1, 1, 'home', 'a', NULL, 'c', 'p', 'NO'), (2, 1, 'home', 'a', NULL, 'c', 'p', 'NO')`, "23505"},
		{"country code", `INSERT INTO addresses VALUES (1, 1, 'home', 'a', NULL, 'c', 'p', 'no')`, "23514"},
		{"tags not null", `INSERT INTO books VALUES (2, 1, '9780306406164', 't', 1, NULL, NULL)`, "23502"},
		{"unique isbn", `INSERT INTO books (book_id, author_id, isbn, title, price) VALUES (2, 1, '9780306406157', 't', 1)`, "23505"},
		{"price scale", `INSERT INTO books (book_id, author_id, isbn, title, price) VALUES (2, 1, '9780306406164', 't', 123456789.00)`, "22003"},
	} {
		_, err := conn.Exec(ctx, c.sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != c.code {
			t.Errorf("%s: %v, want SQLSTATE %s", c.name, err, c.code)
		}
	}

	for range 2 {
		if err := Down(ctx, url); err != nil {
			t.Fatal(err)
		}
	}
	if n := tables(); n != 0 {
		t.Fatalf("after Down: %d tables left", n)
	}
	userHistory("after Down")
	var types int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_type WHERE typname = 'order_status'`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if types != 0 {
		t.Fatal("after Down: type order_status left")
	}

	// And back up: the down migration left nothing in the way.
	if err := Up(ctx, url); err != nil {
		t.Fatal(err)
	}
	if n := tables(); n != len(bookstoreTables) {
		t.Fatalf("after Up again: %d of %d tables", n, len(bookstoreTables))
	}
}
