package mapping

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// AggFunc is what an aggregate computes over its child rows.
type AggFunc string

const (
	AggCount  AggFunc = "count"  // N: rows, or non-NULL values of a column; 0 without rows
	AggSum    AggFunc = "sum"    // N: exact sum of an integer or numeric column; 0 without rows
	AggMin    AggFunc = "min"    // the column's type; absent without (non-NULL) values
	AggMax    AggFunc = "max"    // the column's type; absent without (non-NULL) values
	AggLatest AggFunc = "latest" // a column, or a map of columns, of the greatest row by Order
)

var aggFuncs = []AggFunc{AggCount, AggSum, AggMin, AggMax, AggLatest}

// Aggregate is one attribute of an entity's item computed over the child
// rows of each entity row (found through Join, as for an embed): kept on
// the parent so that a client reads a count, a sum or the latest child
// with the parent instead of reading every child.
//
// As in SQL: count of no rows is 0; sum of no rows is 0 (COALESCE(sum, 0));
// min, max and latest of no rows are NULL, so the attribute is absent.
type Aggregate struct {
	Attribute string
	Schema    string
	From      string
	Join      []JoinPair
	Func      AggFunc
	// Column is the aggregated column: count (empty for count: "*"), sum,
	// min, max, and latest of one column.
	Column Ref
	// Latest are the columns of the greatest row written as one map
	// attribute (latest: { attr: column, ... }); nil for one column.
	Latest []*Attribute
	// Order ranks the rows for latest: the greatest by ORDER BY Order (each
	// DESC NULLS LAST, then the child's primary key DESC) is the latest.
	Order []Ref
	// Where keeps the child rows it holds for; nil = every row.
	Where *Condition

	Pos, FromPos Pos
}

