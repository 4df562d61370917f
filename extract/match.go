package extract

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgdynamo/migrate/mapping"
)

// Match restricts a Query to the rows whose Columns, of the base table
// (Ref -1) or of join Ref, equal one of the tuples in Values. Values are
// in PostgreSQL's text form, as logical replication sends them, and the
// server casts them to each column's type: they are parameters, never part
// of the statement. A tuple with a NULL (nil) matches no row; a row
// matching two equal tuples comes twice.
//
// It reads rows by key (the base table's key columns), or the rows that
// join a given parent row (a join's columns). Each row ends with the index
// in Values (int64) of the tuple it matched.
type Match struct {
	Ref     int
	Columns []mapping.Column
	Values  [][]*string
}

// matchOrdinal selects the index of the matched tuple.
const matchOrdinal = "m.n - 1"

// join is the JOIN clause of m, its parameters appended to args: one
// text array per column, unnested together, with their ordinality, into
// the tuples, each value cast to its column's type.
func (m *Match) join(q Query, args *[]any) (string, error) {
	if m.Ref < -1 || m.Ref >= len(q.Joins) {
		return "", fmt.Errorf("extract %s.%s: match on relation %d, which the query does not join", q.Schema, q.Table, m.Ref)
	}
	if len(m.Columns) == 0 {
		return "", fmt.Errorf("extract %s.%s: match without columns", q.Schema, q.Table)
	}
	arrays, names, on := make([]string, len(m.Columns)), make([]string, len(m.Columns)), make([]string, len(m.Columns))
	for i, c := range m.Columns {
		vals := make([]pgtype.Text, len(m.Values))
		for k, tuple := range m.Values {
			if len(tuple) != len(m.Columns) {
				return "", fmt.Errorf("extract %s.%s: match tuple has %d values for %d columns", q.Schema, q.Table, len(tuple), len(m.Columns))
			}
			if v := tuple[i]; v != nil {
				vals[k] = pgtype.Text{String: *v, Valid: true}
			}
		}
		*args = append(*args, vals)
		arrays[i] = fmt.Sprintf("$%d::text[]", len(*args))
		names[i] = fmt.Sprintf("v%d", i)
		// Each value is cast on its own: a text array cannot be cast to an
		// array of arrays.
		on[i] = fmt.Sprintf("%s.%s = m.v%d::%s", alias(m.Ref), pgx.Identifier{c.Name}.Sanitize(), i, c.Type.Name)
	}
	return fmt.Sprintf(" JOIN unnest(%s) WITH ORDINALITY AS m(%s, n) ON %s",
		strings.Join(arrays, ", "), strings.Join(names, ", "), strings.Join(on, " AND ")), nil
}

// Values decodes tuples of text values, as logical replication sends
// them, into the values Rows would read from columns of those types: the
// server parses each text with the column's type and sends it back the
// way Rows selects it. Row i holds tuple i, its Values in the order of
// cols; nil (NULL) stays nil.
func Values(ctx context.Context, db querier, cols []mapping.Column, tuples [][]*string) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		if len(tuples) == 0 {
			return
		}
		if len(cols) == 0 {
			for range tuples {
				if !yield(Row{}, nil) {
					return
				}
			}
			return
		}
		// The ordinality column needs a name no column has.
		ord := "ord"
		for slices.ContainsFunc(cols, func(c mapping.Column) bool { return c.Name == ord }) {
			ord += "_"
		}
		casts, exprs, arrays := make([]string, len(cols)), make([]string, len(cols)), make([]string, len(cols))
		var args []any
		for i, c := range cols {
			// The text is cast to the column's type, then selected as Rows
			// selects the column.
			casts[i] = fmt.Sprintf("u.v%d::%s AS %s", i, c.Type.Name, pgx.Identifier{c.Name}.Sanitize())
			exprs[i] = selectExpr("t", c)
			vals := make([]pgtype.Text, len(tuples))
			for k, tuple := range tuples {
				if len(tuple) != len(cols) {
					yield(Row{}, fmt.Errorf("extract: tuple %d has %d values for %d columns", k, len(tuple), len(cols)))
					return
				}
				if v := tuple[i]; v != nil {
					vals[k] = pgtype.Text{String: *v, Valid: true}
				}
			}
			args = append(args, vals)
			arrays[i] = fmt.Sprintf("$%d::text[]", len(args))
		}
		names := make([]string, len(cols))
		for i := range cols {
			names[i] = fmt.Sprintf("v%d", i)
		}
		ordID := pgx.Identifier{ord}.Sanitize()
		sql := fmt.Sprintf("SELECT %s FROM (SELECT %s, u.n AS %s FROM unnest(%s) WITH ORDINALITY AS u(%s, n)) AS t ORDER BY t.%s",
			strings.Join(exprs, ", "), strings.Join(casts, ", "), ordID, strings.Join(arrays, ", "), strings.Join(names, ", "), ordID)
		rows, err := db.Query(ctx, sql, args...)
		if err != nil {
			yield(Row{}, fmt.Errorf("extract: decode values: %w", err))
			return
		}
		defer rows.Close()
		targets := make([]any, len(cols))
		for i, c := range cols {
			targets[i] = scanTarget(c.Type)
		}
		for rows.Next() {
			if err := rows.Scan(targets...); err != nil {
				yield(Row{}, fmt.Errorf("extract: decode values: %w", err))
				return
			}
			vals := make([]any, len(cols))
			for i, t := range targets {
				v, err := decode(t, cols[i].Type)
				if err != nil {
					yield(Row{}, fmt.Errorf("extract: decode values: column %s: %w", cols[i].Name, err))
					return
				}
				vals[i] = v
			}
			if !yield(Row{Values: vals}, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(Row{}, fmt.Errorf("extract: decode values: %w", err))
		}
	}
}
