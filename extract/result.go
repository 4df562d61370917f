package extract

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// ResultColumn is one column of the result of an arbitrary query.
type ResultColumn struct {
	Name string
	Type pgkind.Type
}

// Each runs a query and calls f for every row with the result's columns
// and the row's values, decoded exactly as Rows decodes table reads
// (int64, Decimal, float32, float64, time.Time, Infinity, []byte, JSON, string,
// []any; NULL as nil). Every column is transferred in PostgreSQL's text
// format, which the snapshot's settings make exact and which every type
// has: one without an exact decoding (interval, inet, an enum) arrives as
// its text. money, whose text depends on the locale, arrives as that text:
// cast it to numeric in the query. Rows are streamed; each call of f gets
// a fresh slice of values.
func Each(ctx context.Context, db querier, sql string, args []any, f func(cols []ResultColumn, vals []any) error) error {
	args = append([]any{pgx.QueryResultFormats{pgx.TextFormatCode}}, args...)
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cols []ResultColumn
	var targets []any
	for rows.Next() {
		if cols == nil {
			cols = resultColumns(rows)
			targets = make([]any, len(cols))
			for i, c := range cols {
				targets[i] = scanTarget(c.Type)
			}
		}
		if err := rows.Scan(targets...); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		vals := make([]any, len(cols))
		for i, t := range targets {
			v, err := decode(t, cols[i].Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
			if s, ok := v.(string); ok && cols[i].Type.Name == "bpchar" {
				// char(n) pads with blanks that are not significant; the
				// cast to text that table reads use drops them too.
				v = strings.TrimRight(s, " ")
			}
			vals[i] = v
		}
		if err := f(cols, vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// resultColumns classifies a result's columns by their type OIDs.
func resultColumns(rows pgx.Rows) []ResultColumn {
	fds := rows.FieldDescriptions()
	out := make([]ResultColumn, len(fds))
	tm := rows.Conn().TypeMap()
	for i, fd := range fds {
		t := pgkind.Type{Name: "text", Kind: pgkind.Text}
		if pt, ok := tm.TypeForOID(fd.DataTypeOID); ok {
			name := pt.Name
			t.Name = name
			if elem, isArray := strings.CutPrefix(name, "_"); isArray {
				t.Kind, t.Elem = pgkind.Array, pgkind.Classify(elem, 0)
				if t.Elem == pgkind.Other {
					t.Elem = pgkind.Text
				}
				t.Float4 = t.Elem == pgkind.Float && pgkind.IsFloat4(elem)
			} else {
				t.Kind = pgkind.Classify(name, 0)
				t.Float4 = t.Kind == pgkind.Float && pgkind.IsFloat4(name)
				if t.Kind == pgkind.Other {
					t.Kind = pgkind.Text // read as text, as the snapshot's settings print it
				}
			}
		}
		out[i] = ResultColumn{Name: fd.Name, Type: t}
	}
	return out
}
