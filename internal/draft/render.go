package draft

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Options configures a draft.
type Options struct {
	// Table is the target DynamoDB table; default: the database's name,
	// made a valid table name.
	Table string
	// JSONSchema is written as the file's "# yaml-language-server:
	// $schema=" line, so that editors complete and check it; "" writes no
	// such line.
	JSONSchema string
	// EmbedMax is the most children per parent, observed in the data, for
	// which an embed is offered (default DefaultEmbedMax).
	EmbedMax int64
	// AcceptEmbeds writes the offered embeds as part of the mapping instead
	// of commented out.
	AcceptEmbeds bool
}

// Draft is a drafted mapping file and what it holds.
type Draft struct {
	YAML     []byte
	Table    string
	Entities int
	Indexes  int
	Offers   int      // embeds offered
	Skipped  []string // tables not drafted, "name: reason"
}

// Make drafts a mapping from a source: every table with a key becomes an
// entity keyed on it; a foreign key puts the child into its parent's item
// collection (rule 3) or, where that cannot be, gives the child an index
// entry under the parent's key (rule 4); a pure join table becomes an
// adjacency list with its inverted index (rule 6); each other unique key
// becomes a lookup index; children few enough per parent are offered as
// embeds (rule 1) with max from the data; a child whose partition its own
// key cannot name is also indexed under its own key. Comments name the
// access pattern each choice serves, and the accessPatterns section writes
// each one out with its SQL, for "migrate prove". Make is pure: it writes
// nothing but the result.
func Make(src *Source, opt Options) (*Draft, error) {
	d := newDesign(src, opt)
	if len(d.entities) == 0 {
		return nil, fmt.Errorf("%w to draft: %s", ErrNoTables, strings.Join(d.skipped, "; "))
	}
	table := opt.Table
	if table == "" {
		table = tableName(src.Database)
	}
	w := &writer{}
	d.write(w, table)
	out := &Draft{YAML: w.buf.Bytes(), Table: table, Entities: len(d.entities), Indexes: d.nIndexes, Skipped: d.skipped}
	for _, e := range d.entities {
		out.Offers += len(e.offers)
	}
	return out, nil
}

var notTableChar = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// tableName makes a DynamoDB table name (3 to 255 of [A-Za-z0-9_.-]) from
// a database name.
func tableName(db string) string {
	name := strings.Trim(notTableChar.ReplaceAllString(db, "_"), "_")
	if len(name) < 3 {
		name = "db_" + name
	}
	return name[:min(len(name), 255)]
}

// writer builds the file: lines with optional comments, aligned within a
// block.
type writer struct {
	buf   bytes.Buffer
	block []line
}

type line struct{ code, comment string }

func (w *writer) add(code, comment string) { w.block = append(w.block, line{code, comment}) }

// flush writes the pending block, aligning its comments one column after
// its longest commented line (up to a limit, so that one long line does
// not push every comment off the screen).
func (w *writer) flush() {
	col := 0
	for _, l := range w.block {
		if l.comment != "" && l.code != "" {
			col = max(col, utf8.RuneCountInString(l.code)+2)
		}
	}
	col = min(col, 64)
	for _, l := range w.block {
		switch {
		case l.comment == "":
			w.buf.WriteString(l.code)
		case l.code == "":
			w.buf.WriteString("# " + l.comment)
		default:
			pad := max(col-utf8.RuneCountInString(l.code), 2)
			w.buf.WriteString(l.code + strings.Repeat(" ", pad) + "# " + l.comment)
		}
		w.buf.WriteString("\n")
	}
	w.block = w.block[:0]
}

func (w *writer) blank() { w.flush(); w.buf.WriteString("\n") }

// comment writes a paragraph of comment lines, each starting with prefix
// ("# ", "    # ", "#   "), wrapped at 78 columns.
func (w *writer) comment(prefix, text string) {
	w.flush()
	width := 78 - utf8.RuneCountInString(prefix)
	var cur string
	for _, word := range strings.Fields(text) {
		if cur != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) > width {
			w.buf.WriteString(prefix + cur + "\n")
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		w.buf.WriteString(prefix + cur + "\n")
	}
}

