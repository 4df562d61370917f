package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// accessPattern is one question the draft's keys answer, written twice:
// as the GetItem or Query that answers it and as the same question in SQL,
// so that "migrate prove" can compare the two on the migrated table.
type accessPattern struct {
	name, what, op string
	slot           int // the GSI a Query reads; 0: the table

	pk keyPart
	// sk is a GetItem's sort key; for a Query, the literal of its sort
	// key condition (skOp), if it has one.
	sk   keyPart
	skOp string // "", mapping.CondEq or mapping.CondBeginsWith

	// The parameters are the columns cols of the first member, drawn from
	// the columns fromCols (pairwise) of from.
	from     *mapping.Table
	fromCols []string
	members  []member

	// order lists the first member's columns the answer is sorted by in
	// the sort key; unordered says why SQL cannot sort it the same way.
	order     []string
	unordered string
	// left says why the pattern is only listed and not written out.
	left string
}

// member is an entity a pattern reads, with its columns that equal the
// pattern's parameters, in parameter order.
type member struct {
	e    *entity
	cols []string
}

// keyPart is a key template: prefix, then the columns' placeholders, each
// after a separator; integers zero-padded when pad is set.
type keyPart struct {
	prefix string
	cols   []string
	pad    bool
}

func (k keyPart) render(t *mapping.Table, name func(string) string) string {
	if len(k.cols) == 0 {
		return k.prefix
	}
	return k.prefix + separator + placeholdersNamed(t, k.cols, k.pad, name)
}

// cond is the key for the pattern list: PK=ORDER#<order_id>.
func (k keyPart) cond() string {
	if len(k.cols) == 0 {
		return k.prefix
	}
	return k.prefix + separator + "<" + strings.Join(k.cols, ">"+separator+"<") + ">"
}

func (ap *accessPattern) table() *mapping.Table { return ap.members[0].e.table }

// params names the parameter of each of the first member's columns: the
// column's own name where SQL's @name and a placeholder can hold it.
func (ap *accessPattern) params() map[string]string {
	out := map[string]string{}
	taken := map[string]bool{}
	for _, c := range ap.members[0].cols {
		name := paramName(c)
		for base, n := name, 2; taken[name]; n++ {
			name = fmt.Sprintf("%s%d", base, n)
		}
		taken[name] = true
		out[c] = name
	}
	return out
}

var paramChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// paramName makes a column name a pattern parameter name: @name in SQL
// takes letters, digits and _ only, and {shard} is the shard number.
func paramName(col string) string {
	name := strings.Trim(paramChars.ReplaceAllString(col, "_"), "_")
	if name == "" || unicode.IsDigit(rune(name[0])) {
		name = "p_" + name
	}
	if name == mapping.ShardPlaceholder {
		name += "_"
	}
	return name
}

// pkTemplate and skTemplate are the pattern's templates, whose
// placeholders name its parameters.
func (ap *accessPattern) pkTemplate() string {
	names := ap.params()
	return ap.pk.render(ap.table(), func(c string) string { return names[c] })
}

func (ap *accessPattern) skTemplate() string {
	names := ap.params()
	return ap.sk.render(ap.table(), func(c string) string { return names[c] })
}

// reads reports whether the pattern could return an item with these key
// templates in the table or index it reads: partition keys of one shape
// (the same literal segments, placeholders in the same segments) and a
// sort key its condition may accept.
func (ap *accessPattern) reads(pk, sk string) bool {
	if !slices.Equal(shape(ap.pk.render(ap.table(), identity)), shape(pk)) {
		return false
	}
	lit := ap.sk.prefix
	lead, wild := literalHead(sk)
	switch {
	case ap.op == mapping.OpGetItem:
		return slices.Equal(shape(ap.sk.render(ap.table(), identity)), shape(sk))
	case ap.skOp == "":
		return true
	case ap.skOp == mapping.CondEq && !wild:
		return sk == lit
	case ap.skOp == mapping.CondEq:
		return strings.HasPrefix(lit, lead)
	case !wild:
		return strings.HasPrefix(sk, lit)
	}
	return strings.HasPrefix(lead, lit) || strings.HasPrefix(lit, lead)
}

func identity(s string) string { return s }

