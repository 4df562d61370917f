package mapdoc

import (
	"fmt"
	"strings"

	"github.com/pgdynamo/migrate/mapping"
)

// aggregateShape describes an entity's aggregates, one line each (and the
// attributes of a latest map under it): what is computed over which child
// rows, and what a parent without such rows gets.
func aggregateShape(e *mapping.Entity) []string {
	var out []string
	for _, ag := range e.Aggregates {
		var joins []string
		for _, j := range ag.Join {
			joins = append(joins, code(ag.From+"."+j.Column)+" = "+code(e.From+"."+j.Other))
		}
		rows := fmt.Sprintf("the rows of %s where %s", code(ag.Schema+"."+ag.From), strings.Join(joins, " and "))
		if ag.Where != nil {
			rows += " and " + code(ag.Where.Raw)
		}
		var what string
		switch ag.Func {
		case mapping.AggCount:
			if ag.Column.Name == "" {
				what = "the number of " + strings.TrimPrefix(rows, "the ") + " (0 when none)"
			} else {
				what = fmt.Sprintf("the number of non-NULL %s of %s (0 when none)", code(ag.Column.Name), rows)
			}
		case mapping.AggSum:
			what = fmt.Sprintf("the exact sum of %s over %s (0 when none)", code(ag.Column.Name), rows)
		case mapping.AggMin, mapping.AggMax:
			what = fmt.Sprintf("the %s %s of %s (absent when none)", ag.Func, code(ag.Column.Name), rows)
		case mapping.AggLatest:
			var order []string
			for _, o := range ag.Order {
				order = append(order, code(o.Name))
			}
			of := fmt.Sprintf("of the latest of %s by %s (absent when none)", rows, strings.Join(order, ", "))
			if ag.Column.Name != "" {
				what = code(ag.Column.Name) + " " + of
			} else {
				what = "a map " + of + ", holding:"
			}
		}
		out = append(out, fmt.Sprintf("- %s: %s", code(ag.Attribute), what))
		if ag.Func == mapping.AggLatest && ag.Column.Name == "" {
			out = append(out, "  - "+attributeList(&mapping.Entity{Attributes: ag.Latest}))
		}
	}
	return out
}
