package report

import (
	"fmt"
	"io"
	"strings"
)

// md writes GitHub-flavoured markdown, remembering the first error.
type md struct {
	w   io.Writer
	err error
}

func (m *md) printf(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// cell escapes text for a table cell: pipes, newlines, and characters
// markdown would interpret.
func cell(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`)
	return r.Replace(s)
}

// code renders s as an inline code span inside a table cell (pipes still
// escaped: GitHub splits cells before it parses code spans).
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
	return fence + pad + strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`) + pad + fence
}

func (m *md) table(header []string, align string, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	m.printf("| %s |\n|", strings.Join(header, " | "))
	for i := range header {
		if i < len(align) && align[i] == 'r' {
			m.printf("---:|")
		} else {
			m.printf("---|")
		}
	}
	m.printf("\n")
	for _, r := range rows {
		m.printf("| %s |\n", strings.Join(r, " | "))
	}
	m.printf("\n")
}

func (m *md) more(total int64, shown, maxDetails int) {
	if total > int64(shown) {
		m.printf("… and %s more not shown (`--max-details %d`).\n\n", count(total-int64(shown)), maxDetails)
	}
}

// Markdown renders a plan as GitHub-flavoured markdown, for a pull-request
// comment.
func Markdown(w io.Writer, p *Plan) error {
	m := &md{w: w}
	s := p.Summary
	m.printf("## migrate plan: %s → table %s\n\n", code(p.Mapping), code(p.Table.Name))
	if p.Table.Billing != "" {
		m.printf("Table capacity: %s.\n\n", p.Table.Billing)
	}
	if c := p.Table.Create; c != nil {
		m.printf("The table does not exist: `migrate run` needs `--create-table`, which creates it on demand (%s):\n\n", c.Billing)
		for _, line := range tableCreateLines(c) {
			m.printf("- %s\n", line)
		}
		m.printf("\n")
	}
	m.printf("%s.\n\n", capitalize(readsLine(p.Table, p.Reads)))
	stale := count(s.Stale)
	if !p.Reads.StaleChecked {
		stale = "not checked"
	}
	m.table([]string{"expected", "create", "change", "unchanged", "stale", "foreign (not compared)", "problems"}, "rrrrrrr",
		[][]string{{count(s.Expected), "**" + count(s.Create) + "**", "**" + count(s.Change) + "**", count(s.Unchanged), "**" + stale + "**", count(s.Foreign), count(s.Problems)}})
	if s.Problems > 0 {
		m.printf("> [!WARNING]\n> %s: `migrate run` would fail. See [Problems](#problems).\n\n", plural(s.Problems, "problem"))
	}

	m.printf("### Entities\n\n")
	var rows [][]string
	for _, e := range p.Entities {
		rows = append(rows, []string{cell(e.Entity), code(e.Source), count(e.Expected), count(e.Create), count(e.Change), count(e.Unchanged), staleCell(e.Stale, p.Reads.StaleChecked), avgSize(e.Bytes, e.Expected), size(e.MaxItemBytes), count(e.WriteUnits)})
	}
	m.table([]string{"entity", "source", "expected", "create", "change", "unchanged", "stale", "avg size", "max size", "write units"}, "llrrrrrrrr", rows)

	capacityMarkdown(m, &p.Capacity)

	m.printf("### Creates (%s)\n\n", count(s.Create))
	m.refs(p.Creates)
	m.more(s.Create, len(p.Creates), p.MaxDetails)
	m.printf("### Changes (%s)\n\n", count(s.Change))
	m.changes(p.Changes)
	m.more(s.Change, len(p.Changes), p.MaxDetails)
	if p.Reads.StaleChecked {
		m.printf("### Stale (%s)\n\nIn the table, of this mapping's entities, no longer produced; `migrate run` does not delete them.\n\n", count(s.Stale))
		m.refs(p.Stale)
		m.more(s.Stale, len(p.Stale), p.MaxDetails)
	} else {
		m.printf("### Stale: not checked\n\n`--compare get` reads only the expected keys; finding stale items needs a full read (`--compare scan`).\n\n")
	}
	m.problems(s.Problems, p.Problems, p.MaxDetails)
	return m.err
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func capacityMarkdown(m *md, c *Capacity) {
	m.printf("### Capacity\n\nEvery expected item, as `migrate run` writes them all.\n\n")
	largest := size(c.MaxItemBytes)
	if c.MaxItem != nil {
		largest += " (" + cell(c.MaxItem.Entity) + " " + code(c.MaxItem.Key.String()) + ")"
	}
	wps := 0.0
	if c.EstimatedSeconds > 0 {
		wps = float64(c.WriteUnits.Total) / c.EstimatedSeconds
	}
	facts := [][]string{
		{"items", fmt.Sprintf("%s, %s; average %s, largest %s", count(c.Items), size(c.Bytes), size(c.AvgItemBytes), largest)},
		{"write units", fmt.Sprintf("**%s** = %s table + %s GSI; %s for the creates and changes alone", count(c.WriteUnits.Total), count(c.WriteUnits.Table), count(c.WriteUnits.Indexes), count(c.WriteUnits.CreatesAndChanges))},
		{"on-demand cost", fmt.Sprintf("**%s** at $%s per million write units", dollars(c.EstimatedCostUSD), number(c.PricePerMillionWriteUnits))},
		{"duration", fmt.Sprintf("%s at %s items/s (%s write units/s)", duration(c.EstimatedSeconds), number(c.WriteRate), count(int64(wps+0.5)))},
	}
	if c.Warm != nil {
		facts = append(facts, []string{"warm load", warmLine(c.Warm)})
	}
	if sn := c.Snapshot; sn != nil {
		facts = append(facts, []string{"snapshot", snapshotLine(sn)})
		for _, o := range sn.Overrides {
			facts = append(facts, []string{"", fmt.Sprintf("%s = %s (source: %s) is off for the snapshot's transaction", code(o.Name), cell(o.Value), cell(o.Source))})
		}
	}
	facts = append(facts, []string{"import path", importLine(c.Import)}, []string{"cheaper", "**" + cheaperLine(c) + "**"})
	m.table([]string{"", ""}, "ll", facts)
	var rows [][]string
	saving := false
	for _, ix := range c.Indexes {
		saving = saving || ix.Saving() != ""
	}
	for _, ix := range c.Indexes {
		row := []string{code(ix.Index), count(ix.Items), count(ix.WriteUnits), count(ix.DistinctPartitionKeys), ix.Method}
		if saving {
			row = append(row, ix.Saving())
		}
		rows = append(rows, row)
	}
	if saving {
		m.table([]string{"GSI", "items", "write units", "distinct partition keys", "counted", "projection"}, "lrrrll", rows)
	} else {
		m.table([]string{"GSI", "items", "write units", "distinct partition keys", "counted"}, "lrrrl", rows)
	}
	rows = nil
	for _, sh := range c.Shards {
		rows = append(rows, []string{cell(sh.Entity), code(sh.Index), size(sh.AvgItemBytes), count(sh.ItemsPerRCU), count(sh.PartitionMaxReadRate), count(sh.ReadRate), count(sh.Raw), "**" + count(sh.Count) + "**"})
	}
	if len(rows) > 0 {
		m.printf("Computed shard counts (`count: auto`):\n\n")
		m.table([]string{"entity", "index", "avg item", "items/RCU", "items/s per partition", "readRate", "raw", "shards"}, "llrrrrrr", rows)
	}
	rows = nil
	for _, cp := range c.Copies {
		rows = append(rows, []string{cell(cp.Entity), cell(cp.From), code(strings.Join(cp.Attributes, ", ")), count(cp.Items)})
	}
	if len(rows) > 0 {
		m.printf("Copied attributes (what an update of the source data rewrites):\n\n")
		m.table([]string{"entity", "copied from", "attributes", "items carrying them"}, "lllr", rows)
	}
	rows = nil
	for _, b := range c.SizeHistogram {
		rows = append(rows, []string{binLabel(b), count(b.Items), pct(b.Items, c.Items)})
	}
	if len(rows) > 0 {
		m.printf("Item sizes:\n\n")
		m.table([]string{"size", "items", "share"}, "lrr", rows)
	}
	rows = nil
	n := max(len(c.TopPartitionsByItems), len(c.TopPartitionsByBytes))
	for i := range n {
		r := []string{"", "", "", "", ""}
		if i < len(c.TopPartitionsByItems) {
			p := c.TopPartitionsByItems[i]
			r[0], r[1] = code(p.PK), count(p.Items)
		}
		if i < len(c.TopPartitionsByBytes) {
			p := c.TopPartitionsByBytes[i]
			r[3], r[4] = code(p.PK), size(p.Bytes)
		}
		rows = append(rows, r)
	}
	if len(rows) > 0 {
		m.printf("Largest item collections (hot-partition risk):\n\n")
		m.table([]string{"by items", "items", "", "by bytes", "bytes"}, "lrllr", rows)
	}
}

func (m *md) refs(refs []ItemRef) {
	var rows [][]string
	for _, r := range refs {
		rows = append(rows, []string{cell(r.Entity), code(r.Key.PK), code(r.Key.SK), cell(r.Origin)})
	}
	m.table([]string{"entity", "PK", "SK", "source row"}, "llll", rows)
}

func (m *md) changes(changes []ItemChange) {
	var rows [][]string
	for _, c := range changes {
		for i, a := range c.Attributes {
			r := []string{"", "", "", code(a.Path), a.Op, code(Value(a.Old, valueWidth)), code(Value(a.New, valueWidth))}
			if i == 0 {
				r[0], r[1], r[2] = cell(c.Entity), code(c.Key.PK), code(c.Key.SK)
			}
			rows = append(rows, r)
		}
	}
	m.table([]string{"entity", "PK", "SK", "attribute", "op", "old", "new"}, "lllllll", rows)
}

func (m *md) problems(total int64, ps []Problem, maxDetails int) {
	m.printf("### Problems\n\n")
	if total == 0 {
		m.printf("None.\n")
		return
	}
	for _, p := range ps {
		m.printf("- %s\n", cell(problemLine(p)))
	}
	m.printf("\n")
	m.more(total, len(ps), maxDetails)
}

// VerifyMarkdown renders a verification as markdown.
func VerifyMarkdown(w io.Writer, v *Verify) error {
	m := &md{w: w}
	s := v.Summary
	m.printf("## migrate verify: %s → table %s\n\n", code(v.Mapping), code(v.Table.Name))
	m.printf("%s.", capitalize(readsLine(v.Table, v.Reads)))
	if v.Sample < 1 {
		m.printf(" Sample: %s of the keys.", pctFloat(v.Sample))
	}
	m.printf("\n\n")
	if v.Identical {
		m.printf("**Identical**: %s match the source.\n\n", plural(s.Matching, "item"))
	} else {
		m.printf("**Different**: %s missing, %s different, %s unexpected, %s.\n\n", count(s.Missing), count(s.Different), count(s.Unexpected), plural(s.Problems, "problem"))
	}
	var rows [][]string
	for _, e := range v.Entities {
		verdict := "ok"
		if !e.Match {
			verdict = "**different**"
		}
		rows = append(rows, []string{cell(e.Entity), count(e.Expected), count(e.Actual), code(shortHash(e.ExpectedHash)), code(shortHash(e.ActualHash)), verdict})
	}
	m.table([]string{"entity", "expected", "actual", "expected hash", "actual hash", "verdict"}, "lrrlll", rows)
	if v.Identical {
		return m.err
	}
	m.printf("### Missing (%s)\n\n", count(s.Missing))
	m.refs(v.Missing)
	m.more(s.Missing, len(v.Missing), v.MaxDetails)
	m.printf("### Different (%s)\n\n", count(s.Different))
	m.changes(v.Different)
	m.more(s.Different, len(v.Different), v.MaxDetails)
	m.printf("### Unexpected (%s)\n\n", count(s.Unexpected))
	m.refs(v.Unexpected)
	m.more(s.Unexpected, len(v.Unexpected), v.MaxDetails)
	m.problems(s.Problems, v.Problems, v.MaxDetails)
	return m.err
}
