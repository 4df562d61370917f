package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/mapping"
)

// patternSavepoint isolates each statement checkPatternSQL prepares: a
// failed Parse aborts the transaction, and the next pattern's would fail
// with "current transaction is aborted" instead of its own error.
const patternSavepoint = "migrate_validate_pattern"

// checkPatternSQL prepares (parses, plans the types of; never executes)
// the SQL and params SQL of every access pattern on conn, whose read-only
// transaction is open, with the mapping's schema first on the search path
// as prove runs them. Each error is a diagnostic at the place in the file
// the database points to ("column nmae does not exist" at nmae), or at
// the SQL when it points nowhere.
func checkPatternSQL(ctx context.Context, conn *pgx.Conn, m *mapping.Mapping) (mapping.Diagnostics, error) {
	if len(m.AccessPatterns) == 0 {
		return nil, nil
	}
	if m.Schema != "" {
		_, err := conn.Exec(ctx, "SELECT set_config('search_path', $1 || ', ' || current_setting('search_path'), true)",
			pgx.Identifier{m.Schema}.Sanitize())
		if err != nil {
			return nil, fmt.Errorf("validate: put schema %s on the search path: %w", m.Schema, err)
		}
	}
	var ds mapping.Diagnostics
	for _, ap := range m.AccessPatterns {
		type query struct {
			what, sql string
			at        func(int) mapping.Pos
			pos       mapping.Pos
		}
		queries := []query{{"params", ap.ParamsSQL, ap.ParamsSQLOffsetPos, ap.ParamsSQLOffsetPos(0)}}
		for _, q := range ap.Queries() {
			what := "sql"
			if q.Entity != "" {
				what = "sql of " + q.Entity
			}
			queries = append(queries, query{what, q.SQL, q.SQLOffsetPos, q.SQLPos})
		}
		for _, q := range queries {
			if strings.TrimSpace(q.sql) == "" {
				continue
			}
			msg, off, err := prepare(ctx, conn, q.sql)
			if err != nil {
				return nil, err
			}
			if msg == "" {
				continue
			}
			at := q.pos
			if off >= 0 {
				at = q.at(off)
			}
			ds = append(ds, mapping.Diagnostic{File: m.File, Pos: at, Msg: fmt.Sprintf("access pattern %s: %s: %s", ap.Name, q.what, msg)})
		}
	}
	return ds, nil
}

// prepare prepares sql (with @names as $n) in a savepoint. msg is the
// database's error ("" when it prepares), off the byte offset of sql it
// points to, -1 for none; err is for failures that are not the SQL's.
func prepare(ctx context.Context, conn *pgx.Conn, sql string) (msg string, off int, err error) {
	if _, err := conn.Exec(ctx, "SAVEPOINT "+patternSavepoint); err != nil {
		return "", 0, fmt.Errorf("validate: savepoint: %w", err)
	}
	q, back := mapping.PositionalSQL(sql)
	_, perr := conn.PgConn().Prepare(ctx, "", q, nil)
	if _, err := conn.Exec(ctx, "ROLLBACK TO SAVEPOINT "+patternSavepoint); err != nil {
		return "", 0, errors.Join(fmt.Errorf("validate: rollback to savepoint: %w", err), perr)
	}
	if _, err := conn.Exec(ctx, "RELEASE SAVEPOINT "+patternSavepoint); err != nil {
		return "", 0, fmt.Errorf("validate: release savepoint: %w", err)
	}
	var pgErr *pgconn.PgError
	switch {
	case perr == nil:
		return "", -1, nil
	case !errors.As(perr, &pgErr):
		return "", 0, fmt.Errorf("validate: prepare pattern SQL: %w", perr)
	}
	msg = pgErr.Message
	if pgErr.Hint != "" {
		msg += " (" + pgErr.Hint + ")"
	}
	off = -1
	if pgErr.Position > 0 {
		// Position counts characters of the rewritten SQL from 1.
		b, n := 0, int(pgErr.Position)-1
		for ; n > 0 && b < len(q); n-- {
			_, size := utf8.DecodeRuneInString(q[b:])
			b += size
		}
		off = back(b)
	}
	return msg, off, nil
}