// parseAggregate reads one entry of an entity's aggregate: mapping:
//
//	orderCount: { count: "*", from: order_items, join: { book_id: book_id } }
func (p *parser) parseAggregate(attr string, k, n *yaml.Node, schema string) *Aggregate {
	ag := &Aggregate{Attribute: attr, Schema: schema, Pos: pos(k)}
	what := "aggregate " + attr
	have := map[string]bool{}
	var funcs []string
	p.fields(n, what, []string{"from", "schema", "join", "where", "order", "count", "sum", "min", "max", "latest"}, func(key string, _, v *yaml.Node) {
		have[key] = true
		switch key {
		case "from":
			ag.From, _ = p.name(v, "from")
			ag.FromPos = pos(v)
		case "schema":
			ag.Schema, _ = p.name(v, "schema")
		case "join":
			ag.Join = p.parseJoin(v, what)
		case "where":
			ag.Where = p.condition(v, "where")
		case "order":
			if v.Kind == yaml.ScalarNode {
				if s, ok := p.name(v, "order"); ok {
					ag.Order = []Ref{{s, pos(v)}}
				}
			} else {
				ag.Order = p.refs(v, "order", "column names")
			}
		case "latest":
			funcs = append(funcs, key)
			ag.Func = AggLatest
			if v.Kind == yaml.MappingNode {
				all, attrs := p.parseAttributes(v, what)
				if all || len(attrs) == 0 {
					p.r.errorf(pos(v), "%s: latest takes a column, or a mapping of attribute names to columns", what)
				}
				ag.Latest = attrs
				return
			}
			if s, ok := p.name(v, "latest"); ok {
				if s == "*" {
					p.r.errorf(pos(v), "%s: latest takes a column, or a mapping of attribute names to columns, not \"*\"", what)
					return
				}
				ag.Column = Ref{s, pos(v)}
			}
		default: // count, sum, min, max
			funcs = append(funcs, key)
			ag.Func = AggFunc(key)
			if s, ok := p.name(v, key); ok {
				if s == "*" && key != "count" {
					p.r.errorf(pos(v), "%s: %s needs a column; only count takes \"*\" (its rows)", what, key)
					return
				}
				if s != "*" {
					ag.Column = Ref{s, pos(v)}
				}
			}
		}
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	at := &yaml.Node{Line: ag.Pos.Line, Column: ag.Pos.Col}
	p.required(at, what, have, "from", "join")
	switch {
	case len(funcs) == 0:
		p.r.errorf(ag.Pos, "%s says what to compute: one of count, sum, min, max or latest", what)
	case len(funcs) > 1:
		p.r.errorf(ag.Pos, "%s computes one thing, not %s: declare one aggregate per attribute", what, strings.Join(funcs, " and "))
	}
	if ag.Func == AggLatest && len(funcs) == 1 && len(ag.Order) == 0 && !have["order"] {
		p.r.errorf(ag.Pos, "%s: latest needs order: <column> (or a list): the greatest row by that order is the latest", what)
	}
	if ag.Func != AggLatest && len(funcs) == 1 && have["order"] {
		p.r.errorf(ag.Order0Pos(ag.Pos), "%s: order applies to latest; %s does not depend on the order of rows", what, ag.Func)
	}
	return ag
}

// Order0Pos is where order is written, or def when it is not.
func (ag *Aggregate) Order0Pos(def Pos) Pos {
	if len(ag.Order) > 0 {
		return ag.Order[0].Pos
	}
	return def
}

// Columns lists the child columns the aggregate reads for its value: the
// aggregated column, or latest's columns, in order and without repeats.
func (ag *Aggregate) Columns() []string {
	var out []string
	add := func(c string) {
		if c != "" && !contains(out, c) {
			out = append(out, c)
		}
	}
	add(ag.Column.Name)
	for _, a := range ag.Latest {
		add(a.Column)
	}
	return out
}

// orderable kinds are those min, max and an aggregate's order rank rows
// by, with SQL's ordering of the type.
func orderable(k pgkind.Kind) bool {
	switch k {
	case pgkind.Int, pgkind.Numeric, pgkind.Float, pgkind.Text, pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		return true
	}
	return false
}

func checkAggregate(r *reporter, m *Mapping, e *Entity, parent *Table, ag *Aggregate, cat *Catalog) {
	what := e.Name + " aggregate " + ag.Attribute
	if ag.From == "" || ag.Schema == "" {
		return // reported by the parser
	}
	child := relation(r, cat, ag.Schema, ag.From, ag.FromPos)
	if child == nil {
		return
	}
	checkJoin(r, what, ag.Join, child, parent)
	if ag.Column.Name != "" {
		c := tableColumn(r, child, ag.Column.Name, ag.Column.Pos, what+" "+string(ag.Func))
		switch {
		case c == nil:
		case ag.Func == AggSum && c.Type.Kind == pgkind.Float:
			r.errorf(ag.Column.Pos, "%s: sum of %q (%s) would not be exact: a float sum depends on the order rows are added in; sum an integer or numeric column", what, c.Name, c.Type.Name)
		case ag.Func == AggSum && c.Type.Kind != pgkind.Int && c.Type.Kind != pgkind.Numeric:
			r.errorf(ag.Column.Pos, "%s: sum needs an integer or numeric column; %q is %s", what, c.Name, c.Type.Name)
		case (ag.Func == AggMin || ag.Func == AggMax) && !orderable(c.Type.Kind):
			r.errorf(ag.Column.Pos, "%s: %s needs a column with an order (a number, text, date or timestamp); %q is %s", what, ag.Func, c.Name, c.Type.Name)
		}
	}
	if ag.Func == AggLatest {
		checkAttrs(r, what, child, ag.Latest, nil)
		names := map[string]bool{}
		for _, a := range ag.Latest {
			if names[a.Name] {
				r.errorf(a.Pos, "%s: attribute %q is declared twice in the map", what, a.Name)
			}
			names[a.Name] = true
		}
		for _, o := range ag.Order {
			c := tableColumn(r, child, o.Name, o.Pos, what+" order")
			if c != nil && !orderable(c.Type.Kind) && c.Type.Kind != pgkind.UUID && c.Type.Kind != pgkind.Bool {
				r.errorf(o.Pos, "%s order: column %q has type %s, which has no order to rank rows by", what, o.Name, c.Type.Name)
			}
		}
	}
	if ag.Where != nil {
		paths := false
		ag.Where.Operands(func(o *Operand) {
			if o.IsColumn() && len(o.Path) > 0 && !paths {
				paths = true
				r.errorf(Pos{ag.Where.TextPos.Line, ag.Where.TextPos.Col + o.Offset},
					"%s where: {%s}: an aggregate's where tests columns of its own rows (%s.%s), not of copies", what, o.Ref(), child.Schema, child.Name)
			}
		})
		if !paths {
			rr := &refResolver{r: r, m: m, e: &Entity{Name: e.Name}, t: child, cat: cat, used: map[*Copy]bool{}}
			rr.checkCondition(ag.Where, what+" where")
		}
	}
}
