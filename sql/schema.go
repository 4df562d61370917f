// Package sql holds the schema of the sample bookstore database (customers,
// addresses, authors, books, orders, order_items) as golang-migrate migrations
// embedded in the binary, and applies or reverts them with [Up] and [Down].
//
// The bookstore is the source side of the project's examples and integration
// tests; internal/seed fills it with deterministic data. Its migration history
// lives in its own table, [MigrationsTable], so that it never mixes with a
// database's own golang-migrate history in schema_migrations.
package sql

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MigrationsTable is where golang-migrate records the sample's version,
// instead of its default schema_migrations: a user who tries the sample in
// a database managed with golang-migrate keeps their own history intact.
const MigrationsTable = "migrate_sample_schema_migrations"

// Up applies every migration not yet applied to the database at databaseURL,
// a postgres:// or postgresql:// URL. A database already up to date is not an
// error.
//
// golang-migrate takes no context: ctx is checked before connecting and, once
// migrating, its cancellation stops the run after the migration in progress.
func Up(ctx context.Context, databaseURL string) error {
	return run(ctx, "up", databaseURL, func(m *migrate.Migrate) error {
		if _, _, err := m.Version(); errors.Is(err, migrate.ErrNilVersion) {
			exists, err := bookstoreExists(ctx, databaseURL)
			if err != nil {
				return err
			}
			if exists {
				return ErrUntracked
			}
		}
		return m.Up()
	})
}

// ErrUntracked means the bookstore's tables exist without a version in
// MigrationsTable: an older migrate recorded the sample's history in
// schema_migrations. Up stops rather than fail halfway through creating
// what exists.
var ErrUntracked = errors.New("the bookstore tables exist, but " + MigrationsTable + ` has no version for them (an older migrate recorded it in schema_migrations): drop them ("DROP TABLE customers, addresses, authors, books, orders, order_items CASCADE; DROP TYPE order_status") or use a fresh database`)

// bookstoreExists reports whether the sample's first table exists where
// golang-migrate would create it (the connection's current schema).
func bookstoreExists(ctx context.Context, databaseURL string) (bool, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	err = conn.QueryRow(ctx, `SELECT to_regclass(quote_ident(current_schema()) || '.customers') IS NOT NULL`).Scan(&exists)
	return exists, err
}

// Down reverts every applied migration, dropping the bookstore's tables and
// types. The version table, MigrationsTable, stays. A database with nothing
// to revert is not an error.
func Down(ctx context.Context, databaseURL string) error {
	return run(ctx, "down", databaseURL, (*migrate.Migrate).Down)
}

func run(ctx context.Context, op, databaseURL string, do func(*migrate.Migrate) error) (err error) {
	driverURL, password, err := pgx5URL(databaseURL)
	if err != nil {
		return fmt.Errorf("schema %s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("schema %s: %w", op, err)
	}
	// Everything below comes back from golang-migrate, which has the URL; make
	// sure none of it carries the password.
	defer func() { err = redact(err, password) }()

	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("schema %s: read embedded migrations: %w", op, err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL)
	if err != nil {
		return fmt.Errorf("schema %s: %w", op, err)
	}
	defer func() {
		srcErr, dbErr := m.Close()
		if err == nil {
			err = errors.Join(srcErr, dbErr)
			if err != nil {
				err = fmt.Errorf("schema %s: close: %w", op, err)
			}
		}
	}()

	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()

	err = do(m)
	switch {
	case errors.Is(err, migrate.ErrNoChange):
		err = nil
	case err != nil:
		return fmt.Errorf("schema %s: %w", op, err)
	}
	// A graceful stop makes golang-migrate return nil with work left undone.
	if ctx.Err() != nil {
		return fmt.Errorf("schema %s: stopped before completion: %w", op, context.Cause(ctx))
	}
	return nil
}

// pgx5URL turns the user's postgres:// or postgresql:// URL into the pgx5://
// URL golang-migrate's pgx v5 driver is registered under, naming the sample's
// own migrations table. It also returns the password so that errors can be
// checked for it.
func pgx5URL(databaseURL string) (driverURL, password string, err error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		// url.Error repeats the whole URL, password included; keep only the
		// reason, and not even that for a bad escape, which quotes the URL.
		var ee url.EscapeError
		var ue *url.Error
		switch {
		case errors.As(err, &ee):
			return "", "", errors.New("database URL: invalid %-escape")
		case errors.As(err, &ue):
			return "", "", fmt.Errorf("database URL: %w", ue.Err)
		}
		return "", "", errors.New("database URL: invalid")
	}
	switch u.Scheme {
	case "postgres", "postgresql", "pgx5":
	default:
		return "", "", fmt.Errorf("database URL: scheme %q, want postgres:// or postgresql://", u.Scheme)
	}
	u.Scheme = "pgx5"
	q := u.Query()
	q.Set("x-migrations-table", MigrationsTable)
	u.RawQuery = q.Encode()
	password, _ = u.User.Password()
	return u.String(), password, nil
}

// redact is a last guard: pgx already keeps passwords out of its errors, but
// errors from other layers might quote the URL.
func redact(err error, password string) error {
	if err == nil || password == "" {
		return err
	}
	msg := err.Error()
	secrets := []string{password, url.QueryEscape(password), url.PathEscape(password)}
	if !containsAny(msg, secrets) {
		return err
	}
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	// The chain is dropped on purpose: unwrapping would give the secret back.
	return errors.New(msg)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
