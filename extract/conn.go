package extract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgdynamo/migrate/internal/pgurl"
)

// readBuffer is how much of the server's stream one read takes.
const readBuffer = 256 << 10

// ErrBadURL is wrapped when the source URL cannot be parsed: the caller's
// mistake, found before any connection is tried.
var ErrBadURL = errors.New("extract: bad postgres URL")

// Connect opens a connection as the URL says (libpq's settings, the
// environment's PG* variables and service files, as pgx reads them); a URL
// without connect_timeout gets pgurl.DefaultConnectTimeout rather than no
// bound at all. Errors never contain the password: pgx redacts it from
// connection errors.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := connConfig(url)
	if err != nil {
		return nil, err
	}
	// pgx reads at most 8 KB a call; a large table streams faster when
	// each call takes what the socket holds (A/B, the read pass: about 5%
	// less time).
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBuffer), w)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return conn, nil
}

// connConfig parses url into the configuration Connect uses.
func connConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	pgurl.ApplyDefaults(&cfg.Config, url)
	return cfg, nil
}

// querier is what extraction needs of a connection; *pgx.Conn, pgx.Tx and
// *pgxpool.Pool all fit.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Snapshot is a read-only, repeatable-read transaction: every read through
// it sees the database as of its first query.
type Snapshot struct {
	tx        pgx.Tx
	began     time.Time
	overrides []Setting
}

// Setting is a session setting of the user's (server configuration,
// ALTER DATABASE or ROLE ... SET, the URL's options) that the snapshot's
// transaction overrides for itself.
type Setting struct {
	Name string `json:"name"`
	// Value is the user's value, as SHOW prints it ("5s").
	Value string `json:"value"`
	// Source is where it came from, as pg_settings says: "configuration
	// file", "database", "user", "database user", "client", ...
	Source string `json:"source"`
}

// snapshotTimeouts end a session or transaction that is idle, or a
// statement that runs, for longer than the user's value. The reader waits
// for the writer inside its transaction (idle while the writer drains what
// the server already sent, or with a statement open while the socket is
// full), for as long as the writer needs: no value fits every run, so the
// snapshot's transaction turns them off for itself (SET LOCAL), and says
// so (Overrides). transaction_timeout exists from PostgreSQL 17 on.
var snapshotTimeouts = []string{"idle_in_transaction_session_timeout", "statement_timeout", "transaction_timeout"}

// Begin starts the snapshot transaction.
func Begin(ctx context.Context, conn *pgx.Conn) (*Snapshot, error) {
	return BeginAt(ctx, conn, "")
}

// BeginAt starts a snapshot transaction that sees the database as the
// exported snapshot id does (SET TRANSACTION SNAPSHOT, what pg_dump -j
// does), so that several connections read one consistent state; the
// transaction that exported it must still be open. An empty id starts a
// new snapshot, as Begin does.
func BeginAt(ctx context.Context, conn *pgx.Conn, id string) (*Snapshot, error) {
	if id != "" && !snapshotID.MatchString(id) {
		return nil, fmt.Errorf("begin snapshot: %q is not a snapshot id such as 00000003-0000001B-1", id)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin snapshot: %w", err)
	}
	if id != "" {
		// A statement parameter is not allowed here; the id is checked
		// to be hex digits and dashes above.
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+id+"'"); err != nil {
			_ = tx.Rollback(ctx)
			return nil, fmt.Errorf("begin snapshot: join snapshot %s: %w", id, err)
		}
	}
	began := time.Now()
	overrides, err := disableTimeouts(ctx, tx)
	if err != nil {
		_ = tx.Rollback(ctx)
		return nil, fmt.Errorf("begin snapshot: %w", err)
	}
	// Pin the settings that shape text output, so that values read as text
	// parse the same on every server: ISO dates, UTC, exact floats.
	for _, set := range []string{
		"SET LOCAL DateStyle = 'ISO, YMD'",
		"SET LOCAL TimeZone = 'UTC'",
		"SET LOCAL IntervalStyle = 'iso_8601'",
		"SET LOCAL extra_float_digits = 1",
		"SET LOCAL bytea_output = 'hex'", // an embedded bytea[] element's text
	} {
		if _, err := tx.Exec(ctx, set); err != nil {
			_ = tx.Rollback(ctx)
			return nil, fmt.Errorf("begin snapshot: %s: %w", set, err)
		}
	}
	return &Snapshot{tx: tx, began: began, overrides: overrides}, nil
}

// disableTimeouts turns off, for the transaction only, the snapshotTimeouts
// the user set, and returns them. The names are passed as values, never
// pasted into SQL.
func disableTimeouts(ctx context.Context, tx pgx.Tx) ([]Setting, error) {
	rows, err := tx.Query(ctx, `SELECT name, current_setting(name), source FROM pg_catalog.pg_settings
		WHERE name = ANY($1) AND setting <> '0' ORDER BY name`, snapshotTimeouts)
	if err != nil {
		return nil, fmt.Errorf("read timeouts: %w", err)
	}
	set, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Setting])
	if err != nil {
		return nil, fmt.Errorf("read timeouts: %w", err)
	}
	for _, s := range set {
		if _, err := tx.Exec(ctx, "SELECT pg_catalog.set_config($1, '0', true)", s.Name); err != nil {
			return nil, fmt.Errorf("turn off %s for the snapshot: %w", s.Name, err)
		}
	}
	return set, nil
}

// Overrides lists the user's timeouts the snapshot's transaction turned
// off for itself; empty when none was set.
func (s *Snapshot) Overrides() []Setting { return s.overrides }

// Began is when the snapshot's transaction began, by the local clock.
func (s *Snapshot) Began() time.Time { return s.began }

// Close ends the transaction. It only read, so it is rolled back.
func (s *Snapshot) Close(ctx context.Context) error {
	return s.tx.Rollback(ctx)
}

// Catalog reads the catalog of the given schemas inside the snapshot.
func (s *Snapshot) Catalog(ctx context.Context, schemas []string) (*Catalog, error) {
	return ReadCatalog(ctx, s.tx, schemas)
}

// Query runs a query inside the snapshot, so that a caller's own SQL sees
// the same data as the rows read through it. The transaction is read
// only: a statement that writes fails.
func (s *Snapshot) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return s.tx.Query(ctx, sql, args...)
}
