package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// aggPlan builds one aggregate attribute from its value in the row: the
// one-row result of count, sum, min or max, or the latest child (zero or
// one row) for latest.
type aggPlan struct {
	ag    *mapping.Aggregate
	pos   int // row position of the aggregate's value
	cols  []mapping.Column
	attrs []*attrPlan // latest as a map; col = index into cols
}

// compileAggregate adds the aggregate's subquery to the source's query as
// an embed: a change of a child row then re-renders the parent as it does
// for embedded children (internal/affect), and plan, verify and prune
// expect what run writes.
func (s *Source) compileAggregate(ag *mapping.Aggregate, cat *mapping.Catalog) (*aggPlan, error) {
	child := cat.Lookup(ag.Schema, ag.From)
	if child == nil {
		return nil, fmt.Errorf("transform: table %s.%s is not in the catalog", ag.Schema, ag.From)
	}
	column := func(name string) (mapping.Column, error) {
		c := child.Column(name)
		if c == nil {
			return mapping.Column{}, fmt.Errorf("transform: column %s.%s is not in the catalog", ag.From, name)
		}
		return *c, nil
	}
	ap := &aggPlan{ag: ag}
	e := extract.Embed{Schema: child.Schema, Table: child.Name, Where: ag.Where, Aggregate: ag.Attribute}
	for _, jp := range ag.Join {
		e.On = append(e.On, extract.JoinOn{Column: jp.Column, Ref: -1, RefColumn: jp.Other})
	}
	if ag.Where != nil {
		var err error
		ag.Where.Operands(func(o *mapping.Operand) {
			if !o.IsColumn() || slices.ContainsFunc(e.WhereColumns, func(c mapping.Column) bool { return c.Name == o.Column }) {
				return
			}
			c, cerr := column(o.Column)
			if cerr != nil {
				err = cerr
			}
			e.WhereColumns = append(e.WhereColumns, c)
		})
		if err != nil {
			return nil, err
		}
	}
	switch ag.Func {
	case mapping.AggCount:
		e.Agg, e.AggColumn = ag.Func, ag.Column.Name
		ap.cols = []mapping.Column{{Name: "count", Type: pgkind.Type{Name: "bigint", Kind: pgkind.Int}}}
	case mapping.AggSum:
		e.Agg, e.AggColumn = ag.Func, ag.Column.Name
		ap.cols = []mapping.Column{{Name: ag.Column.Name, Type: pgkind.Type{Name: "numeric", Kind: pgkind.Numeric}}}
	case mapping.AggMin, mapping.AggMax:
		c, err := column(ag.Column.Name)
		if err != nil {
			return nil, err
		}
		e.Agg, e.AggColumn = ag.Func, ag.Column.Name
		ap.cols = []mapping.Column{c}
	case mapping.AggLatest:
		names := ag.Columns()
		for _, n := range names {
			c, err := column(n)
			if err != nil {
				return nil, err
			}
			ap.cols = append(ap.cols, c)
		}
		for _, a := range ag.Latest {
			ap.attrs = append(ap.attrs, &attrPlan{col: slices.Index(names, a.Column), a: *a})
		}
		for _, o := range ag.Order {
			e.OrderBy = append(e.OrderBy, o.Name)
		}
		// Ties go to the greatest primary key: the same row on every run.
		for _, k := range child.OrderKey() {
			if !slices.Contains(e.OrderBy, k) {
				e.OrderBy = append(e.OrderBy, k)
			}
		}
		e.Desc, e.Limit = true, 1
	default:
		return nil, fmt.Errorf("transform: aggregate %s: unknown function %q", ag.Attribute, ag.Func)
	}
	e.Columns = ap.cols
	s.Query.Embeds = append(s.Query.Embeds, e)
	idx := len(s.Query.Embeds) - 1
	s.fixups = append(s.fixups, fixup{rel: -2 - idx, dst: &ap.pos})
	return ap, nil
}

// build returns the aggregate's attribute; ok is false when it is absent
// (min, max or latest of no rows, or of NULL). col names the child column
// at fault, for the row error.
func (ap *aggPlan) build(v any, al *avAlloc) (av types.AttributeValue, ok bool, col string, err error) {
	rows, _ := v.([]extract.Row)
	if ap.ag.Func != mapping.AggLatest && len(rows) != 1 {
		return nil, false, "", fmt.Errorf("%d result rows, want 1", len(rows))
	}
	if len(rows) == 0 {
		return nil, false, "", nil
	}
	row := rows[0]
	if ap.attrs == nil { // one value
		c := ap.cols[0]
		av, ok, err := attributeValue(row.Values[0], c.Type, mapping.AsDefault, mapping.NullOmit, al)
		if err != nil {
			// The number's own advice (as: string) is no option for an
			// aggregate: the figure cannot be held, and that is the error.
			msg := strings.NewReplacer(" (declare as: string to keep it exact as text)", "", "; declare as: string to keep it exact as text", "").Replace(err.Error())
			return nil, false, ap.ag.Column.Name, fmt.Errorf("%s of %s.%s: %s", ap.ag.Func, ap.ag.From, c.Name, msg)
		}
		return av, ok, "", nil
	}
	m := make(map[string]types.AttributeValue, len(ap.attrs))
	for _, at := range ap.attrs {
		c := ap.cols[at.col]
		av, ok, err := attributeValue(row.Values[at.col], c.Type, at.a.As, at.a.Null, al)
		if err == nil && ok {
			err = checkNesting(av, 2) // in the latest map, in the item
		}
		if err != nil {
			return nil, false, c.Name, fmt.Errorf("latest %s.%s: %w", ap.ag.From, c.Name, err)
		}
		if ok {
			m[at.a.Name] = av
		}
	}
	return &types.AttributeValueMemberM{Value: m}, true, "", nil
}
