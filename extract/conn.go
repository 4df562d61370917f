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
)

// readBuffer is how much of the server's stream one read takes.
const readBuffer = 256 << 10

// ErrBadURL is wrapped when the source URL cannot be parsed: the caller's
// mistake, found before any connection is tried.
var ErrBadURL = errors.New("extract: bad postgres URL")

// Connect opens a connection with a bounded connect timeout, so that an
// unreachable server fails within seconds. Errors never contain the
// password: pgx redacts it from connection errors.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 10*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
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

// querier is what extraction needs of a connection; *pgx.Conn, pgx.Tx and
// *pgxpool.Pool all fit.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Snapshot is a read-only, repeatable-read transaction: every read through
// it sees the database as of its first query.
type Snapshot struct {
	tx pgx.Tx
}

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
	return &Snapshot{tx: tx}, nil
}

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
