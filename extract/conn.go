package extract

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

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
	return BeginIn(ctx, conn, "")
}

// snapshotID is the form of an exported snapshot's name
// (pg_export_snapshot, or CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT).
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f]+(-[0-9A-Fa-f]+)+$`)

// BeginIn starts the snapshot transaction inside an exported snapshot when
// id is not empty, so that it sees exactly what the exporting transaction
// sees: a replication slot's consistent point, or a snapshot shared by
// several readers. The exporter must still hold the snapshot.
func BeginIn(ctx context.Context, conn *pgx.Conn, id string) (*Snapshot, error) {
	if id != "" && !snapshotID.MatchString(id) {
		return nil, fmt.Errorf("begin snapshot: %q is not a snapshot name", id)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin snapshot: %w", err)
	}
	if id != "" {
		// A utility statement takes no parameters; the name was checked
		// against the only form PostgreSQL gives it.
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+id+"'"); err != nil {
			_ = tx.Rollback(ctx)
			return nil, fmt.Errorf("begin snapshot: import snapshot %s: %w", id, err)
		}
	}
	// Pin the settings that shape text output, so that values read as text
	// parse the same on every server: ISO dates, UTC, exact floats.
	for _, set := range []string{
		"SET LOCAL DateStyle = 'ISO, YMD'",
		"SET LOCAL TimeZone = 'UTC'",
		"SET LOCAL IntervalStyle = 'iso_8601'",
		"SET LOCAL extra_float_digits = 1",
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