func flowMap(pairs ...string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, pairs[i]+": "+pairs[i+1])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func (d *design) write(w *writer, table string) {
	src := d.src
	if d.opt.JSONSchema != "" {
		w.buf.WriteString("# yaml-language-server: $schema=" + d.opt.JSONSchema + "\n#\n")
	}
	w.comment("# ", `A first draft of the mapping, written by "migrate init" from the catalog and the data of`)
	w.buf.WriteString(fmt.Sprintf("#   database %s, schema %s (%s)\n#\n", src.Database, src.Schema, count(len(src.Tables), "table")))
	w.comment("# ", `Every table with a primary key is an entity keyed on it. A foreign key puts the child into its parent's item collection (rule 3: parent and children share the partition key), or where it cannot, indexes the child under its parent's key (rule 4). A pure join table is an adjacency list with an inverted index (rule 6). Each other unique key is a lookup index. Children few enough per parent are offered as embeds (rule 1), commented out.`)
	w.buf.WriteString("#\n")
	w.comment("# ", `A child in its parent's partition whose key does not hold the parent's is also indexed under its own key, so that every entity can be read by its primary key.`)
	w.buf.WriteString("#\n")
	w.comment("# ", `The draft cannot know which questions your application asks: read the access patterns below, delete the entities, indexes and patterns no one needs, and check the result with "migrate validate --mapping FILE --pg URL", then "migrate plan". Each pattern is written out under accessPatterns at the end, with the same question in SQL: after "migrate run", "migrate prove" asks both and compares the answers.`)
	w.buf.WriteString("#\n# Access patterns:\n")
	d.writePatterns(w)
	if len(d.skipped)+len(src.Ignored)+len(d.dropped) > 0 {
		w.buf.WriteString("#\n# Not drafted:\n")
		for _, s := range d.skipped {
			w.comment("#   ", s)
		}
		for _, name := range sortedKeys(src.Ignored) {
			w.comment("#   ", fmt.Sprintf("%s: %s (name it with --tables to draft it)", name, src.Ignored[name]))
		}
		for _, s := range d.dropped {
			w.comment("#   ", "index of "+s+": DynamoDB allows 20 GSIs per table")
		}
	}
	w.buf.WriteString("\n")

	w.add("table: "+scalar(table), "the target DynamoDB table (--table overrides it)")
	w.add("keys: "+flowMap("partition", partitionKey, "sort", sortKey), "generic key attributes: the values say what an item is")
	w.add("entityAttribute: "+scalar(entityAttribute), "names each item's entity")
	w.add("separator: "+quoted(separator), "joins the parts of keys; a key value containing it is a row error")
	w.add("schema: "+scalar(src.Schema), "")
	if d.nIndexes > 0 {
		w.add("indexes:", "")
		for n := 1; n <= d.nIndexes; n++ {
			w.add("  "+indexName(n)+": "+flowMap("partition", indexName(n)+"PK", "sort", indexName(n)+"SK"), d.indexSummary(n))
		}
	}
	w.blank()
	w.add("entities:", "")
	for i, e := range d.entities {
		if i > 0 {
			w.blank()
		}
		d.writeEntity(w, e)
	}
	d.writeAccessPatterns(w)
	w.flush()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// indexSummary says which entities use index n.
func (d *design) indexSummary(n int) string {
	var users []string
	for _, e := range d.entities {
		if slices.ContainsFunc(e.indexes, func(u indexUse) bool { return u.slot == n }) {
			users = append(users, e.name)
		}
	}
	if len(users) > 1 {
		return "overloaded: " + strings.Join(users, ", ")
	}
	return strings.Join(users, ", ")
}

// partitionMembers names what shares a head entity's partition.
func (d *design) partitionMembers(e *entity) []string {
	var with []string
	for _, c := range e.children {
		with = append(with, human(c.table.Name, false))
	}
	for _, o := range d.entities {
		if o.edge != nil && o.edge[0].ref == e && o.edge[0].prefix == e.prefix && sameSet(o.edge[0].fk.RefColumns, e.key) {
			with = append(with, human(o.table.Name, false))
		}
	}
	return with
}

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func (d *design) writePatterns(w *writer) {
	var all []*accessPattern
	for _, e := range d.entities {
		all = append(all, e.patterns...)
	}
	width := 0
	for _, p := range all {
		width = max(width, utf8.RuneCountInString(p.what))
	}
	width = min(width+4, 56)
	for _, p := range all {
		dots := max(width-utf8.RuneCountInString(p.what)-2, 2)
		fmt.Fprintf(&w.buf, "#   %s %s %-7s  %s\n", p.what, strings.Repeat(".", dots), p.op, p.cond())
	}
	for _, p := range all {
		if p.left != "" {
			w.comment("#   ", fmt.Sprintf("Not written out below: %s, since %s.", p.what, p.left))
		}
	}
}

func (d *design) writeEntity(w *writer, e *entity) {
	t := e.table
	if role := d.role(e); role != "" {
		w.comment("  # ", role)
	}
	w.add("  "+scalar(e.name)+":", "")
	w.add("    from: "+scalar(t.Name), fmt.Sprintf("%s.%s, keyed on (%s)", t.Schema, t.Name, strings.Join(e.key, ", ")))
	w.add("    key: "+flowMap("pk", quoted(e.pk), "sk", quoted(e.sk)), e.patterns[0].what)
	if e.renamed == nil {
		w.add(`    attributes: "*"`, "every column under its own name")
	} else {
		w.add("    attributes:", "every column; some renamed: the tool writes attributes of those names itself")
		for _, c := range t.Columns {
			name := c.Name
			if r, ok := e.renamed[c.Name]; ok {
				name = r
			}
			w.add("      "+scalar(name)+": "+scalar(c.Name), "")
		}
	}
	if len(e.indexes) > 0 {
		w.add("    index:", "")
		for _, ix := range e.indexes {
			w.comment("      # ", ix.pattern.what+" ("+ix.comment+")")
			w.add("      "+indexName(ix.slot)+": "+flowMap("pk", quoted(ix.pk), "sk", quoted(ix.sk)), "")
		}
	}
	if len(e.offers) == 0 {
		return
	}
	w.flush()
	prefix := "    # "
	if d.opt.AcceptEmbeds {
		prefix = "    "
	}
	one := e.single()
	verb := "Offered (rule 1): embed"
	if d.opt.AcceptEmbeds {
		verb = "Embedded (rule 1):"
	}
	intro := fmt.Sprintf("%s children in the %s item, so that one GetItem returns them. Each max is twice the most seen per %s in the data, rounded up; %s with more is a row error, never truncated.",
		verb, one, one, article(one))
	if d.opt.AcceptEmbeds {
		intro += " Their entities still write them as items of their own: delete those no one queries on their own."
	} else {
		intro += ` To accept one, uncomment "embed:" and its block; its entity may then go, unless its items are queried on their own.`
	}
	w.comment("    # ", intro)
	w.buf.WriteString(prefix + "embed:\n")
	for _, o := range e.offers {
		join := make([]string, 0, 2*len(o.fk.Columns))
		for i, c := range o.fk.Columns {
			join = append(join, scalar(c), scalar(o.fk.RefColumns[i]))
		}
		exclude := append([]string{}, o.fk.Columns...)
		if o.by != "" {
			exclude = append(exclude, o.by)
		}
		for i := range exclude {
			exclude[i] = scalar(exclude[i])
		}
		fmt.Fprintf(&w.buf, "%s  %s:  # %s: at most %d per %s seen (entity %s)\n", prefix, scalar(o.attr), human(o.child.table.Name, false), o.observed, one, o.child.name)
		w.buf.WriteString(prefix + "    from: " + scalar(o.fk.Table) + "\n")
		w.buf.WriteString(prefix + "    join: " + flowMap(join...) + "\n")
		w.buf.WriteString(prefix + "    as: " + o.as + "\n")
		if o.by != "" {
			w.buf.WriteString(prefix + "    by: " + scalar(o.by) + "\n")
		}
		w.buf.WriteString(prefix + "    max: " + fmt.Sprint(o.max) + "\n")
		w.buf.WriteString(prefix + "    exclude: [" + strings.Join(exclude, ", ") + "]\n")
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// role says what an entity is in the design.
func (d *design) role(e *entity) string {
	switch {
	case e.edge != nil:
		return fmt.Sprintf("rule 6: an adjacency list of %s and %s", plural(e.edge[0]), plural(e.edge[1]))
	case e.parent != nil:
		return fmt.Sprintf("rule 3: in the item collection of its %s (%s)", e.parent.single(), e.parentFK.Name)
	case len(d.partitionMembers(e)) > 0:
		return "heads an item collection with its " + andList(d.partitionMembers(e))
	}
	return ""
}
