// Package seed fills the sample bookstore schema (see package sql) with
// deterministic, realistically skewed data: the same Seed and Scale give the
// same rows, byte for byte.
//
// [Generator] is the pure part: it yields typed rows per table, each row from
// its own random stream, so nothing is held in memory. [Load] streams those
// rows into PostgreSQL with COPY, in foreign-key order, in one transaction.
//
// The data is meant to be hostile to a naive single-table migration: 1% of
// customers place a fifth of all orders (and a fifth place none), a few
// authors write a large share of the books, many names are not ASCII, titles
// and address lines contain '#', tags contain spaces, arrays are empty, money
// goes from 0.10 to 1234567.89, timestamps have microseconds (some whole
// seconds, some ties), and jsonb holds decimals with trailing zeros and
// integers beyond int64. Every nullable column has NULLs.
package seed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultScale is the number of customers when Config.Scale is zero. At scale
// n there are about 18·n rows in all: 55000 gives about a million.
const DefaultScale = 1000

// MaxScale bounds Config.Scale (about 180 million rows), to catch typos.
const MaxScale = 10_000_000

// Config says what to generate and how to load it.
type Config struct {
	// Scale is the number of customers; the other tables are sized from it:
	// max(3, Scale/10) authors, max(10, Scale/2) books, 3.5·Scale orders with
	// 1..8 items each, 1..5 addresses per customer. Zero means DefaultScale.
	Scale int
	// Seed selects the data. Zero is a seed like any other.
	Seed int64
	// Replace makes Load truncate the six bookstore tables (restarting the
	// customer id sequence) before loading. Without it, Load refuses, with
	// ErrNotEmpty, to load into tables that already have rows.
	Replace bool
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.Scale = cmp.Or(c.Scale, DefaultScale)
	return c
}

// Validate reports a Config that cannot be loaded.
func (c Config) Validate() error {
	if c.Scale < 1 || c.Scale > MaxScale {
		return fmt.Errorf("seed: scale %d out of range 1..%d", c.Scale, MaxScale)
	}
	return nil
}

var (
	// ErrNotEmpty means a bookstore table already has rows and Config.Replace
	// is not set.
	ErrNotEmpty = errors.New("seed: tables not empty")
	// ErrNoSchema means the bookstore tables or types do not exist: the
	// schema migrations have not been applied.
	ErrNoSchema = errors.New("seed: bookstore schema not found")
)

// Counts are the rows loaded per table.
type Counts struct {
	Customers, Addresses, Authors, Books, Orders, OrderItems int64
}

// All yields table names and row counts in load (foreign-key) order.
func (c Counts) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for _, t := range copies {
			if !yield(t.table, *t.count(&c)) {
				return
			}
		}
	}
}

// Total is the number of rows in all tables.
func (c Counts) Total() int64 {
	return c.Customers + c.Addresses + c.Authors + c.Books + c.Orders + c.OrderItems
}

// Beginner starts a transaction. *pgx.Conn, *pgxpool.Pool and pgx.Tx (as a
// savepoint) satisfy it.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

var (
	_ Beginner = (*pgx.Conn)(nil)
	_ Beginner = pgx.Tx(nil)
)

// copySpec describes how one table is copied.
type copySpec struct {
	table   string
	columns []string
	rows    func(*Generator) iter.Seq[[]any]
	count   func(*Counts) *int64
}

// copies lists the tables in foreign-key order.
var copies = []copySpec{
	{
		table:   "customers",
		columns: []string{"customer_id", "name", "email", "phone", "created_at"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.Customers(), func(c Customer) []any {
				return []any{c.ID, c.Name, c.Email, c.Phone, c.CreatedAt}
			})
		},
		count: func(c *Counts) *int64 { return &c.Customers },
	},
	{
		table:   "addresses",
		columns: []string{"address_id", "customer_id", "label", "line1", "line2", "city", "postal_code", "country"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.Addresses(), func(a Address) []any {
				return []any{a.ID, a.CustomerID, a.Label, a.Line1, a.Line2, a.City, a.PostalCode, a.Country}
			})
		},
		count: func(c *Counts) *int64 { return &c.Addresses },
	},
	{
		table:   "authors",
		columns: []string{"author_id", "name", "birth_year", "country"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.Authors(), func(a Author) []any {
				return []any{a.ID, a.Name, a.BirthYear, a.Country}
			})
		},
		count: func(c *Counts) *int64 { return &c.Authors },
	},
	{
		table:   "books",
		columns: []string{"book_id", "author_id", "isbn", "title", "price", "published", "tags", "metadata"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.Books(), func(b Book) []any {
				return []any{b.ID, b.AuthorID, b.ISBN, b.Title, b.Price, b.Published, b.Tags, b.Metadata}
			})
		},
		count: func(c *Counts) *int64 { return &c.Books },
	},
	{
		table:   "orders",
		columns: []string{"order_id", "customer_id", "status", "placed_at", "total", "shipping_address_id"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.Orders(), func(o Order) []any {
				return []any{o.ID, o.CustomerID, o.Status, o.PlacedAt, o.Total, o.ShippingAddressID}
			})
		},
		count: func(c *Counts) *int64 { return &c.Orders },
	},
	{
		table:   "order_items",
		columns: []string{"order_id", "book_id", "quantity", "unit_price"},
		rows: func(g *Generator) iter.Seq[[]any] {
			return values(g.OrderItems(), func(it OrderItem) []any {
				return []any{it.OrderID, it.BookID, it.Quantity, it.UnitPrice}
			})
		},
		count: func(c *Counts) *int64 { return &c.OrderItems },
	},
}

