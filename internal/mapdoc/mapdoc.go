// Package mapdoc writes the documentation of a mapping as markdown: the
// table and its keys, every entity with its key table and its item as it
// nests (embedded children, copies into maps), the indexes with the
// entities and access patterns they serve, the shard count of every sharded index (what a
// reader must query), and the access patterns. It is what a team reviews
// in a pull request that changes the design.
//
// The package is pure: it reads a parsed mapping and writes text.
package mapdoc

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pgdynamo/migrate/mapping"
)

// Options configures Markdown.
type Options struct {
	// ShardCounts are computed "count: auto" shard counts by entity and
	// index (as run prints them); without one, an auto count is documented
	// by its inputs only.
	ShardCounts map[[2]string]int
	// Capacity, when set, is what a plan measured per entity: the docs
	// show it next to the design (the caller reads the plan; this
	// package only writes).
	Capacity *Capacity
}

// Capacity is the load of each entity's items as a plan measured it.
type Capacity struct {
	// From says where the figures come from, e.g. "plan.json, made
	// 2026-11-26 01:20 UTC".
	From     string
	Entities map[string]EntityCapacity
}

// EntityCapacity is one entity's figures.
type EntityCapacity struct {
	Items        int64
	Bytes        int64 // all its items
	MaxItemBytes int64
	WriteUnits   int64 // table plus GSIs
	// PartitionKeys is how many partition key values its items have;
	// 0 when the plan does not say. Estimated marks a HyperLogLog count.
	PartitionKeys int64
	Estimated     bool
}

// Markdown writes the documentation of m.
func Markdown(w io.Writer, m *mapping.Mapping, opts Options) error {
	d := &doc{m: m, opts: opts}
	d.header()
	d.entities()
	d.capacity()
	d.indexes()
	d.shards()
	d.patterns()
	_, err := io.WriteString(w, d.b.String())
	return err
}

type doc struct {
	m    *mapping.Mapping
	opts Options
	b    strings.Builder
}

