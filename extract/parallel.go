package extract

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/mapping"
)

// snapshotID matches what pg_export_snapshot() returns.
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f]+(-[0-9A-Fa-f]+)+$`)

// Export makes the snapshot joinable by other connections (BeginAt) and
// returns its id, valid as long as this transaction is open.
func (s *Snapshot) Export(ctx context.Context) (string, error) {
	var id string
	if err := s.tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&id); err != nil {
		return "", fmt.Errorf("export snapshot: %w", err)
	}
	return id, nil
}

// SplitPoints returns up to n-1 keys (values of q.OrderBy, ascending)
// that split q's table into n ranges of about as many rows each:
// (-inf, k1], (k1, k2], ..., (kn-1, +inf). They are quantiles of a sample
// of the table's keys: TABLESAMPLE SYSTEM, about 200 random pages per
// range (every page of a smaller table), the same pages on every call.
// Good enough to balance readers, and exact ranges whatever the points
// are, since every row falls in exactly one. An empty table gives none.
func (s *Snapshot) SplitPoints(ctx context.Context, q Query, n int) ([][]any, error) {
	where := q.Schema + "." + q.Table
	table := pgx.Identifier{q.Schema, q.Table}.Sanitize()
	if n < 2 || len(q.OrderBy) == 0 {
		return nil, nil
	}
	var pages int64
	if err := s.tx.QueryRow(ctx, "SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int8", table).Scan(&pages); err != nil {
		return nil, fmt.Errorf("extract %s: table size: %w", where, err)
	}
	if pages == 0 {
		return nil, nil
	}
	cols := make([]mapping.Column, len(q.OrderBy))
	exprs := make([]string, len(q.OrderBy))
	order := make([]string, len(q.OrderBy))
	for i, k := range q.OrderBy {
		j := indexOfColumn(q.Columns, k)
		if j < 0 {
			return nil, fmt.Errorf("extract %s: key column %q is not read", where, k)
		}
		cols[i] = q.Columns[j]
		exprs[i] = selectExpr("t", cols[i])
		order[i] = "t." + pgx.Identifier{k}.Sanitize()
	}
	percent := 100 * float64(min(pages, int64(200*n))) / float64(pages)
	sql := fmt.Sprintf("SELECT %s FROM %s AS t TABLESAMPLE SYSTEM (%g) REPEATABLE (20240501) ORDER BY %s",
		strings.Join(exprs, ", "), table, percent, strings.Join(order, ", "))
	rows, err := s.tx.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("extract %s: sample keys: %w", where, err)
	}
	defer rows.Close()
	var sample [][]any
	targets := make([]any, len(cols))
	for rows.Next() {
		for i, c := range cols {
			targets[i] = scanTarget(c.Type)
		}
		if err := rows.Scan(targets...); err != nil {
			return nil, fmt.Errorf("extract %s: sample keys: %w", where, err)
		}
		key := make([]any, len(cols))
		for i, t := range targets {
			if key[i], err = decode(t, cols[i].Type); err != nil {
				return nil, fmt.Errorf("extract %s: sample keys: %w", where, err)
			}
		}
		sample = append(sample, key)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("extract %s: sample keys: %w", where, err)
	}
	var out [][]any
	for i := 1; i < n; i++ {
		j := i * len(sample) / n
		if j == 0 || j >= len(sample) {
			continue
		}
		out = append(out, sample[j-1]) // keys are unique: the boundaries are distinct
	}
	return out, nil
}
