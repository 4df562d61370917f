package mapping

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// refResolver resolves the column references of one entity's templates
// and where clauses: a bare name is a column of the entity's table; a path
// (customers.country) goes through the entity's copies, by their into or
// table name, to a column of the copied parent. Copies reached are marked
// used.
type refResolver struct {
	r    *reporter
	m    *Mapping
	e    *Entity
	t    *Table
	cat  *Catalog
	used map[*Copy]bool
}

func (rr *refResolver) resolve(path []string, column string, p Pos, what string) *Column {
	t := rr.t
	level := rr.e.Copies
	via := ""
	for i, seg := range path {
		var found []*Copy
		var names []string
		for _, c := range level {
			names = append(names, c.Name())
			if c.Name() == seg {
				found = append(found, c)
			}
		}
		switch {
		case len(found) == 0:
			where := rr.e.Name
			if i > 0 {
				where = "the copy " + strings.Join(path[:i], ".")
			}
			if len(names) == 0 {
				rr.r.errorf(p, "%s: {%s}: %s has no copies; a path names a copied parent (copy: [{from: %s, join: {...}}])", what, refText(path, column), where, seg)
			} else {
				rr.r.errorf(p, "%s: {%s}: %s has no copy named %q%s", what, refText(path, column), where, seg, suggest(seg, names))
			}
			return nil
		case len(found) > 1:
			rr.r.errorf(p, "%s: {%s}: %d copies are named %q; give each its own into: NAME and use that", what, refText(path, column), len(found), seg)
			return nil
		}
		cp := found[0]
		rr.used[cp] = true
		parent := rr.cat.Lookup(cp.Schema, cp.From)
		if parent == nil {
			return nil // reported by the copy's own check
		}
		t, level = parent, cp.Copies
		via = fmt.Sprintf(" (the copied parent %s)", strings.Join(path[:i+1], "."))
	}
	c := t.Column(column)
	if c != nil {
		return c
	}
	msg := fmt.Sprintf("%s: column %q does not exist in table %s.%s%s", what, column, t.Schema, t.Name, via)
	if len(path) == 0 {
		if hint := rr.parentHint(column); hint != "" {
			rr.r.errorf(p, "%s; %s", msg, hint)
			return nil
		}
	}
	rr.r.errorf(p, "%s%s", msg, suggest(column, t.columnNames()))
	return nil
}

func refText(path []string, column string) string {
	return Part{Path: path, Column: column}.Ref()
}

// parentHint explains how to reach a column that the entity's table lacks
// but a parent has: through a copy the entity already has, or one to add.
func (rr *refResolver) parentHint(column string) string {
	var paths []string
	var walk func(prefix []string, cs []*Copy)
	walk = func(prefix []string, cs []*Copy) {
		for _, c := range cs {
			p := append(append([]string(nil), prefix...), c.Name())
			if t := rr.cat.Lookup(c.Schema, c.From); t != nil && t.Column(column) != nil {
				paths = append(paths, refText(p, column))
			}
			walk(p, c.Copies)
		}
	}
	walk(nil, rr.e.Copies)
	if len(paths) > 0 {
		return fmt.Sprintf("it is a column of a copied parent: write {%s}", strings.Join(paths, "} or {"))
	}
	var tables []string
	for _, t := range rr.cat.Tables {
		if t.Schema == rr.t.Schema && t != rr.t && t.Column(column) != nil {
			tables = append(tables, t.Name)
		}
	}
	if len(tables) == 0 || len(tables) > 3 {
		return ""
	}
	sort.Strings(tables)
	return fmt.Sprintf("a key or where clause can use a parent's column through a copy: copy: [{from: %s, join: {<its key>: <column of %s>}}], then write {%s}",
		tables[0], rr.t.Name, refText([]string{tables[0]}, column))
}

// checkTemplate checks a key template of an entity: columns resolve, types
// have a key form, functions apply, and the value suits the key attribute's
// type (S, N or B).
func (rr *refResolver) checkTemplate(tpl *Template, what string, typ KeyType, shard bool) {
	if tpl == nil {
		return
	}
	parts := tpl.Placeholders()
	if typ == KeyNumber || typ == KeyBinary {
		if len(parts) != 1 || len(tpl.Parts) != 1 {
			rr.r.errorf(tpl.Pos, "%s: the key attribute is of type %s, so the template must be one placeholder and nothing else, not %q", what, typ, tpl.Raw)
			return
		}
	}
	for _, part := range parts {
		if shard && part.Column == ShardPlaceholder && len(part.Path) == 0 {
			continue
		}
		p := offsetInTemplate(tpl, part)
		c := rr.resolve(part.Path, part.Column, p, what)
		if c == nil {
			continue
		}
		rr.checkPart(tpl, part, c.Type, p, what, typ)
	}
}

