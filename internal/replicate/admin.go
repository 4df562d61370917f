package replicate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// LSN is a position in the write-ahead log.
type LSN = pglogrepl.LSN

// Plugin is the output plugin of the slots this package creates and reads.
const Plugin = "pgoutput"

// ErrNotLogical is wrapped when the server's wal_level does not allow
// logical replication.
var ErrNotLogical = errors.New("replicate: wal_level is not logical")

// name is what replication slot names may hold (PostgreSQL allows nothing
// else); publications are held to the same form so that both can appear
// in replication commands, which take no parameters.
var name = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// CheckName reports whether s can name a slot or a publication.
func CheckName(what, s string) error {
	if p := NameProblem(s); p != "" {
		return fmt.Errorf("replicate: %s %s", what, p)
	}
	return nil
}

// NameProblem says what is wrong with s as the name of a slot or a
// publication, after the word for what it names; "" when nothing is.
func NameProblem(s string) string {
	if !name.MatchString(s) {
		return fmt.Sprintf("name %q: use 1 to 63 lower-case letters, digits and underscores", s)
	}
	return ""
}

// DefaultName derives a slot or publication name from a target table
// name: "migrate_" and the name in lower case, every other character as
// '_', cut to 63 characters.
func DefaultName(table string) string {
	var b strings.Builder
	b.WriteString("migrate_")
	for _, r := range strings.ToLower(table) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// Table is a schema-qualified table name.
type Table struct{ Schema, Name string }

func (t Table) String() string { return t.Schema + "." + t.Name }

func (t Table) sanitized() string { return pgx.Identifier{t.Schema, t.Name}.Sanitize() }

// CheckWALLevel fails with ErrNotLogical unless the server can decode
// its WAL logically.
func CheckWALLevel(ctx context.Context, conn *pgx.Conn) error {
	var level string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return fmt.Errorf("replicate: read wal_level: %w", err)
	}
	if level != "logical" {
		return fmt.Errorf("%w: the server runs with wal_level = %s. Set wal_level = logical (postgresql.conf, ALTER SYSTEM SET wal_level = logical, or the server option -c wal_level=logical) and restart it", ErrNotLogical, level)
	}
	return nil
}