// shape is a template's segments between separators, each placeholder
// segment written as "{}".
func shape(tmpl string) []string {
	var out []string
	for _, seg := range splitTemplate(tmpl) {
		if strings.Contains(seg, "{") {
			seg = "{}"
		}
		out = append(out, seg)
	}
	return out
}

// splitTemplate splits a drafted template at separators outside braces.
func splitTemplate(tmpl string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(tmpl); i++ {
		switch {
		case tmpl[i] == '{':
			depth++
		case tmpl[i] == '}':
			depth--
		case depth == 0 && strings.HasPrefix(tmpl[i:], separator):
			out = append(out, tmpl[start:i])
			start = i + len(separator)
		}
	}
	return append(out, tmpl[start:])
}

// literalHead is a template's text before its first placeholder, and
// whether it has one.
func literalHead(tmpl string) (string, bool) {
	i := strings.IndexByte(tmpl, '{')
	if i < 0 {
		return tmpl, false
	}
	return tmpl[:i], true
}

// buildPatterns writes down each entity's patterns, checks that each reads
// only the entities it means to, and names them.
func (d *design) buildPatterns() {
	names := map[string]bool{}
	for _, e := range d.entities {
		e.patterns = d.tablePatterns(e)
		for _, u := range e.indexes {
			e.patterns = append(e.patterns, u.pattern)
		}
		for _, ap := range e.patterns {
			d.checkReads(ap)
			for base, n := ap.name, 2; names[ap.name]; n++ {
				ap.name = fmt.Sprintf("%s%d", base, n)
			}
			names[ap.name] = true
		}
	}
}

// checkReads leaves a pattern out when another entity's items could be in
// its answer: a key shape two entities share by chance, which the SQL of
// one entity would not count.
func (d *design) checkReads(ap *accessPattern) {
	var others []string
	for _, o := range d.entities {
		if slices.ContainsFunc(ap.members, func(m member) bool { return m.e == o }) {
			continue
		}
		if ap.slot == 0 && ap.reads(o.pk, o.sk) {
			others = append(others, o.name)
		}
		for _, u := range o.indexes {
			if ap.slot > 0 && u.slot == ap.slot && ap.reads(u.pk, u.sk) {
				others = append(others, o.name)
			}
		}
	}
	if len(others) > 0 {
		ap.left = fmt.Sprintf("items of %s have keys of the same shape, so its answer may hold them too", andList(others))
	}
}

// tablePatterns are the patterns of an entity's own key on the table.
func (d *design) tablePatterns(e *entity) []*accessPattern {
	var ps []*accessPattern
	switch {
	case e.edge != nil:
		a, b := e.edge[0], e.edge[1]
		ps = append(ps, d.edgePattern(e, a, b), d.getPattern(e))
	case e.parent != nil:
		p := e.parent
		pkCols := mapped(e.parentFK, p.key)
		ap := &accessPattern{
			name: lowerCamel(e.table.Name) + "Of" + p.name,
			what: fmt.Sprintf("the %s of %s", human(e.table.Name, false), article(p.single())),
			op:   mapping.OpQuery,
			pk:   keyPart{prefix: p.prefix, cols: pkCols},
			from: p.table, fromCols: p.key,
			members: []member{{e, pkCols}},
			order:   minus(e.key, pkCols),
		}
		ap.skCondition(e.sk, e.prefix)
		ps = append(ps, ap)
		if subset(pkCols, e.key) {
			ps = append(ps, d.getPattern(e))
		}
	default:
		ps = append(ps, d.getPattern(e))
		if with := d.partitionMembers(e); len(with) > 0 {
			ap := &accessPattern{
				name: lowerCamel(e.name) + "Collection",
				what: fmt.Sprintf("%s with its %s", article(e.single()), andList(with)),
				op:   mapping.OpQuery,
				pk:   keyPart{prefix: e.prefix, cols: e.key},
				from: e.table, fromCols: e.key,
				members:   []member{{e, e.key}},
				unordered: "an item collection holds several entities, which SQL cannot sort by the sort key",
			}
			for _, c := range e.children {
				ap.members = append(ap.members, member{c, mapped(c.parentFK, e.key)})
			}
			for _, o := range d.entities {
				if d.edgeOf(o, e) {
					ap.members = append(ap.members, member{o, mapped(o.edge[0].fk, e.key)})
				}
			}
			ps = append(ps, ap)
		}
	}
	return ps
}