// checkPart checks one placeholder whose value has type t.
func (rr *refResolver) checkPart(tpl *Template, part Part, t pgkind.Type, p Pos, what string, typ KeyType) {
	ref := part.Ref()
	if part.Width > 0 && t.Kind != pgkind.Int {
		rr.r.errorf(p, "%s: zero-padding {%s:%d} applies to integer columns; %q is %s", what, ref, part.Width, ref, t.Name)
		return
	}
	kind := t.Kind
	if typ == KeyBinary {
		if kind != pgkind.Bytea || len(part.Funcs) > 0 {
			rr.r.errorf(p, "%s: the key attribute is binary (B): {%s} must be a bytea column without functions; %q is %s", what, ref, ref, t.Name)
		}
		return
	}
	if len(part.Funcs) == 0 && !kind.KeyUsable() {
		rr.r.errorf(p, "%s: column %q has type %s, which has no sortable text form for a key", what, ref, t.Name)
		return
	}
	for _, f := range part.Funcs {
		fp := Pos{tpl.TextPos.Line, tpl.TextPos.Col + f.Offset}
		out, msg := FuncResult(f.Name, kind)
		if msg != "" {
			what2 := kind.String()
			if kind == t.Kind {
				what2 = t.Name
			}
			rr.r.errorf(fp, "%s: {%s|%s}: %s %s, but the value is %s", what, ref, f.Name, f.Name, msg, what2)
			return
		}
		if chars := EncodingChars(f.Name); strings.ContainsAny(rr.m.Separator, chars) && typ == KeyString {
			rr.r.errorf(fp, "%s: {%s|%s} writes %q, which is in the separator %q: keys would be ambiguous; choose another separator", what, ref, f.Name, chars, rr.m.Separator)
		}
		kind = out
	}
	if typ == KeyNumber && kind != pgkind.Int && kind != pgkind.Numeric || typ == KeyNumber && part.Width > 0 {
		rr.r.errorf(p, "%s: the key attribute is a number (N): {%s} must be an integer or numeric value (or |year, |month, |day of a date) without padding; %q is %s", what, ref, ref, kindName2(kind, t))
	}
}

func kindName2(k pgkind.Kind, t pgkind.Type) string {
	if k == t.Kind {
		return t.Name
	}
	return k.String()
}

