package transform

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// truth is a value of SQL's three-valued logic.
type truth int8

const (
	tFalse truth = iota
	tTrue
	tUnknown
)

func truthOf(b bool) truth {
	if b {
		return tTrue
	}
	return tFalse
}

// cond is a compiled where clause: it reads the row positions its columns
// were given and returns SQL's answer for the row.
type cond func(row extract.Row) truth

// operandPlan is a column (pos set: its row position, filled in when the
// query's layout is final) or a literal value already converted to the
// kind it is compared with (pos nil).
type operandPlan struct {
	pos  *int
	kind pgkind.Kind
	lit  any // literal: *numeric, string, bool, timeValue
}

// numeric is a number ordered as PostgreSQL orders numeric and float:
// -Infinity < finite < Infinity < NaN (NaN equals NaN).
type numeric struct {
	class int // -1 -Infinity, 0 finite, 1 Infinity, 2 NaN
	r     *big.Rat
}

// timeValue is a date or timestamp with ±infinity.
type timeValue struct {
	inf int
	t   time.Time
}

func (o *operandPlan) value(row extract.Row) any {
	if o.pos == nil {
		return o.lit
	}
	return normalize(row.Values[*o.pos], o.kind)
}

// normalize converts a decoded value into the comparable form of its kind;
// nil stays nil (NULL).
func normalize(v any, k pgkind.Kind) any {
	switch v := v.(type) {
	case nil:
		return nil
	case int64:
		return &numeric{r: new(big.Rat).SetInt64(v)}
	case float32:
		// The decimal PostgreSQL shows for the real, which a literal in a
		// filter spells.
		return numericText(FloatString(float64(v), 32))
	case float64:
		switch {
		case math.IsNaN(v):
			return &numeric{class: 2}
		case math.IsInf(v, 1):
			return &numeric{class: 1}
		case math.IsInf(v, -1):
			return &numeric{class: -1}
		}
		return &numeric{r: new(big.Rat).SetFloat64(v)}
	case extract.Decimal:
		return numericText(string(v))
	case time.Time:
		return timeValue{t: v}
	case extract.Infinity:
		return timeValue{inf: v.Sign}
	case string:
		if k == pgkind.UUID {
			return strings.ToLower(v)
		}
		return v
	}
	return v
}

func numericText(s string) *numeric {
	switch s {
	case "NaN":
		return &numeric{class: 2}
	case "Infinity":
		return &numeric{class: 1}
	case "-Infinity":
		return &numeric{class: -1}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return &numeric{class: 2}
	}
	return &numeric{r: r}
}

// compareValues orders two non-NULL normalized values of comparable kinds.
func compareValues(a, b any) (int, error) {
	switch a := a.(type) {
	case *numeric:
		b, ok := b.(*numeric)
		if !ok {
			break
		}
		if a.class != b.class {
			return cmpInt(a.class, b.class), nil
		}
		if a.class != 0 {
			return 0, nil
		}
		return a.r.Cmp(b.r), nil
	case timeValue:
		b, ok := b.(timeValue)
		if !ok {
			break
		}
		if a.inf != b.inf {
			return cmpInt(a.inf, b.inf), nil
		}
		if a.inf != 0 {
			return 0, nil
		}
		return a.t.Compare(b.t), nil
	case string:
		b, ok := b.(string)
		if !ok {
			break
		}
		return strings.Compare(a, b), nil
	case bool:
		b, ok := b.(bool)
		if !ok {
			break
		}
		switch {
		case a == b:
			return 0, nil
		case !a:
			return -1, nil
		}
		return 1, nil
	}
	return 0, fmt.Errorf("cannot compare %T with %T", a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// literalValue converts a literal to the comparable form of the kind it
// is compared with.
func literalValue(o mapping.Operand, k pgkind.Kind) (any, error) {
	switch o.Lit {
	case mapping.LitNumber:
		return numericText(o.Text), nil
	case mapping.LitBool:
		return o.Text == "true", nil
	case mapping.LitString:
		switch k {
		case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
			t, inf, err := mapping.TimeLiteral(o.Text, k)
			if err != nil {
				return nil, err
			}
			return timeValue{inf: inf, t: t}, nil
		case pgkind.UUID:
			return strings.ToLower(strings.TrimSpace(o.Text)), nil
		}
		return o.Text, nil
	}
	return nil, nil
}

// condCompiler turns a where clause into a cond, asking resolve for the
// row position and kind of each column.
type condCompiler struct {
	resolve func(path []string, column string) (pos *int, kind pgkind.Kind, err error)
}

func (cc *condCompiler) compile(c *mapping.Condition) (cond, error) {
	if c == nil {
		return nil, nil
	}
	return cc.expr(c.Expr)
}

// operands compiles a column and the operands compared with it.
func (cc *condCompiler) operands(col mapping.Operand, others ...mapping.Operand) (*operandPlan, []*operandPlan, error) {
	pos, kind, err := cc.resolve(col.Path, col.Column)
	if err != nil {
		return nil, nil, err
	}
	x := &operandPlan{pos: pos, kind: kind}
	var out []*operandPlan
	for _, o := range others {
		if o.IsColumn() {
			p, k, err := cc.resolve(o.Path, o.Column)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, &operandPlan{pos: p, kind: k})
			continue
		}
		lit, err := literalValue(o, kind)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, &operandPlan{kind: kind, lit: lit})
	}
	return x, out, nil
}