// edgeOf reports whether o is an adjacency list in e's partition.
func (d *design) edgeOf(o, e *entity) bool {
	return o.edge != nil && o.edge[0].ref == e && o.edge[0].prefix == e.prefix && sameSet(o.edge[0].fk.RefColumns, e.key)
}

// skCondition sets a Query's sort key condition from the sort key template
// of the entity it lists: its literal head when it has placeholders, else
// the whole literal.
func (ap *accessPattern) skCondition(sk, prefix string) {
	if _, wild := literalHead(sk); wild {
		ap.sk, ap.skOp = keyPart{prefix: prefix + separator}, mapping.CondBeginsWith
		return
	}
	ap.sk, ap.skOp = keyPart{prefix: sk}, mapping.CondEq
}

// getPattern reads an item by its whole primary key on the table.
func (d *design) getPattern(e *entity) *accessPattern {
	ap := &accessPattern{name: lowerCamel(e.name), what: article(e.single()), op: mapping.OpGetItem,
		from: e.table, fromCols: e.key, members: []member{{e, e.key}}}
	switch {
	case e.edge != nil:
		a, b := e.edge[0], e.edge[1]
		acols, _ := sideColumns(a)
		ap.pk = keyPart{prefix: a.prefix, cols: acols}
		ap.sk = keyPart{prefix: b.prefix, cols: minus(b.fk.Columns, a.fk.Columns), pad: true}
	case e.parent != nil:
		pkCols := mapped(e.parentFK, e.parent.key)
		ap.pk = keyPart{prefix: e.parent.prefix, cols: pkCols}
		ap.sk = keyPart{prefix: e.prefix, cols: minus(e.key, pkCols), pad: true}
	default:
		ap.pk = keyPart{prefix: e.prefix, cols: e.key}
		ap.sk = keyPart{prefix: e.sk}
	}
	return ap
}

// sideColumns are the columns of an adjacency list's side as its
// partition key names them, and the referenced columns, pairwise.
func sideColumns(s side) (cols, refCols []string) {
	if sameSet(s.fk.RefColumns, s.ref.key) {
		return mapped(s.fk, s.ref.key), s.ref.key
	}
	return s.fk.Columns, s.fk.RefColumns
}

// edgePattern lists the other side of an adjacency list for one side: on
// the table for its first side, on the inverted index for its second.
func (d *design) edgePattern(e *entity, by, of side) *accessPattern {
	cols, refCols := by.fk.Columns, by.fk.RefColumns
	if by == e.edge[0] {
		cols, refCols = sideColumns(by)
	}
	return &accessPattern{
		name: lowerCamel(plural(of)) + "Of" + camel(singularOf(by)),
		what: fmt.Sprintf("the %s of %s (%s)", plural(of), article(singularOf(by)), human(e.table.Name, false)),
		op:   mapping.OpQuery,
		pk:   keyPart{prefix: by.prefix, cols: cols},
		sk:   keyPart{prefix: of.prefix + separator}, skOp: mapping.CondBeginsWith,
		from: by.ref.table, fromCols: refCols,
		members: []member{{e, cols}},
		order:   minus(of.fk.Columns, by.fk.Columns),
	}
}

// byKeyPattern reads a child by its own key on an index.
func (d *design) byKeyPattern(e *entity) *accessPattern {
	return &accessPattern{
		name: lowerCamel(e.name), what: article(e.single()) + " by its key", op: mapping.OpQuery,
		pk: keyPart{prefix: e.prefix, cols: e.key},
		sk: keyPart{prefix: e.prefix}, skOp: mapping.CondEq,
		from: e.table, fromCols: e.key, members: []member{{e, e.key}},
	}
}

func (d *design) foreignKeyPattern(e *entity, fk *ForeignKey, prefix, what string) *accessPattern {
	return &accessPattern{
		name: lowerCamel(e.table.Name) + "Of" + camel(human(prefix, false)), what: what, op: mapping.OpQuery,
		pk: keyPart{prefix: prefix, cols: fk.Columns},
		sk: keyPart{prefix: e.prefix + separator}, skOp: mapping.CondBeginsWith,
		from: d.byTable[fk.RefTable].table, fromCols: fk.RefColumns,
		members: []member{{e, fk.Columns}},
		order:   e.key,
	}
}

