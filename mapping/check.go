package mapping

import (
	"fmt"
	"strings"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// Check validates a parsed mapping against the source catalog: tables and
// columns exist, key templates use columns with a sortable text form,
// conversions suit the column types, each entity's key identifies its row,
// and no two entities can produce the same item key. It returns every
// problem at once, sorted, or nil.
func Check(m *Mapping, cat *Catalog) Diagnostics {
	r := &reporter{file: m.File}
	for _, e := range m.Entities {
		checkEntity(r, m, e, cat)
	}
	checkCollisions(r, m)
	checkPatterns(r, m, cat)
	if len(r.diags) == 0 {
		return nil
	}
	return r.diags.sorted()
}

func checkEntity(r *reporter, m *Mapping, e *Entity, cat *Catalog) {
	if e.From == "" || e.Schema == "" {
		return // a parse problem, reported: there is no table to check against
	}
	t := relation(r, cat, e.Schema, e.From, e.FromPos)
	if t == nil {
		return
	}
	column := func(name string, p Pos, what string) *Column { return tableColumn(r, t, name, p, what) }
	rr := &refResolver{r: r, m: m, e: e, t: t, cat: cat, used: map[*Copy]bool{}}
	rr.checkTemplate(e.PK, e.Name+" key.pk", m.PartitionKeyType, false)
	rr.checkTemplate(e.SK, e.Name+" key.sk", m.SortKeyType, false)
	rr.checkCondition(e.Where, e.Name+" where")
	for _, ei := range e.Indexes {
		pkType, skType := KeyString, KeyString
		if ix := m.index(ei.Index); ix != nil {
			pkType, skType = ix.PartitionKeyType, ix.SortKeyType
		}
		rr.checkTemplate(ei.PK, e.Name+" index "+ei.Index+" pk", pkType, ei.Shard != nil)
		rr.checkTemplate(ei.SK, e.Name+" index "+ei.Index+" sk", skType, ei.Shard != nil)
		rr.checkCondition(ei.Where, e.Name+" index "+ei.Index+" where")
		if sh := ei.Shard; sh != nil && sh.By != "" {
			if c := column(sh.By, sh.ByPos, e.Name+" index "+ei.Index+" shard by"); c != nil && !c.Type.Kind.KeyUsable() {
				r.errorf(sh.ByPos, "%s index %s shard by: column %q has type %s, which cannot be hashed stably", e.Name, ei.Index, sh.By, c.Type.Name)
			}
		}
	}
	rr.checkCopiesUsed()
	names := attributeNames(r, m, e, t)
	for _, em := range e.Embeds {
		checkEmbed(r, m, e, t, em, cat)
		names.add(r, em.Attribute, em.Pos, "embed")
	}
	for _, ag := range e.Aggregates {
		checkAggregate(r, m, e, t, ag, cat)
		names.add(r, ag.Attribute, ag.Pos, "aggregate")
	}
	for _, cp := range e.Copies {
		checkCopy(r, e, t, cp, cat, names)
	}
	checkAttrs(r, e.Name, t, e.Attributes, e.Exclude)
	if t.OrderKey() == nil {
		r.errorf(e.FromPos, "table %s.%s has no primary key or NOT NULL unique key: rows cannot be read in a stable order or resumed", t.Schema, t.Name)
	} else if e.PK != nil && (m.SortKey == "" || e.SK != nil) {
		used := map[string]bool{}
		known := true
		var cols []string
		for _, c := range append(e.PK.OwnColumns(), skColumns(e)...) {
			if !used[c] {
				cols = append(cols, c)
			}
			used[c] = true
			// A column the table lacks is reported where the template
			// names it; that the key then misses the primary key is no
			// second problem.
			known = known && t.Column(c) != nil
		}
		if known && !coversUnique(t, used) {
			if ix, hint := singletonIndex(t, e, used, cols); ix == nil {
				r.errorf(e.Pos, "the key of %s does not include the primary key (%s) or another unique key of %s.%s, so two rows could produce the same item: %s",
					e.Name, strings.Join(t.OrderKey(), ", "), t.Schema, t.Name, hint)
			}
		}
	}
}

// attrNames tracks the attribute names an entity's item gets, to catch two
// rules writing the same attribute.
type attrNames struct {
	entity string
	seen   map[string]string
}

func attributeNames(r *reporter, m *Mapping, e *Entity, t *Table) *attrNames {
	n := &attrNames{entity: e.Name, seen: map[string]string{}}
	for _, a := range e.Attributes {
		n.seen[a.Name] = "an attribute"
	}
	if e.AllColumns {
		excluded := map[string]bool{}
		for _, x := range e.Exclude {
			excluded[x.Name] = true
		}
		reserved := m.reservedAttributes()
		for _, c := range t.Columns {
			if excluded[c.Name] {
				continue
			}
			if what, ok := reserved[c.Name]; ok {
				// "*" would silently overwrite what the tool writes itself.
				r.errorf(e.Pos, "column %q of %s.%s, selected by attributes: \"*\", would overwrite %s: exclude it and select it under another name", c.Name, t.Schema, t.Name, what)
				continue
			}
			if _, ok := n.seen[c.Name]; !ok {
				n.seen[c.Name] = "a column selected by \"*\""
			}
		}
	}
	return n
}

func (n *attrNames) add(r *reporter, name string, p Pos, what string) {
	if prev, ok := n.seen[name]; ok {
		r.errorf(p, "%s attribute %q of %s is already %s of the item", what, name, n.entity, prev)
		return
	}
	n.seen[name] = what + " attribute"
}

// relation finds a table for a rule, reporting it when missing.
func relation(r *reporter, cat *Catalog, schema, name string, p Pos) *Table {
	t := cat.Lookup(schema, name)
	if t == nil {
		r.errorf(p, "table %s.%s does not exist%s", schema, name, suggest(name, cat.tableNames(schema)))
	}
	return t
}

func tableColumn(r *reporter, t *Table, name string, p Pos, what string) *Column {
	c := t.Column(name)
	if c == nil {
		r.errorf(p, "%s: column %q does not exist in table %s.%s%s", what, name, t.Schema, t.Name, suggest(name, t.columnNames()))
	}
	return c
}

// checkJoin checks that each pair names real columns of comparable types:
// joined holds pair.Column, other holds pair.Other.
func checkJoin(r *reporter, what string, join []JoinPair, joined, other *Table) map[string]bool {
	cols := map[string]bool{}
	for _, jp := range join {
		a := tableColumn(r, joined, jp.Column, jp.Pos, what+" join")
		b := tableColumn(r, other, jp.Other, jp.Pos, what+" join")
		if a != nil && b != nil && !joinable(a.Type, b.Type) {
			r.errorf(jp.Pos, "%s join: %s.%s is %s but %s.%s is %s; they cannot be compared", what, joined.Name, jp.Column, a.Type.Name, other.Name, jp.Other, b.Type.Name)
		}
		cols[jp.Column] = true
	}
	return cols
}

func joinable(a, b pgkind.Type) bool {
	num := func(k pgkind.Kind) bool { return k == pgkind.Int || k == pgkind.Numeric || k == pgkind.Float }
	if num(a.Kind) && num(b.Kind) {
		return true
	}
	return a.Kind == b.Kind && a.Elem == b.Elem
}

func checkAttrs(r *reporter, owner string, t *Table, attrs []*Attribute, exclude []Ref) {
	for _, x := range exclude {
		tableColumn(r, t, x.Name, x.Pos, owner+" exclude")
	}
	for _, a := range attrs {
		c := tableColumn(r, t, a.Column, a.ColumnPos, fmt.Sprintf("%s attribute %q", owner, a.Name))
		if c != nil {
			if msg := conversionProblem(a.As, c.Type); msg != "" {
				r.errorf(a.Pos, "%s attribute %q: %s", owner, a.Name, msg)
			}
		}
	}
}

func checkEmbed(r *reporter, m *Mapping, e *Entity, parent *Table, em *Embed, cat *Catalog) {
	what := e.Name + " embed " + em.Attribute
	child := relation(r, cat, em.Schema, em.From, em.FromPos)
	if child == nil {
		return
	}
	checkJoin(r, what, em.Join, child, parent)
	if em.By.Name != "" {
		if c := tableColumn(r, child, em.By.Name, em.By.Pos, what+" by"); c != nil && !c.Type.Kind.KeyUsable() {
			r.errorf(em.By.Pos, "%s by: column %q has type %s, which cannot be a map key", what, em.By.Name, c.Type.Name)
		}
	}
	for _, o := range em.Order {
		tableColumn(r, child, o.Name, o.Pos, what+" order")
	}
	if len(em.Order) == 0 && child.OrderKey() == nil {
		r.errorf(em.Pos, "%s: table %s.%s has no primary key to order children by; declare order", what, child.Schema, child.Name)
	}
	checkAttrs(r, what, child, em.Attributes, em.Exclude)
}

func checkCopy(r *reporter, e *Entity, from *Table, cp *Copy, cat *Catalog, names *attrNames) {
	what := e.Name + " copy from " + cp.From
	parent := relation(r, cat, cp.Schema, cp.From, cp.FromPos)
	if parent == nil {
		return
	}
	joined := checkJoin(r, what, cp.Join, parent, from)
	for c := range joined {
		if parent.Column(c) == nil {
			return // a misspelled join column, reported: whether the join is unique is no second problem
		}
	}
	covers := false
	for _, u := range parent.Unique {
		all := true
		for _, c := range u {
			all = all && joined[c]
		}
		covers = covers || all
	}
	if !covers && len(cp.Join) > 0 {
		r.errorf(cp.Join[0].Pos, "%s: the join does not match a unique key of %s.%s, so a row could have several parents to copy from", what, parent.Schema, parent.Name)
	}
	checkAttrs(r, what, parent, cp.Attributes, nil)
	if cp.Into != "" {
		// The copy is one map attribute; its attributes are checked
		// against each other inside it.
		names.add(r, cp.Into, cp.IntoPos, "copy into")
		names = &attrNames{entity: e.Name + " " + cp.Into, seen: map[string]string{}}
	}
	for _, a := range cp.Attributes {
		names.add(r, a.Name, a.Pos, "copied")
	}
	for _, next := range cp.Copies {
		checkCopy(r, e, parent, next, cat, names)
	}
}

func skColumns(e *Entity) []string {
	if e.SK == nil {
		return nil
	}
	return e.SK.OwnColumns()
}

// coversUnique reports whether the used columns include every column of
// some unique key whose columns are NOT NULL (a NULL-able unique column does
// not identify rows).
func coversUnique(t *Table, used map[string]bool) bool {
next:
	for _, u := range t.Unique {
		for _, name := range u {
			c := t.Column(name)
			if !used[name] || c == nil || !c.NotNull {
				continue next
			}
		}
		return true
	}
	return false
}

func offsetInTemplate(t *Template, p Part) Pos {
	return Pos{t.TextPos.Line, t.TextPos.Col + p.Offset}
}

func conversionProblem(as Conversion, t pgkind.Type) string {
	k := t.Kind
	switch as {
	case AsDefault, AsString:
		return ""
	case AsNumber:
		if k == pgkind.Int || k == pgkind.Numeric || k == pgkind.Float || k == pgkind.Text {
			return ""
		}
	case AsEpochSecond, AsEpochMilli:
		if k == pgkind.Date || k == pgkind.Timestamp || k == pgkind.Timestamptz {
			return ""
		}
	case AsSet:
		if k == pgkind.Array {
			switch t.Elem {
			case pgkind.Text, pgkind.UUID, pgkind.Int, pgkind.Numeric, pgkind.Float, pgkind.Bytea:
				return ""
			}
			return fmt.Sprintf("as: set needs an array of strings, numbers or binary; the column is %s", t.Name)
		}
	case AsList:
		if k == pgkind.Array {
			return ""
		}
	case AsJSON:
		if k == pgkind.JSON {
			return ""
		}
	}
	return fmt.Sprintf("as: %s does not apply to a column of type %s", as, t.Name)
}

// checkCollisions reports pairs of entities whose item keys could be equal.
// Two templates can produce the same string only if their literal prefixes
// are compatible (one is a prefix of the other) and so are their literal
// suffixes; values never contain the separator, so this is conservative
// only for templates that differ inside placeholders.
func checkCollisions(r *reporter, m *Mapping) {
	for i, a := range m.Entities {
		for _, b := range m.Entities[i+1:] {
			if a.PK == nil || b.PK == nil || (m.SortKey != "" && (a.SK == nil || b.SK == nil)) {
				continue
			}
			if !mayOverlap(a.PK, b.PK) {
				continue
			}
			if m.SortKey != "" && !mayOverlap(a.SK, b.SK) {
				continue
			}
			r.errorf(b.Pos, "entities %s (%s:%d:%d) and %s can produce the same item key: make their pk or sk literals differ, e.g. distinct prefixes", a.Name, m.File, a.Pos.Line, a.Pos.Col, b.Name)
		}
	}
}

func mayOverlap(a, b *Template) bool {
	if a.Constant() && b.Constant() {
		return a.Raw == b.Raw
	}
	pa, pb := a.Prefix(), b.Prefix()
	if !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa) {
		return false
	}
	sa, sb := suffix(a), suffix(b)
	if !strings.HasSuffix(sa, sb) && !strings.HasSuffix(sb, sa) {
		return false
	}
	// Same structure with literal separators at different places cannot
	// match when values never contain the separator: compare the sequence
	// of literals when both templates have the same number of placeholders.
	la, lb := literals(a), literals(b)
	if len(la) == len(lb) {
		for i := range la {
			if la[i] != lb[i] && (i != 0 && i != len(la)-1) {
				return false
			}
		}
	}
	return true
}

func suffix(t *Template) string {
	var s string
	for i := len(t.Parts) - 1; i >= 0 && t.Parts[i].Column == ""; i-- {
		s = t.Parts[i].Literal + s
	}
	return s
}

// literals returns the literal runs between placeholders, including empty
// leading and trailing runs.
func literals(t *Template) []string {
	out := []string{""}
	for _, p := range t.Parts {
		if p.Column != "" {
			out = append(out, "")
			continue
		}
		out[len(out)-1] += p.Literal
	}
	return out
}