// CurrentLSN is the end of the last WAL record the server inserted: every
// transaction visible now committed at or before it.
//
// pg_current_wal_lsn (the write position) is not that: under
// synchronous_commit = off a transaction is visible as soon as its commit
// record is inserted, up to three wal_writer_delay before it is written,
// and a sync that compared with the write position declared itself caught
// up while such commits were still to come.
func CurrentLSN(ctx context.Context, conn *pgx.Conn) (LSN, error) {
	var s string
	var block, segment int64
	err := conn.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text,
		(SELECT setting::int8 FROM pg_catalog.pg_settings WHERE name = 'wal_block_size'),
		(SELECT setting::int8 FROM pg_catalog.pg_settings WHERE name = 'wal_segment_size')`).Scan(&s, &block, &segment)
	if err != nil {
		return 0, fmt.Errorf("replicate: current WAL position: %w", err)
	}
	lsn, err := pglogrepl.ParseLSN(s)
	if err != nil {
		return 0, fmt.Errorf("replicate: current WAL position %q: %w", s, err)
	}
	return recordEnd(lsn, uint64(block), uint64(segment)), nil
}

// The sizes of WAL page headers (MAXALIGNed XLogPageHeaderData and
// XLogLongPageHeaderData, the long one first in each segment).
const (
	shortPageHeader = 24
	longPageHeader  = 40
)

// recordEnd turns pg_current_wal_insert_lsn, which points past the page
// header when the last record ended at a page boundary, into the end of
// that record: the position a stream that read it reports.
func recordEnd(insert LSN, block, segment uint64) LSN {
	if block == 0 || segment == 0 {
		return insert
	}
	header := uint64(shortPageHeader)
	if uint64(insert)%segment < block {
		header = longPageHeader // a segment's first page
	}
	if uint64(insert)%block == header {
		return insert - LSN(header)
	}
	return insert
}

// EnsurePublication creates publication pub for tables, or checks that an
// existing one publishes inserts, updates, deletes and truncates of all of
// them, whole (no row filter, no column list). created says it was
// created now.
func EnsurePublication(ctx context.Context, conn *pgx.Conn, pub string, tables []Table) (created bool, err error) {
	if err := CheckName("publication", pub); err != nil {
		return false, err
	}
	var all, ins, upd, del, trunc bool
	err = conn.QueryRow(ctx, `SELECT puballtables, pubinsert, pubupdate, pubdelete, pubtruncate
		FROM pg_catalog.pg_publication WHERE pubname = $1`, pub).Scan(&all, &ins, &upd, &del, &trunc)
	if errors.Is(err, pgx.ErrNoRows) {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.sanitized()
		}
		stmt := "CREATE PUBLICATION " + pgx.Identifier{pub}.Sanitize() + " FOR TABLE " + strings.Join(names, ", ")
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return false, fmt.Errorf("replicate: %s: %w", stmt, err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	if !ins || !upd || !del || !trunc {
		return false, fmt.Errorf("replicate: publication %s does not publish every kind of change (insert %v, update %v, delete %v, truncate %v); use another one, or ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate')",
			pub, ins, upd, del, trunc, pgx.Identifier{pub}.Sanitize())
	}
	if all {
		return false, nil
	}
	published := map[Table]bool{}
	rows, err := conn.Query(ctx, `SELECT schemaname::text, tablename::text FROM pg_catalog.pg_publication_tables WHERE pubname = $1`, pub)
	if err != nil {
		return false, fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Schema, &t.Name); err != nil {
			rows.Close()
			return false, fmt.Errorf("replicate: read publication %s: %w", pub, err)
		}
		published[t] = true
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	var missing []string
	for _, t := range tables {
		if !published[t] {
			missing = append(missing, t.sanitized())
		}
	}
	if len(missing) > 0 {
		return false, fmt.Errorf("replicate: publication %s lacks %s; add them with ALTER PUBLICATION %s ADD TABLE %s",
			pub, strings.Join(missing, ", "), pgx.Identifier{pub}.Sanitize(), strings.Join(missing, ", "))
	}
	return false, checkWholeRows(ctx, conn, pub)
}

// checkWholeRows fails when the publication filters rows or columns
// (PostgreSQL 15 and later): the stream must see every row whole.
func checkWholeRows(ctx context.Context, conn *pgx.Conn, pub string) error {
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return fmt.Errorf("replicate: server version: %w", err)
	}
	if version < 150000 {
		return nil
	}
	var filtered []string
	rows, err := conn.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_catalog.pg_publication_tables
		WHERE pubname = $1 AND rowfilter IS NOT NULL`, pub)
	if err != nil {
		return fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	filtered, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	if len(filtered) > 0 {
		return fmt.Errorf("replicate: publication %s has a row filter on %s; the stream must see every row: use a publication without filters", pub, strings.Join(filtered, ", "))
	}
	return nil
}

// DropPublication drops pub if it exists; dropped says it existed.
func DropPublication(ctx context.Context, conn *pgx.Conn, pub string) (dropped bool, err error) {
	if err := CheckName("publication", pub); err != nil {
		return false, err
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = $1)", pub).Scan(&exists); err != nil {
		return false, fmt.Errorf("replicate: read publication %s: %w", pub, err)
	}
	if !exists {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{pub}.Sanitize()); err != nil {
		return false, fmt.Errorf("replicate: drop publication %s: %w", pub, err)
	}
	return true, nil
}

// Slot is a replication slot as pg_replication_slots shows it.
type Slot struct {
	Name, Plugin, Type, Database string
	Active                       bool
	ActivePID                    int32
	// ConfirmedFlush is where a stream resumes: every transaction that
	// committed before it was applied.
	ConfirmedFlush LSN
	// RestartLSN is the oldest WAL the server keeps for the slot.
	RestartLSN LSN
	// RetainedBytes is the WAL the slot holds back: from RestartLSN to the
	// server's current position.
	RetainedBytes int64
	// WALStatus is "reserved", "extended", "unreserved" or "lost" (lost:
	// the WAL it needs was removed; the slot is useless).
	WALStatus string
}