func (d *design) lookupPattern(e *entity, u []string, prefix string) *accessPattern {
	return &accessPattern{
		name: lowerCamel(e.name) + "By" + strings.Join(camelWords(u), "And"),
		what: fmt.Sprintf("%s by %s", article(human(e.table.Name, true)), columnsPhrase(u)), op: mapping.OpQuery,
		pk: keyPart{prefix: prefix, cols: u},
		sk: keyPart{prefix: e.prefix}, skOp: mapping.CondEq,
		from: e.table, fromCols: u, members: []member{{e, u}},
	}
}

// camel is a phrase in CamelCase: "project member" → ProjectMember.
func camel(phrase string) string { return strings.Join(camelWords([]string{phrase}), "") }

// camelWords writes each name in CamelCase: [tenant_id email] → [TenantId Email].
func camelWords(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		for _, w := range words(n) {
			r := []rune(w)
			out[i] += strings.ToUpper(string(r[0])) + string(r[1:])
		}
	}
	return out
}

// cond is the pattern as the list at the top of the draft shows it.
func (ap *accessPattern) cond() string {
	var b strings.Builder
	if ap.slot > 0 {
		b.WriteString(indexName(ap.slot) + " ")
	}
	b.WriteString("PK=" + ap.pk.cond())
	switch {
	case ap.op == mapping.OpGetItem, ap.skOp == mapping.CondEq:
		b.WriteString(", SK=" + ap.sk.cond())
	case ap.skOp == mapping.CondBeginsWith:
		b.WriteString(", SK begins_with " + ap.sk.prefix)
	}
	return b.String()
}

// ordering is the SQL ORDER BY that sorts rows as the sort key sorts
// their items, or why there is none: byte order of the key text equals
// the columns' order when each column's text sorts like its values
// (zero-padded integers, uuids, dates, UTC timestamps; text in byte
// order, COLLATE "C") and every column but the last has a fixed width, so
// that a separator never meets a longer value's next character.
func (ap *accessPattern) ordering() (string, string) {
	t := ap.table()
	var exprs []string
	for i, name := range ap.order {
		c := t.Column(name)
		if c == nil {
			return "", fmt.Sprintf("column %s is not in the catalog", name)
		}
		if slices.Contains(ap.members[0].cols, name) {
			continue // a parameter: the same text in every key, it sorts nothing
		}
		switch c.Type.Kind {
		case pgkind.Int, pgkind.UUID, pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz, pgkind.Bool:
			exprs = append(exprs, ident(name))
		case pgkind.Text:
			// A separator after it would sort "a#" after "a b" (space
			// before #), where SQL puts "a" first.
			if i < len(ap.order)-1 {
				return "", fmt.Sprintf("the sort key holds %s, of variable width, before other columns", name)
			}
			if c.Type.Name == "text" || strings.HasPrefix(c.Type.Name, "character varying") {
				exprs = append(exprs, ident(name)+` COLLATE "C"`)
			} else { // char(n), enums, domains: as the text the key holds
				exprs = append(exprs, ident(name)+`::text COLLATE "C"`)
			}
		default:
			return "", fmt.Sprintf("the sort key holds %s (%s), whose key text does not sort as its values do", name, c.Type.Name)
		}
	}
	return strings.Join(exprs, ", "), ""
}

