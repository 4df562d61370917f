package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/mapping"
)

// Extent is a table's size in rows and the key of its last row in key
// order: what a resumed run compares with what it recorded when the table
// was done, to tell the source changed in between.
type Extent struct {
	Rows int64
	Last []any // the OrderBy columns' values of the last row; nil when empty
}

// Extent reads q's table's extent inside the snapshot. Only the base
// table and its key columns matter; joins and embeds are not read.
func (s *Snapshot) Extent(ctx context.Context, q Query) (Extent, error) {
	where := q.Schema + "." + q.Table
	table := pgx.Identifier{q.Schema, q.Table}.Sanitize()
	var ext Extent
	if err := s.tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&ext.Rows); err != nil {
		return Extent{}, fmt.Errorf("extract %s: count: %w", where, err)
	}
	if len(q.OrderBy) == 0 || ext.Rows == 0 {
		return ext, nil
	}
	cols := make([]mapping.Column, len(q.OrderBy))
	exprs := make([]string, len(q.OrderBy))
	order := make([]string, len(q.OrderBy))
	for i, k := range q.OrderBy {
		j := indexOfColumn(q.Columns, k)
		if j < 0 {
			return Extent{}, fmt.Errorf("extract %s: key column %q is not read", where, k)
		}
		cols[i] = q.Columns[j]
		exprs[i] = selectExpr("t", cols[i])
		order[i] = "t." + pgx.Identifier{k}.Sanitize() + " DESC"
	}
	sql := "SELECT " + strings.Join(exprs, ", ") + " FROM " + table + " AS t ORDER BY " + strings.Join(order, ", ") + " LIMIT 1"
	targets := make([]any, len(cols))
	for i, c := range cols {
		targets[i] = scanTarget(c.Type)
	}
	err := s.tx.QueryRow(ctx, sql).Scan(targets...)
	if errors.Is(err, pgx.ErrNoRows) { // emptied since the count: same snapshot, cannot happen
		return ext, nil
	}
	if err != nil {
		return Extent{}, fmt.Errorf("extract %s: last key: %w", where, err)
	}
	ext.Last = make([]any, len(cols))
	for i, t := range targets {
		if ext.Last[i], err = decode(t, cols[i].Type); err != nil {
			return Extent{}, fmt.Errorf("extract %s: last key: %w", where, err)
		}
	}
	return ext, nil
}

func indexOfColumn(cols []mapping.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}