func (cc *condCompiler) expr(e mapping.Expr) (cond, error) {
	switch e := e.(type) {
	case *mapping.Logic:
		terms := make([]cond, len(e.Terms))
		for i, t := range e.Terms {
			c, err := cc.expr(t)
			if err != nil {
				return nil, err
			}
			terms[i] = c
		}
		and := e.Op == "AND"
		return func(row extract.Row) truth {
			// AND: false wins, then unknown; OR: true wins, then unknown.
			decisive, out := tTrue, tFalse
			if and {
				decisive, out = tFalse, tTrue
			}
			for _, t := range terms {
				switch v := t(row); v {
				case decisive:
					return decisive
				case tUnknown:
					out = tUnknown
				}
			}
			return out
		}, nil
	case *mapping.Not:
		x, err := cc.expr(e.X)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth {
			switch x(row) {
			case tTrue:
				return tFalse
			case tFalse:
				return tTrue
			}
			return tUnknown
		}, nil
	case *mapping.Compare:
		col, other, op := e.L, e.R, e.Op
		if !col.IsColumn() {
			col, other = other, col
			op = flip(op)
		}
		x, ys, err := cc.operands(col, other)
		if err != nil {
			return nil, err
		}
		y := ys[0]
		return func(row extract.Row) truth {
			a, b := x.value(row), y.value(row)
			if a == nil || b == nil {
				return tUnknown
			}
			c, err := compareValues(a, b)
			if err != nil {
				return tUnknown
			}
			return truthOf(holds(op, c))
		}, nil
	case *mapping.IsNull:
		x, _, err := cc.operands(e.X)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth { return truthOf((row.Values[*x.pos] == nil) != e.Not) }, nil
	case *mapping.IsBool:
		x, _, err := cc.operands(e.X)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth {
			b, ok := row.Values[*x.pos].(bool)
			return truthOf((ok && b == e.Value) != e.Not)
		}, nil
	case *mapping.Truth:
		x, _, err := cc.operands(e.X)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth {
			b, ok := row.Values[*x.pos].(bool)
			if !ok {
				return tUnknown
			}
			return truthOf(b)
		}, nil
	case *mapping.In:
		x, list, err := cc.operands(e.X, e.List...)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth {
			a := x.value(row)
			if a == nil {
				return tUnknown
			}
			out := tFalse
			for _, y := range list {
				b := y.value(row)
				if b == nil {
					out = tUnknown
					continue
				}
				if c, err := compareValues(a, b); err == nil && c == 0 {
					out = tTrue
					break
				}
			}
			if e.Not && out != tUnknown {
				out = 1 - out
			}
			return out
		}, nil
	case *mapping.Between:
		x, bounds, err := cc.operands(e.X, e.Lo, e.Hi)
		if err != nil {
			return nil, err
		}
		return func(row extract.Row) truth {
			a, lo, hi := x.value(row), bounds[0].value(row), bounds[1].value(row)
			ge, le := tUnknown, tUnknown
			if a != nil && lo != nil {
				if c, err := compareValues(a, lo); err == nil {
					ge = truthOf(c >= 0)
				}
			}
			if a != nil && hi != nil {
				if c, err := compareValues(a, hi); err == nil {
					le = truthOf(c <= 0)
				}
			}
			var out truth
			switch {
			case ge == tFalse || le == tFalse:
				out = tFalse
			case ge == tUnknown || le == tUnknown:
				out = tUnknown
			default:
				out = tTrue
			}
			if e.Not && out != tUnknown {
				out = 1 - out
			}
			return out
		}, nil
	}
	return nil, fmt.Errorf("transform: unknown condition %T", e)
}

// flip mirrors a comparison when its operands swap sides: 5 < x is x > 5.
func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

func holds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