// sql is the pattern's question against the source.
func (ap *accessPattern) sql(schema string) string {
	names := ap.params()
	where := func(m member) string {
		conds := make([]string, len(m.cols))
		for i, c := range m.cols {
			conds[i] = column(m.e.table, c) + " = @" + names[ap.members[0].cols[i]]
		}
		return strings.Join(conds, " AND ")
	}
	if len(ap.members) == 1 {
		m := ap.members[0]
		q := []string{"SELECT " + selectList(m.e), "FROM " + qualified(schema, m.e.table.Name), "WHERE " + where(m)}
		if order, why := ap.ordering(); why == "" && order != "" {
			q = append(q, "ORDER BY "+order)
		}
		return clauses(q)
	}
	// Several entities: one row per item, with the entity attribute, and
	// the key columns of each (NULL where an entity has no such column).
	type unionColumn struct {
		name, typ string
	}
	var cols []unionColumn
	skip := map[string]bool{}
	for _, m := range ap.members {
		for _, name := range m.e.key {
			c := m.e.table.Column(name)
			if c == nil || skip[name] {
				continue
			}
			if _, renamed := m.e.renamed[name]; renamed {
				skip[name] = true
				continue
			}
			if i := slices.IndexFunc(cols, func(x unionColumn) bool { return x.name == name }); i < 0 {
				cols = append(cols, unionColumn{name, sqlType(c)})
			}
		}
	}
	// A column of one name but different types in two tables cannot be
	// one column of the union.
	cols = slices.DeleteFunc(cols, func(x unionColumn) bool {
		for _, m := range ap.members {
			if c := m.e.table.Column(x.name); c != nil && sqlType(c) != x.typ {
				return true
			}
			if _, renamed := m.e.renamed[x.name]; renamed {
				return true
			}
		}
		return false
	})
	var parts []string
	for i, m := range ap.members {
		sel := []string{literal(m.e.name)}
		if i == 0 {
			sel[0] += " AS " + ident(entityAttribute)
		}
		for _, x := range cols {
			switch {
			case m.e.table.Column(x.name) != nil && i == 0 && column(m.e.table, x.name) != ident(x.name):
				sel = append(sel, column(m.e.table, x.name)+" AS "+ident(x.name))
			case m.e.table.Column(x.name) != nil:
				sel = append(sel, column(m.e.table, x.name))
			case i == 0:
				sel = append(sel, "NULL::"+x.typ+" AS "+ident(x.name))
			default:
				sel = append(sel, "NULL::"+x.typ)
			}
		}
		parts = append(parts, "SELECT "+strings.Join(sel, ", ")+" FROM "+qualified(schema, m.e.table.Name)+" WHERE "+where(m))
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// plainTextType reports whether a text column's type is one of PostgreSQL's
// own string types, which take any string: an enum or a domain rejects a
// parameter made up not to exist ("zzmissing"), and a type outside the
// mapping's schema may not be on prove's search path.
func plainTextType(name string) bool {
	for _, p := range []string{"text", "character varying", "character", "varchar", "bpchar", "name"} {
		if name == p || strings.HasPrefix(name, p+"(") {
			return true
		}
	}
	return false
}

// column is a column in a pattern's SQL: compared as text when its type
// is a string type of its own (enum, domain, citext).
func column(t *mapping.Table, name string) string {
	if c := t.Column(name); c != nil && c.Type.Kind == pgkind.Text && !plainTextType(c.Type.Name) {
		return ident(name) + "::text"
	}
	return ident(name)
}

// sqlType is the type of a column in a pattern's SQL, as column writes it.
func sqlType(c *mapping.Column) string {
	if c.Type.Kind == pgkind.Text && !plainTextType(c.Type.Name) {
		return "text"
	}
	return c.Type.Name
}

// clauses joins a query's clauses on one line when it is short, else one
// clause a line.
func clauses(q []string) string {
	if line := strings.Join(q, " "); len(line) <= 90 {
		return line
	}
	return strings.Join(q, "\n")
}

// selectList is every column of the entity under its attribute name.
func selectList(e *entity) string {
	if e.renamed == nil {
		return "*"
	}
	var cols []string
	for _, c := range e.table.Columns {
		if r, ok := e.renamed[c.Name]; ok {
			cols = append(cols, ident(c.Name)+" AS "+ident(r))
		} else {
			cols = append(cols, ident(c.Name))
		}
	}
	return strings.Join(cols, ", ")
}

// paramsYAML is the pattern's params: a column's distinct values for one
// parameter, else a query with a row per parameter set.
func (ap *accessPattern) paramsYAML(schema, indent string) string {
	names := ap.params()
	cols := ap.members[0].cols
	if len(cols) == 1 && plainIdent(ap.from.Name) && plainIdent(ap.fromCols[0]) && plainIdent(schema) {
		src := ap.from.Name + "." + ap.fromCols[0]
		if schema != mapping.DefaultSchema {
			src = schema + "." + src
		}
		return "params: " + flowMap(scalar(names[cols[0]]), scalar(src))
	}
	sel := make([]string, len(cols))
	var notNull []string
	for i, c := range cols {
		sel[i] = ident(ap.fromCols[i])
		if ap.fromCols[i] != names[c] {
			sel[i] += " AS " + ident(names[c])
		}
		if col := ap.from.Column(ap.fromCols[i]); col == nil || !col.NotNull {
			notNull = append(notNull, ident(ap.fromCols[i])+" IS NOT NULL")
		}
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + qualified(schema, ap.from.Name)
	if len(notNull) > 0 {
		q += " WHERE " + strings.Join(notNull, " AND ")
	}
	return "params: |\n" + indent + "  " + q
}

func (d *design) writeAccessPatterns(w *writer) {
	var all []*accessPattern
	for _, e := range d.entities {
		for _, ap := range e.patterns {
			if ap.left == "" {
				all = append(all, ap)
			}
		}
	}
	if len(all) == 0 {
		return
	}
	w.flush()
	w.buf.WriteString("\n")
	w.comment("# ", `The access patterns listed at the top, each with the same question in SQL: "migrate prove" asks both, on the migrated table and on the source, and compares the answers item by item. Edit them to the questions your application asks.`)
	w.buf.WriteString("accessPatterns:\n")
	for i, ap := range all {
		if i > 0 {
			w.buf.WriteString("\n")
		}
		w.buf.WriteString("  " + scalar(ap.name) + ":\n")
		w.buf.WriteString("    description: " + text(ap.what) + "\n")
		w.buf.WriteString("    " + ap.paramsYAML(d.src.Schema, "    ") + "\n")
		pairs := []string{}
		if ap.slot > 0 {
			pairs = append(pairs, "index", indexName(ap.slot))
		}
		pairs = append(pairs, "pk", quoted(ap.pkTemplate()))
		switch {
		case ap.op == mapping.OpGetItem:
			pairs = append(pairs, "sk", quoted(ap.skTemplate()))
			w.buf.WriteString("    get: " + flowMap(pairs...) + "\n")
		default:
			switch ap.skOp {
			case mapping.CondEq:
				pairs = append(pairs, "sk", quoted(ap.sk.prefix))
			case mapping.CondBeginsWith:
				pairs = append(pairs, "sk", flowMap("begins_with", quoted(ap.sk.prefix)))
			}
			w.buf.WriteString("    query: " + flowMap(pairs...) + "\n")
		}
		why := ap.unordered
		if why == "" && ap.op == mapping.OpQuery {
			_, why = ap.ordering()
		}
		if why != "" {
			w.buf.WriteString("    ordered: false  # " + why + "\n")
		}
		w.buf.WriteString("    sql: |\n")
		for _, l := range strings.Split(ap.sql(d.src.Schema), "\n") {
			w.buf.WriteString("      " + l + "\n")
		}
	}
}

var plainText = regexp.MustCompile(`^[A-Za-z][^:#{}\[\]"'\n]*[A-Za-z0-9)]$`)

// text writes a phrase as a YAML scalar in block context: plain when it
// has nothing YAML would read otherwise.
func text(s string) string {
	if plainText.MatchString(s) && !yamlKeywords[s] {
		return s
	}
	return quoted(s)
}

var plainSQLIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func plainIdent(s string) bool { return plainSQLIdent.MatchString(s) && !sqlKeywords[s] }

// ident writes an SQL identifier, quoted unless plain.
func ident(s string) string {
	if plainIdent(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func qualified(schema, table string) string {
	if schema == mapping.DefaultSchema {
		return ident(table)
	}
	return ident(schema) + "." + ident(table)
}

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlKeywords are PostgreSQL's keywords that cannot stand bare as a column
// name in every position (reserved, type or function names, and column
// name keywords): such names are quoted.
var sqlKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check
		collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false fetch
		for foreign from grant group having in initially intersect into lateral leading limit localtime
		localtimestamp not null offset on only or order placing primary references returning select
		session_user some symmetric system_user table then to trailing true union unique user using
		variadic when where window with authorization binary collation concurrently cross
		current_schema freeze full ilike inner is isnull join left like natural notnull outer overlaps
		right similar tablesample verbose between bigint bit boolean char character coalesce dec decimal
		exists extract float greatest grouping inout int integer interval json json_array
		json_arrayagg json_object json_objectagg least national nchar none normalize nullif numeric
		out overlay position precision real row setof smallint substring time timestamp treat trim
		values varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse
		xmlpi xmlroot xmlserialize xmltable`) {
		sqlKeywords[w] = true
	}
}
