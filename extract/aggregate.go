package extract

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// aggregateExpr computes one aggregate of the child rows matching the base
// row, as the same JSON an embed of one row of one value is: [[value]].
// Without GROUP BY an aggregate yields one row even when no child matches:
// count 0, sum coalesced to 0, min and max NULL.
func aggregateExpr(i int, e Embed, args *[]any) (string, error) {
	a := fmt.Sprintf("e%d", i)
	if len(e.Columns) != 1 {
		return "", fmt.Errorf("extract: aggregate %s over %s.%s has %d result columns, want 1", e.Agg, e.Schema, e.Table, len(e.Columns))
	}
	var expr string
	col := ""
	if e.AggColumn != "" {
		col = a + "." + pgx.Identifier{e.AggColumn}.Sanitize()
	}
	switch e.Agg {
	case mapping.AggCount:
		expr = "count(*)"
		if col != "" {
			expr = "count(" + col + ")"
		}
	case mapping.AggSum:
		// numeric keeps every digit of the sum of integers or numerics.
		expr = "coalesce(sum(" + col + ")::numeric, 0)"
	case mapping.AggMin:
		expr = "min(" + col + ")"
	case mapping.AggMax:
		expr = "max(" + col + ")"
	default:
		return "", fmt.Errorf("extract: unknown aggregate %q over %s.%s", e.Agg, e.Schema, e.Table)
	}
	where, err := e.whereSQL(a, args)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(SELECT json_build_array(json_build_array(%s))::text FROM %s AS %s WHERE %s)",
		jsonValue("("+expr+")", e.Columns[0]), pgx.Identifier{e.Schema, e.Table}.Sanitize(), a, where), nil
}

// whereSQL is the embed's join condition, and its filter when it has one.
func (e Embed) whereSQL(a string, args *[]any) (string, error) {
	var where []string
	for _, on := range e.On {
		where = append(where, fmt.Sprintf("%s.%s = %s.%s", a, pgx.Identifier{on.Column}.Sanitize(), alias(on.Ref), pgx.Identifier{on.RefColumn}.Sanitize()))
	}
	if e.Where != nil {
		f, err := conditionSQL(a, e.Where, e.WhereColumns, args)
		if err != nil {
			return "", fmt.Errorf("extract %s.%s: where %q: %w", e.Schema, e.Table, e.Where.Raw, err)
		}
		where = append(where, "("+f+")")
	}
	return strings.Join(where, " AND "), nil
}

// conditionSQL renders a mapping where clause over the columns of relation
// a: identifiers quoted, literals as parameters cast to the compared
// column's type, so that nothing of the mapping's text becomes SQL.
// Conditions were checked against the catalog (mapping.Check): operands
// compare a column with a literal of its kind, or two columns.
func conditionSQL(a string, c *mapping.Condition, cols []mapping.Column, args *[]any) (string, error) {
	typeOf := func(o mapping.Operand) (pgkind.Type, bool) {
		for _, col := range cols {
			if col.Name == o.Column {
				return col.Type, true
			}
		}
		return pgkind.Type{}, false
	}
	// operand renders o; t is the type of the column it is compared with.
	operand := func(o mapping.Operand, t pgkind.Type) (string, error) {
		if o.IsColumn() {
			if len(o.Path) > 0 {
				return "", fmt.Errorf("{%s}: a column of a copy", o.Ref())
			}
			ct, ok := typeOf(o)
			if !ok {
				return "", fmt.Errorf("column %q is not among the filter's columns", o.Column)
			}
			id := a + "." + pgx.Identifier{o.Column}.Sanitize()
			if ct.Kind == pgkind.Text {
				// Text compares by its text, as the transform's where
				// does: an enum or varchar column as text.
				return id + "::text", nil
			}
			return id, nil
		}
		switch o.Lit {
		case mapping.LitBool:
			if o.Text == "true" {
				return "TRUE", nil
			}
			return "FALSE", nil
		case mapping.LitNull:
			return "NULL", nil
		}
		*args = append(*args, o.Text)
		p := fmt.Sprintf("$%d::text", len(*args))
		switch t.Kind {
		case pgkind.Int, pgkind.Numeric, pgkind.Float:
			return p + "::numeric", nil
		case pgkind.UUID:
			return p + "::uuid", nil
		case pgkind.Date:
			return p + "::date", nil
		case pgkind.Timestamp:
			return p + "::timestamp", nil
		case pgkind.Timestamptz:
			return p + "::timestamptz", nil
		case pgkind.Bool:
			return p + "::boolean", nil
		}
		return p, nil
	}
	// column is the type of the column among operands (checked: one is).
	column := func(ops ...mapping.Operand) pgkind.Type {
		for _, o := range ops {
			if t, ok := typeOf(o); ok && o.IsColumn() {
				return t
			}
		}
		return pgkind.Type{}
	}
	var expr func(mapping.Expr) (string, error)
	expr = func(e mapping.Expr) (string, error) {
		switch e := e.(type) {
		case *mapping.Logic:
			var terms []string
			for _, t := range e.Terms {
				s, err := expr(t)
				if err != nil {
					return "", err
				}
				terms = append(terms, "("+s+")")
			}
			op := " AND "
			if e.Op == "OR" {
				op = " OR "
			}
			return strings.Join(terms, op), nil
		case *mapping.Not:
			s, err := expr(e.X)
			return "NOT (" + s + ")", err
		case *mapping.Compare:
			t := column(e.L, e.R)
			l, err := operand(e.L, t)
			if err != nil {
				return "", err
			}
			r, err := operand(e.R, t)
			if err != nil {
				return "", err
			}
			op := e.Op
			if !strings.Contains("= <> < <= > >=", op) || op == "" {
				return "", fmt.Errorf("unknown comparison %q", op)
			}
			return l + " " + op + " " + r, nil
		case *mapping.IsNull:
			x, err := operand(e.X, column(e.X))
			if e.Not {
				return x + " IS NOT NULL", err
			}
			return x + " IS NULL", err
		case *mapping.IsBool:
			x, err := operand(e.X, column(e.X))
			s := x + " IS "
			if e.Not {
				s += "NOT "
			}
			if e.Value {
				return s + "TRUE", err
			}
			return s + "FALSE", err
		case *mapping.Truth:
			return operand(e.X, column(e.X))
		case *mapping.In:
			t := column(e.X)
			x, err := operand(e.X, t)
			if err != nil {
				return "", err
			}
			var list []string
			for _, o := range e.List {
				s, err := operand(o, t)
				if err != nil {
					return "", err
				}
				list = append(list, s)
			}
			not := ""
			if e.Not {
				not = "NOT "
			}
			return x + " " + not + "IN (" + strings.Join(list, ", ") + ")", nil
		case *mapping.Between:
			t := column(e.X)
			var s [3]string
			for i, o := range []mapping.Operand{e.X, e.Lo, e.Hi} {
				var err error
				if s[i], err = operand(o, t); err != nil {
					return "", err
				}
			}
			not := ""
			if e.Not {
				not = "NOT "
			}
			return s[0] + " " + not + "BETWEEN " + s[1] + " AND " + s[2], nil
		}
		return "", fmt.Errorf("unknown condition node %T", e)
	}
	return expr(c.Expr)
}