func values[T any](rows iter.Seq[T], f func(T) []any) iter.Seq[[]any] {
	return func(yield func([]any) bool) {
		for r := range rows {
			if !yield(f(r)) {
				return
			}
		}
	}
}

// Load generates the bookstore for cfg and copies it into the database in one
// transaction: either every table is loaded or none is. The schema must exist
// (ErrNoSchema otherwise). Tables with rows are refused (ErrNotEmpty) unless
// cfg.Replace is set, in which case they are truncated first, in the same
// transaction. The tables are locked against writers for the duration, and
// analyzed at the end.
func Load(ctx context.Context, db Beginner, cfg Config) (_ Counts, err error) {
	// pgx may report a cancelled COPY as the connection it closed ("use of
	// closed network connection"): say that the context ended, too.
	defer func() {
		if ctxErr := ctx.Err(); err != nil && ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
	}()
	g, err := NewGenerator(cfg)
	if err != nil {
		return Counts{}, err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("seed: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // a no-op after Commit

	if err := prepare(ctx, tx, cfg.Replace); err != nil {
		return Counts{}, err
	}
	var counts Counts
	for _, c := range copies {
		n, err := copyRows(ctx, tx, c.table, c.columns, c.rows(g))
		if err != nil {
			return Counts{}, fmt.Errorf("seed: copy %s: %w", c.table, err)
		}
		*c.count(&counts) = n
	}
	// Explicit ids bypassed the identity; move it past them so that later
	// inserts without an id work.
	if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('customers', 'customer_id'), max(customer_id)) FROM customers`); err != nil {
		return Counts{}, fmt.Errorf("seed: advance customer_id sequence: %w", err)
	}
	// Fresh tables have no statistics until autovacuum gets to them; whoever
	// reads them next (the migration) wants good plans now.
	if _, err := tx.Exec(ctx, "ANALYZE "+tableList()); err != nil {
		return Counts{}, fmt.Errorf("seed: analyze: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Counts{}, fmt.Errorf("seed: commit: %w", err)
	}
	return counts, nil
}

// prepare locks the tables, empties them or checks that they are empty, and
// teaches the connection the order_status enum, which COPY's binary format
// needs.
func prepare(ctx context.Context, tx pgx.Tx, replace bool) error {
	// SHARE ROW EXCLUSIVE lets readers in but no writer and no second seed.
	if _, err := tx.Exec(ctx, "LOCK TABLE "+tableList()+" IN SHARE ROW EXCLUSIVE MODE"); err != nil {
		return schemaErr("lock tables", err)
	}
	if replace {
		if _, err := tx.Exec(ctx, "TRUNCATE "+tableList()+" RESTART IDENTITY"); err != nil {
			return fmt.Errorf("seed: truncate: %w", err)
		}
	} else {
		for _, c := range copies {
			var found bool
			q := "SELECT EXISTS (SELECT FROM " + pgx.Identifier{c.table}.Sanitize() + ")"
			if err := tx.QueryRow(ctx, q).Scan(&found); err != nil {
				return fmt.Errorf("seed: check %s is empty: %w", c.table, err)
			}
			if found {
				return fmt.Errorf("%w: %s has rows", ErrNotEmpty, c.table)
			}
		}
	}
	t, err := tx.Conn().LoadType(ctx, "order_status")
	if err != nil {
		return schemaErr("load type order_status", err)
	}
	tx.Conn().TypeMap().RegisterType(t)
	return nil
}

// schemaErr marks a missing table or type as ErrNoSchema.
func schemaErr(what string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "42704") { // undefined_table, undefined_object
		return fmt.Errorf("%w: %s: %w", ErrNoSchema, what, err)
	}
	return fmt.Errorf("seed: %s: %w", what, err)
}

// tableList is the bookstore tables, quoted and comma-separated.
func tableList() string {
	names := make([]string, len(copies))
	for i, c := range copies {
		names[i] = pgx.Identifier{c.table}.Sanitize()
	}
	return strings.Join(names, ", ")
}

// copyRows streams rows into table with COPY, pulling them one at a time.
func copyRows(ctx context.Context, tx pgx.Tx, table string, columns []string, rows iter.Seq[[]any]) (int64, error) {
	next, stop := iter.Pull(rows)
	defer stop()
	return tx.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
		row, ok := next()
		if !ok {
			return nil, nil
		}
		return row, nil
	}))
}