// checkCondition resolves a where clause's columns and checks that each
// test suits the types it compares.
func (rr *refResolver) checkCondition(c *Condition, what string) {
	if c == nil {
		return
	}
	kinds := map[*Operand]pgkind.Type{}
	ok := true
	at := func(o *Operand) Pos { return Pos{c.TextPos.Line, c.TextPos.Col + o.Offset} }
	c.Operands(func(o *Operand) {
		if !o.IsColumn() {
			return
		}
		col := rr.resolve(o.Path, o.Column, at(o), what)
		if col == nil {
			ok = false
			return
		}
		kinds[o] = col.Type
	})
	if !ok {
		return
	}
	// check reports whether operand o may be compared with a value of the
	// column type t (o a literal or another column).
	check := func(o *Operand, t pgkind.Type, ordered bool, col *Operand) {
		if ot, isCol := kinds[o]; isCol {
			if !joinable(ot, t) {
				rr.r.errorf(at(o), "%s: %s is %s but %s is %s; they cannot be compared", what, o.Ref(), ot.Name, col.Ref(), t.Name)
			}
			return
		}
		if msg := literalProblem(*o, t); msg != "" {
			rr.r.errorf(at(o), "%s: %s", what, msg)
		}
	}
	ordering := func(o *Operand, t pgkind.Type, op string) bool {
		switch t.Kind {
		case pgkind.Text, pgkind.UUID, pgkind.Bool:
			rr.r.errorf(at(o), "%s: %s on %s (%s) would order by PostgreSQL's collation or type rules, which the transform does not reproduce: use =, <>, IN or IS", what, op, o.Ref(), t.Name)
			return false
		}
		return true
	}
	comparable := func(o *Operand, t pgkind.Type) bool {
		switch t.Kind {
		case pgkind.Int, pgkind.Numeric, pgkind.Float, pgkind.Text, pgkind.UUID, pgkind.Bool, pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
			return true
		}
		rr.r.errorf(at(o), "%s: %s has type %s, which a where clause can only test with IS NULL or IS NOT NULL", what, o.Ref(), t.Name)
		return false
	}
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Logic:
			for _, t := range e.Terms {
				walk(t)
			}
		case *Not:
			walk(e.X)
		case *Compare:
			col, other := &e.L, &e.R
			if !col.IsColumn() {
				col, other = other, col
			}
			if !col.IsColumn() {
				rr.r.errorf(at(&e.L), "%s: %s compares two values: one side must be a column", what, e.Op)
				return
			}
			t := kinds[col]
			if other.Lit == LitNull {
				rr.r.errorf(at(other), "%s: %s NULL is never true in SQL: write %s IS NULL (or IS NOT NULL)", what, e.Op, col.Ref())
				return
			}
			if !comparable(col, t) {
				return
			}
			if e.Op != "=" && e.Op != "<>" && !ordering(col, t, e.Op) {
				return
			}
			check(other, t, e.Op != "=" && e.Op != "<>", col)
		case *IsNull:
			if !e.X.IsColumn() {
				rr.r.errorf(at(&e.X), "%s: IS NULL tests a column", what)
			}
		case *IsBool, *Truth:
			var x *Operand
			if b, ok := e.(*IsBool); ok {
				x = &b.X
			} else {
				x = &e.(*Truth).X
			}
			if t, isCol := kinds[x]; !isCol || t.Kind != pgkind.Bool {
				name := x.Text
				if x.IsColumn() {
					name = fmt.Sprintf("%s (%s)", x.Ref(), t.Name)
				}
				rr.r.errorf(at(x), "%s: %s is not a boolean column: compare it (=, <>, IN) or test IS NULL", what, name)
			}
		case *In:
			if !e.X.IsColumn() {
				rr.r.errorf(at(&e.X), "%s: IN tests a column", what)
				return
			}
			t := kinds[&e.X]
			if !comparable(&e.X, t) {
				return
			}
			for i := range e.List {
				if e.List[i].Lit == LitNull {
					rr.r.errorf(at(&e.List[i]), "%s: NULL in an IN list never matches: test %s IS NULL instead", what, e.X.Ref())
					continue
				}
				check(&e.List[i], t, false, &e.X)
			}
		case *Between:
			if !e.X.IsColumn() {
				rr.r.errorf(at(&e.X), "%s: BETWEEN tests a column", what)
				return
			}
			t := kinds[&e.X]
			if !comparable(&e.X, t) || !ordering(&e.X, t, "BETWEEN") {
				return
			}
			check(&e.Lo, t, true, &e.X)
			check(&e.Hi, t, true, &e.X)
		}
	}
	walk(c.Expr)
}

// literalProblem says why a literal cannot be compared with a column of
// type t, or "".
func literalProblem(o Operand, t pgkind.Type) string {
	switch t.Kind {
	case pgkind.Int, pgkind.Numeric, pgkind.Float:
		if o.Lit != LitNumber {
			return fmt.Sprintf("%s is %s: compare it with a number, not %s", "the column", t.Name, literalText(o))
		}
	case pgkind.Text:
		if o.Lit != LitString {
			return fmt.Sprintf("the column is %s: compare it with a 'quoted' text, not %s", t.Name, literalText(o))
		}
	case pgkind.UUID:
		if o.Lit != LitString || !isUUID(o.Text) {
			return fmt.Sprintf("the column is uuid: compare it with a 'quoted' uuid, not %s", literalText(o))
		}
	case pgkind.Bool:
		if o.Lit != LitBool {
			return fmt.Sprintf("the column is boolean: compare it with TRUE or FALSE, not %s", literalText(o))
		}
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		if o.Lit != LitString {
			return fmt.Sprintf("the column is %s: compare it with a 'quoted' date or timestamp, not %s", t.Name, literalText(o))
		}
		if _, _, err := TimeLiteral(o.Text, t.Kind); err != nil {
			return err.Error()
		}
	}
	return ""
}

func literalText(o Operand) string {
	switch o.Lit {
	case LitString:
		return "'" + strings.ReplaceAll(o.Text, "'", "''") + "'"
	case LitBool, LitNull:
		return strings.ToUpper(o.Text)
	}
	return o.Text
}

func isUUID(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// checkCopiesUsed reports copies that copy nothing and that no template or
// where clause reaches through.
func (rr *refResolver) checkCopiesUsed() {
	var walk func(cs []*Copy)
	walk = func(cs []*Copy) {
		for _, c := range cs {
			if len(c.Attributes) == 0 && len(c.Copies) == 0 && !rr.used[c] {
				rr.r.errorf(c.Pos, "copy from %s copies nothing and no key or where clause uses it: add attributes, or use it as {%s.column}", c.From, QuoteName(c.Name()))
			}
			walk(c.Copies)
		}
	}
	walk(rr.e.Copies)
}