// ReadSlot returns the slot called name, or nil when there is none.
func ReadSlot(ctx context.Context, conn *pgx.Conn, slot string) (*Slot, error) {
	var s Slot
	var db, walStatus, plugin *string
	var pid *int32
	var confirmed, restart *string
	var retained *int64
	err := conn.QueryRow(ctx, `SELECT slot_name::text, plugin::text, slot_type, database::text, active, active_pid,
			confirmed_flush_lsn::text, restart_lsn::text,
			(pg_current_wal_lsn() - restart_lsn)::int8, wal_status
		FROM pg_catalog.pg_replication_slots WHERE slot_name = $1`, slot).
		Scan(&s.Name, &plugin, &s.Type, &db, &s.Active, &pid, &confirmed, &restart, &retained, &walStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replicate: read slot %s: %w", slot, err)
	}
	s.Plugin, s.Database, s.WALStatus = deref(plugin), deref(db), deref(walStatus)
	if pid != nil {
		s.ActivePID = *pid
	}
	if retained != nil {
		s.RetainedBytes = *retained
	}
	if confirmed != nil {
		if s.ConfirmedFlush, err = pglogrepl.ParseLSN(*confirmed); err != nil {
			return nil, err
		}
	}
	if restart != nil {
		if s.RestartLSN, err = pglogrepl.ParseLSN(*restart); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CheckSlot fails unless an existing slot can serve this database's
// stream: logical, pgoutput, on database db, not in use, WAL not lost.
func CheckSlot(s *Slot, db string) error {
	switch {
	case s.Type != "logical" || s.Plugin != Plugin:
		return fmt.Errorf("replicate: slot %s is a %s slot with plugin %q, not a logical slot with %s; choose another --slot", s.Name, s.Type, s.Plugin, Plugin)
	case s.Database != db:
		return fmt.Errorf("replicate: slot %s belongs to database %s, not %s; choose another --slot", s.Name, s.Database, db)
	case s.Active:
		return fmt.Errorf("replicate: slot %s is in use by server process %d (another sync running?)", s.Name, s.ActivePID)
	case s.WALStatus == "lost":
		return fmt.Errorf("replicate: slot %s has lost WAL it needs (max_slot_wal_keep_size?); drop it (sync --drop) and start over", s.Name)
	}
	return nil
}

// CreatedSlot is a slot just created, with the snapshot it exported: the
// database exactly at the slot's consistent point, importable (until the
// replication connection runs its next command) by an initial load.
type CreatedSlot struct {
	Name            string
	ConsistentPoint LSN
	Snapshot        string
}

// CreateSlot creates a logical slot with pgoutput on a replication
// connection and exports its snapshot. The connection must stay idle
// while the snapshot is imported and read.
func CreateSlot(ctx context.Context, repl *pgconn.PgConn, slot string) (*CreatedSlot, error) {
	if err := CheckName("slot", slot); err != nil {
		return nil, err
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, Plugin,
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return nil, fmt.Errorf("replicate: create slot %s: %w", slot, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return nil, fmt.Errorf("replicate: create slot %s: consistent point: %w", slot, err)
	}
	return &CreatedSlot{Name: res.SlotName, ConsistentPoint: lsn, Snapshot: res.SnapshotName}, nil
}

// DropSlot drops the slot if it exists; dropped says it existed. A slot in
// use by a running stream cannot be dropped: stop the stream first.
func DropSlot(ctx context.Context, conn *pgx.Conn, slot string) (dropped bool, err error) {
	s, err := ReadSlot(ctx, conn, slot)
	if err != nil || s == nil {
		return false, err
	}
	if s.Active {
		return false, fmt.Errorf("replicate: slot %s is in use by server process %d; stop that sync first (or SELECT pg_terminate_backend(%d))", slot, s.ActivePID, s.ActivePID)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot); err != nil {
		return false, fmt.Errorf("replicate: drop slot %s: %w", slot, err)
	}
	return true, nil
}

// SortTables sorts and deduplicates table names.
func SortTables(ts []Table) []Table {
	slices.SortFunc(ts, func(a, b Table) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(ts)
}