func (d *doc) p(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// cell escapes text for a table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// code writes s as inline code in a table cell, with a fence long enough
// for backticks inside.
func code(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + cell(s) + pad + fence
}

func keyName(name string, typ mapping.KeyType) string {
	if typ == "" {
		typ = mapping.KeyString
	}
	return fmt.Sprintf("%s (%s)", code(name), typ)
}

func (d *doc) header() {
	m := d.m
	d.p("# Table %s\n\n", code(m.Table))
	d.p("Generated from `%s` by `migrate docs`.\n\n", m.File)
	sk := "none"
	if m.SortKey != "" {
		sk = keyName(m.SortKey, m.SortKeyType)
	}
	d.p("- Partition key %s, sort key %s\n", keyName(m.PartitionKey, m.PartitionKeyType), sk)
	d.p("- The entity of an item is in %s; composite keys are joined with %s\n", code(m.EntityAttribute), code(m.Separator))
	d.p("- %d entities, %d indexes, %d access patterns\n\n", len(m.Entities), len(m.Indexes), len(m.AccessPatterns))
}

func (d *doc) index(name string) *mapping.Index {
	for _, ix := range d.m.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

func (d *doc) entities() {
	m := d.m
	d.p("## Entities\n\n")
	d.p("| entity | source | %s | %s | indexes |\n|---|---|---|---|---|\n", m.PartitionKey, cellOr(m.SortKey, "sort key"))
	for _, e := range m.Entities {
		var ixs []string
		for _, ei := range e.Indexes {
			ixs = append(ixs, ei.Index)
		}
		d.p("| %s | %s | %s | %s | %s |\n", e.Name, code(e.Schema+"."+e.From), code(rawOf(e.PK)), code(rawOf(e.SK)), strings.Join(ixs, ", "))
	}
	d.p("\n")
	for _, e := range m.Entities {
		d.p("### %s\n\n", e.Name)
		d.p("One item per row of %s", code(e.Schema+"."+e.From))
		if e.Where != nil {
			d.p(" where %s", code(e.Where.Raw))
		}
		d.p(".")
		if e.Where != nil && e.SK != nil && len(e.SK.Placeholders()) == 0 {
			// A filtered entity at a fixed sort key is the singleton
			// pattern: validate --pg has proven it one row per key.
			d.p(" A singleton: at most one item per partition key, at the fixed sort key %s, read with one GetItem.", code(e.SK.Raw))
		}
		d.p("\n\n")
		d.p("| key attribute | template | note |\n|---|---|---|\n")
		d.p("| %s | %s | table partition key |\n", code(m.PartitionKey), code(rawOf(e.PK)))
		if m.SortKey != "" {
			d.p("| %s | %s | table sort key |\n", code(m.SortKey), code(rawOf(e.SK)))
		}
		for _, ei := range e.Indexes {
			ix := d.index(ei.Index)
			if ix == nil {
				continue
			}
			note := indexNote(ei)
			if !ix.Local {
				d.p("| %s | %s | %s partition key%s |\n", code(ix.PartitionKey), code(rawOf(ei.PK)), ix.Name, note)
				note = ""
			}
			if ix.SortKey != "" {
				d.p("| %s | %s | %s sort key%s |\n", code(ix.SortKey), code(rawOf(ei.SK)), ix.Name, note)
			}
		}
		d.p("\n")
		d.p("The item, as it nests:\n\n")
		for _, line := range itemShape(e) {
			d.p("%s\n", line)
		}
		d.p("\n")
	}
}

// itemShape lists what an entity's item holds, nested as DynamoDB nests
// it: embedded children inside their map or list, copies with into inside
// their map (and their nested copies inside that), copies without into on
// the level they attach to.
func itemShape(e *mapping.Entity) []string {
	var out []string
	if attrs := attributeList(e); attrs != "" {
		out = append(out, "- "+attrs+" (from "+code(e.Schema+"."+e.From)+")")
	}
	for _, em := range e.Embeds {
		how := fmt.Sprintf("a map keyed by %s", code(em.By.Name))
		if em.As == "list" {
			how = "a list"
		}
		out = append(out, fmt.Sprintf("- %s: %s of the rows of %s (at most %d), each holding:", code(em.Attribute), how, code(em.Schema+"."+em.From), em.Max))
		inner := attributeList(&mapping.Entity{AllColumns: em.AllColumns, Exclude: em.Exclude, Attributes: em.Attributes})
		out = append(out, "  - "+cellOr(inner, "every column"))
	}
	out = append(out, copyShape(e.Copies, "", "")...)
	out = append(out, aggregateShape(e)...)
	return out
}

// copyShape lists copies at one level of nesting (indent), their source
// reached through via.
func copyShape(cs []*mapping.Copy, indent, via string) []string {
	var out []string
	for _, c := range cs {
		from := c.Schema + "." + c.From
		if via != "" {
			from = via + " → " + from
		}
		var attrs []string
		for _, a := range c.Attributes {
			s := code(a.Name)
			if a.Column != a.Name {
				s += " ← " + code(a.Column)
			}
			attrs = append(attrs, s)
		}
		list := strings.Join(attrs, ", ")
		if c.Into != "" {
			out = append(out, fmt.Sprintf("%s- %s: a map copied from %s, holding:", indent, code(c.Into), code(from)))
			if list != "" {
				out = append(out, indent+"  - "+list)
			}
			out = append(out, copyShape(c.Copies, indent+"  ", from)...)
			continue
		}
		if list != "" {
			out = append(out, fmt.Sprintf("%s- %s (copied from %s)", indent, list, code(from)))
		} else {
			out = append(out, fmt.Sprintf("%s- no attribute of %s: it is copied for keys and where clauses only", indent, code(from)))
		}
		out = append(out, copyShape(c.Copies, indent, from)...)
	}
	return out
}

func cellOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func rawOf(t *mapping.Template) string {
	if t == nil {
		return ""
	}
	return t.Raw
}

func indexNote(ei *mapping.EntityIndex) string {
	var notes []string
	if ei.Where != nil {
		notes = append(notes, "only where "+code(ei.Where.Raw))
	}
	if ei.EmptyAbsent {
		notes = append(notes, "absent when a value is empty")
	}
	if ei.Shard != nil {
		notes = append(notes, "sharded")
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

func attributeList(e *mapping.Entity) string {
	var parts []string
	if e.AllColumns {
		s := "every column"
		if len(e.Exclude) > 0 {
			var ex []string
			for _, x := range e.Exclude {
				ex = append(ex, code(x.Name))
			}
			s += " but " + strings.Join(ex, ", ")
		}
		parts = append(parts, s)
	}
	for _, a := range e.Attributes {
		s := code(a.Name)
		if a.Column != a.Name {
			s += " ← " + code(a.Column)
		}
		if a.As != "" {
			s += " as " + string(a.As)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func (d *doc) indexes() {
	if len(d.m.Indexes) == 0 {
		return
	}
	d.p("## Indexes\n\n")
	d.p("| index | kind | partition key | sort key | projection | entities | access patterns |\n|---|---|---|---|---|---|---|\n")
	for _, ix := range d.m.Indexes {
		kind := "global"
		if ix.Local {
			kind = "local"
		}
		sk := ""
		if ix.SortKey != "" {
			sk = keyName(ix.SortKey, ix.SortKeyType)
		}
		proj := string(ix.Projection.Type)
		if proj == "" {
			proj = "ALL"
		}
		if ix.Projection.Type == mapping.ProjectInclude {
			var names []string
			for _, a := range ix.Projection.NonKeyAttributes {
				names = append(names, code(a.Name))
			}
			proj += " " + strings.Join(names, ", ")
		}
		var ents []string
		for _, e := range d.m.Entities {
			for _, ei := range e.Indexes {
				if ei.Index == ix.Name {
					ents = append(ents, e.Name)
				}
			}
		}
		d.p("| %s | %s | %s | %s | %s | %s | %s |\n", ix.Name, kind, keyName(ix.PartitionKey, ix.PartitionKeyType), sk, proj, strings.Join(ents, ", "), d.patternsOf(ix.Name))
	}
	d.p("\n")
	if onTable := d.patternsOf(""); onTable != "" {
		d.p("The table itself serves %s.\n\n", onTable)
	}
}

// patternsOf lists the access patterns an index serves ("": the table).
func (d *doc) patternsOf(index string) string {
	var names []string
	for _, ap := range d.m.AccessPatterns {
		if ap.Index == index {
			names = append(names, ap.Name)
		}
	}
	return strings.Join(names, ", ")
}

func (d *doc) shards() {
	type row struct{ entity, index, template, by, count string }
	var rows []row
	for _, e := range d.m.Entities {
		for _, ei := range e.Indexes {
			sh := ei.Shard
			if sh == nil {
				continue
			}
			by := "a hash of the row's key"
			if sh.By != "" {
				by = "a hash of " + code(sh.By)
			}
			count := fmt.Sprint(sh.Count)
			if sh.Count == 0 {
				count = fmt.Sprintf("auto: from the average item size and readRate %d items/s", sh.ReadRate)
				if n, ok := d.opts.ShardCounts[[2]string{e.Name, ei.Index}]; ok {
					count = fmt.Sprintf("**%d** (auto, computed from the source; readRate %d items/s)", n, sh.ReadRate)
				} else {
					count += "; run prints it, and `migrate docs --pg` computes it"
				}
			}
			rows = append(rows, row{e.Name, ei.Index, rawOf(ei.PK), by, count})
		}
	}
	if len(rows) == 0 {
		return
	}
	d.p("## Sharded indexes\n\n")
	d.p("A sharded partition key spreads one hot value over N partitions: `{shard}` is a stable hash of a column (or of the row's key) modulo N. A reader must query every shard, 0 to N-1, and merge the answers by sort key; N is below.\n\n")
	d.p("| entity | index | partition key | shard from | shards (N) |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		d.p("| %s | %s | %s | %s | %s |\n", r.entity, r.index, code(r.template), r.by, r.count)
	}
	d.p("\n")
}

func (d *doc) patterns() {
	if len(d.m.AccessPatterns) == 0 {
		return
	}
	d.p("## Access patterns\n\n")
	d.p("`migrate prove` answers each with DynamoDB and with its SQL and compares them.\n\n")
	d.p("| pattern | description | operation | key condition | parameters |\n|---|---|---|---|---|\n")
	for _, ap := range d.m.AccessPatterns {
		op := ap.Op
		if ap.Index != "" {
			op += " " + ap.Index
		}
		if len(ap.Collection) > 0 {
			var names []string
			for _, q := range ap.Collection {
				names = append(names, q.Entity)
			}
			op += ", item collection of " + strings.Join(names, ", ")
		}
		cond := d.condition(ap)
		var params []string
		for _, prm := range ap.Params {
			params = append(params, fmt.Sprintf("%s from %s", code(prm.Name), code(prm.Schema+"."+prm.Table+"."+prm.Column)))
		}
		if ap.ParamsSQL != "" {
			params = append(params, code(ap.ParamsSQL))
		}
		d.p("| %s | %s | %s | %s | %s |\n", ap.Name, cell(ap.Description), op, cond, strings.Join(params, "; "))
	}
	d.p("\n")
	for _, ap := range d.m.AccessPatterns {
		if len(ap.Collection) == 0 {
			d.p("<details><summary>%s: SQL</summary>\n\n```sql\n%s\n```\n\n</details>\n\n", ap.Name, strings.TrimSpace(ap.SQL))
			continue
		}
		// An item collection is compared entity by entity, each with
		// its own query.
		d.p("<details><summary>%s: SQL per entity</summary>\n\n", ap.Name)
		for _, q := range ap.Collection {
			d.p("%s:\n\n```sql\n%s\n```\n\n", q.Entity, strings.TrimSpace(q.SQL))
		}
		d.p("</details>\n\n")
	}
}

func (d *doc) condition(ap *mapping.AccessPattern) string {
	pk, sk := d.m.PartitionKey, d.m.SortKey
	if ix := d.index(ap.Index); ix != nil {
		pk, sk = ix.PartitionKey, ix.SortKey
	}
	parts := []string{code(pk + " = " + rawOf(ap.PK))}
	if ap.SK != nil {
		switch ap.SK.Op {
		case mapping.CondBeginsWith:
			parts = append(parts, code(fmt.Sprintf("begins_with(%s, %s)", sk, ap.SK.Values[0].Raw)))
		case mapping.CondBetween:
			parts = append(parts, code(fmt.Sprintf("%s BETWEEN %s AND %s", sk, ap.SK.Values[0].Raw, ap.SK.Values[1].Raw)))
		default:
			parts = append(parts, code(fmt.Sprintf("%s %s %s", sk, ap.SK.Op, ap.SK.Values[0].Raw)))
		}
	}
	s := strings.Join(parts, " AND ")
	var extra []string
	if ap.Descending {
		extra = append(extra, "descending")
	}
	if ap.Limit > 0 {
		extra = append(extra, fmt.Sprintf("limit %d", ap.Limit))
	}
	if ap.Sharded() {
		extra = append(extra, "on every shard, merged")
	}
	if len(ap.Buckets) > 0 {
		extra = append(extra, "one Query per bucket ("+cell(ap.BucketText())+"), merged")
	}
	if len(extra) > 0 {
		s += "; " + strings.Join(extra, ", ")
	}
	return s
}

func (d *doc) capacity() {
	c := d.opts.Capacity
	if c == nil {
		return
	}
	d.p("## Capacity\n\n")
	d.p("Measured by `migrate plan` (%s): items per entity, their size, and the write units a full load takes (one per KB or part of one, in the table and in each global index the item is in).\n\n", cell(c.From))
	d.p("| entity | items | average item | largest item | write units | partition keys |\n|---|---:|---:|---:|---:|---:|\n")
	for _, e := range d.m.Entities {
		f, ok := c.Entities[e.Name]
		if !ok {
			d.p("| %s | not in the plan | | | | |\n", e.Name)
			continue
		}
		avg := "0 B"
		if f.Items > 0 {
			avg = bytesText(float64(f.Bytes) / float64(f.Items))
		}
		keys := "not measured"
		if f.PartitionKeys > 0 {
			keys = thousands(f.PartitionKeys)
			if f.Estimated {
				keys = "about " + keys
			}
		}
		d.p("| %s | %s | %s | %s | %s | %s |\n", e.Name, thousands(f.Items), avg, bytesText(float64(f.MaxItemBytes)), thousands(f.WriteUnits), keys)
	}
	d.p("\n")
}

// thousands writes n with commas: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// bytesText writes a size in B, KB or MB (1 KB = 1,024 bytes, as
// DynamoDB counts item sizes).
func bytesText(b float64) string {
	switch {
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1024*1024:
		return fmt.Sprintf("%.1f KB", b/1024)
	}
	return fmt.Sprintf("%.1f MB", b/(1024*1024))
}
