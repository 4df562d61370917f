package draft

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
)

// Source is what a draft is made from: one schema's tables with their
// columns, keys and foreign keys, and how many children a parent has at
// most in the data.
type Source struct {
	Database string // the database's name, the default target table name
	Schema   string
	// Catalog holds the schema's tables, views included; Tables names the
	// ones to draft, in name order.
	Catalog *mapping.Catalog
	Tables  []string
	// Ignored names tables left out on purpose (migration history), with
	// the reason, so that the draft can say so.
	Ignored map[string]string
	// ForeignKeys are the foreign keys between two tables of Tables, in
	// table and constraint name order.
	ForeignKeys []ForeignKey
}

// ForeignKey is a foreign key constraint: Columns of Table reference
// RefColumns of RefTable, pairwise.
type ForeignKey struct {
	Name       string
	Table      string
	Columns    []string
	RefTable   string
	RefColumns []string
	// MaxChildren is the largest number of Table rows that share one value
	// of Columns (rows with a NULL in Columns have no parent and do not
	// count): 0 for an empty table. Measured only when Measured is set.
	MaxChildren int64
	Measured    bool
}

// ReadConfig says what to read.
type ReadConfig struct {
	// Schema is the PostgreSQL schema to draft (default "public").
	Schema string
	// Tables restricts the draft to these tables of Schema; empty means
	// every table except migration-history tables. Foreign keys to tables
	// outside the set are ignored.
	Tables []string
}

// WithDefaults fills in the documented defaults.
func (c ReadConfig) WithDefaults() ReadConfig {
	if c.Schema == "" {
		c.Schema = mapping.DefaultSchema
	}
	return c
}

// historyTables are migration tools' bookkeeping, never worth migrating:
// golang-migrate's default and the sample bookstore's own.
var historyTables = map[string]string{
	"schema_migrations":                "golang-migrate's migration history",
	"migrate_sample_schema_migrations": "the sample bookstore's migration history",
}

// Errors of Read that callers report as the user's mistake.
var (
	// ErrNoTables means the schema has no table to draft.
	ErrNoTables = errors.New("draft: no tables")
	// ErrUnknownTable means ReadConfig.Tables names a table the schema lacks.
	ErrUnknownTable = errors.New("draft: no such table")
)

// beginner starts transactions; *pgx.Conn and *pgxpool.Pool fit.
type beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

var _ beginner = (*pgx.Conn)(nil)

const tablesSQL = `
SELECT current_database(), c.relname
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname`

const foreignKeysSQL = `
SELECT con.conname, c.relname, rc.relname,
       array_agg(a.attname::text ORDER BY k.ord), array_agg(ra.attname::text ORDER BY k.ord)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class rc ON rc.oid = con.confrelid
JOIN pg_namespace rn ON rn.oid = rc.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(attnum, refattnum, ord)
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
JOIN pg_attribute ra ON ra.attrelid = rc.oid AND ra.attnum = k.refattnum
WHERE con.contype = 'f' AND n.nspname = $1 AND rn.nspname = $1
GROUP BY con.oid, con.conname, c.relname, rc.relname
ORDER BY c.relname, con.conname`

// Read reads the catalog of one schema and measures, for every foreign key
// between two different tables, the largest number of children a parent
// has. Everything is read in one REPEATABLE READ, READ ONLY transaction,
// so the counts agree with each other; identifiers are quoted. Measuring
// reads each child table once (a GROUP BY over its foreign key columns).
func Read(ctx context.Context, db beginner, cfg ReadConfig) (*Source, error) {
	cfg = cfg.WithDefaults()
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("draft: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only: nothing to keep

	src := &Source{Schema: cfg.Schema, Ignored: map[string]string{}}
	var all []string
	rows, err := tx.Query(ctx, tablesSQL, cfg.Schema)
	if err != nil {
		return nil, fmt.Errorf("draft: list tables: %w", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&src.Database, &name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("draft: list tables: %w", err)
		}
		all = append(all, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("draft: list tables: %w", err)
	}

	if len(cfg.Tables) == 0 {
		for _, name := range all {
			if why, ok := historyTables[name]; ok {
				src.Ignored[name] = why
				continue
			}
			src.Tables = append(src.Tables, name)
		}
	} else {
		var unknown []string
		for _, name := range cfg.Tables {
			if !slices.Contains(all, name) {
				unknown = append(unknown, name)
			} else if !slices.Contains(src.Tables, name) {
				src.Tables = append(src.Tables, name)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("%w: %s in schema %s (it has: %s)", ErrUnknownTable, strings.Join(unknown, ", "), cfg.Schema, strings.Join(all, ", "))
		}
		slices.Sort(src.Tables)
	}
	if len(src.Tables) == 0 {
		return nil, fmt.Errorf("%w in schema %s of database %s", ErrNoTables, cfg.Schema, src.Database)
	}

	src.Catalog, err = extract.ReadCatalog(ctx, tx, []string{cfg.Schema})
	if err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	rows, err = tx.Query(ctx, foreignKeysSQL, cfg.Schema)
	if err != nil {
		return nil, fmt.Errorf("draft: read foreign keys: %w", err)
	}
	for rows.Next() {
		var fk ForeignKey
		if err := rows.Scan(&fk.Name, &fk.Table, &fk.RefTable, &fk.Columns, &fk.RefColumns); err != nil {
			rows.Close()
			return nil, fmt.Errorf("draft: read foreign keys: %w", err)
		}
		if slices.Contains(src.Tables, fk.Table) && slices.Contains(src.Tables, fk.RefTable) {
			src.ForeignKeys = append(src.ForeignKeys, fk)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("draft: read foreign keys: %w", err)
	}

	for i := range src.ForeignKeys {
		fk := &src.ForeignKeys[i]
		if fk.Table == fk.RefTable {
			continue // a tree is not embedded in its own rows
		}
		if err := tx.QueryRow(ctx, maxChildrenSQL(cfg.Schema, fk.Table, fk.Columns)).Scan(&fk.MaxChildren); err != nil {
			return nil, fmt.Errorf("draft: count children of %s.%s per %s: %w", cfg.Schema, fk.Table, strings.Join(fk.Columns, ", "), err)
		}
		fk.Measured = true
	}
	return src, nil
}

// maxChildrenSQL counts, per parent, the child rows referencing it and
// returns the largest count.
func maxChildrenSQL(schema, table string, cols []string) string {
	quoted := make([]string, len(cols))
	notNull := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
		notNull[i] = quoted[i] + " IS NOT NULL"
	}
	return fmt.Sprintf("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM %s WHERE %s GROUP BY %s) AS per_parent",
		pgx.Identifier{schema, table}.Sanitize(), strings.Join(notNull, " AND "), strings.Join(quoted, ", "))
}
