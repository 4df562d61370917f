package report

import (
	"fmt"
	"io"
	"strings"
)

// TextOptions configures the terminal renderers.
type TextOptions struct {
	// Color adds ANSI colours: green creates, yellow changes, red stale
	// items and problems, bold headings. Callers set it on a terminal only.
	Color bool
}

// Value widths in text and markdown.
const (
	valueWidth  = 60
	barWidth    = 30
	originWidth = 60
)

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

// tw is a text writer that remembers the first error.
type tw struct {
	w     io.Writer
	color bool
	err   error
}

func (t *tw) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *tw) paint(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *tw) heading(s string) { t.printf("%s\n", t.paint(ansiBold, s)) }

// table writes rows of cells aligned per column as align says ('l' or
// 'r'; columns beyond it are right-aligned). It aligns by runes (not
// tabwriter's bytes): cells hold non-ASCII text.
func (t *tw) table(indent, align string, rows [][]string) {
	if t.err != nil || len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], runeLen(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-runeLen(c))
			if i < len(align) && align[i] == 'l' {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad + c)
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		t.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
}

func runeLen(s string) int { return len([]rune(s)) }

// Text renders a plan for a terminal: a concise summary, the per-entity
// table, the capacity estimate, then the details.
func Text(w io.Writer, p *Plan, opt TextOptions) error {
	t := &tw{w: w, color: opt.Color}
	s := p.Summary
	t.heading(fmt.Sprintf("Plan: %s → table %s", p.Mapping, p.Table.Name))
	t.printf("  %s\n", readsLine(p.Table, p.Reads))
	if p.Table.Billing != "" {
		t.printf("  Table capacity: %s\n", p.Table.Billing)
	}
	if c := p.Table.Create; c != nil {
		t.printf("  migrate run needs --create-table, which creates it on demand (%s):\n", c.Billing)
		for _, line := range tableCreateLines(c) {
			t.printf("    %s\n", line)
		}
	}
	t.printf("\n  %s expected:  %s   %s   %s   %s\n",
		plural(s.Expected, "item"),
		t.paint(ansiGreen, "+ "+count(s.Create)+" create"),
		t.paint(ansiYellow, "~ "+count(s.Change)+" change"),
		"= "+count(s.Unchanged)+" unchanged",
		t.paint(ansiRed, staleSummary(s.Stale, p.Reads.StaleChecked)))
	if s.Foreign > 0 {
		t.printf("  %s not compared.\n", foreign(s.Foreign))
	}
	if s.Problems > 0 {
		t.printf("  %s\n", t.paint(ansiRed, plural(s.Problems, "problem")+": migrate run would fail (see Problems)."))
	}
	if s.Create+s.Change+s.Stale == 0 && s.Problems == 0 && p.Table.Exists {
		t.printf("  The table already holds exactly what the mapping produces.\n")
	}

	t.printf("\n")
	rows := [][]string{{"ENTITY", "SOURCE", "EXPECTED", "CREATE", "CHANGE", "UNCHANGED", "STALE", "AVG SIZE", "MAX SIZE", "WCU"}}
	var tot EntityPlan
	for _, e := range p.Entities {
		rows = append(rows, []string{e.Entity, e.Source, count(e.Expected), count(e.Create), count(e.Change), count(e.Unchanged), staleCell(e.Stale, p.Reads.StaleChecked), avgSize(e.Bytes, e.Expected), size(e.MaxItemBytes), count(e.WriteUnits)})
		tot.Expected += e.Expected
		tot.Create += e.Create
		tot.Change += e.Change
		tot.Unchanged += e.Unchanged
		tot.Stale += e.Stale
		tot.Bytes += e.Bytes
		tot.MaxItemBytes = max(tot.MaxItemBytes, e.MaxItemBytes)
		tot.WriteUnits += e.WriteUnits
	}
	rows = append(rows, []string{"TOTAL", "", count(tot.Expected), count(tot.Create), count(tot.Change), count(tot.Unchanged), staleCell(tot.Stale, p.Reads.StaleChecked), avgSize(tot.Bytes, tot.Expected), size(tot.MaxItemBytes), count(tot.WriteUnits)})
	t.table("  ", "ll", rows)
	if p.Keys != nil {
		keysText(t, p.Keys)
	}

	t.printf("\n")
	capacityText(t, &p.Capacity, p.MaxDetails)

	t.printf("\n")
	refsText(t, "Creates", s.Create, "+", ansiGreen, p.Creates, p.MaxDetails, "")
	changesText(t, "Changes", s.Change, p.Changes, p.MaxDetails)
	if p.Reads.StaleChecked {
		refsText(t, "Stale", s.Stale, "-", ansiRed, p.Stale, p.MaxDetails, "in the table, no longer produced by the mapping; run does not delete them")
	} else {
		t.heading("Stale: not checked")
		t.printf("  --compare get reads only the expected keys; finding stale items needs a full read (--compare scan).\n")
	}
	problemsText(t, s.Problems, p.Problems, p.MaxDetails)
	return t.err
}

// keysText says whether a run must check keys for duplicates.
func keysText(t *tw, k *KeyUniqueness) {
	if k.Proven {
		t.printf("\n  keys: proven unique for every entity; a run keeps no record of them\n")
		return
	}
	t.printf("\n  keys: a run checks the keys of these entities for duplicates (on disk):\n")
	for _, e := range k.Entities {
		if !e.Unique {
			t.printf("    %s: %s\n", e.Entity, e.Reason)
		}
	}
}

func readsLine(tb Table, r Reads) string {
	if !tb.Exists {
		return "the table does not exist: every item is a create (nothing was read)"
	}
	how := map[string]string{"scan": "read by parallel Scan", "get": "read by BatchGetItem of the expected keys"}[r.Mode]
	if how == "" {
		how = "read by " + r.Mode
	}
	cons := "eventually consistent"
	if r.Consistent {
		cons = "strongly consistent"
	}
	return fmt.Sprintf("the table exists; %s: %s, %s, %s read units (%s); %s in all",
		how, plural(r.Calls, "call"), plural(r.ItemsRead, "item"), number(r.ReadUnits), cons, duration(r.Seconds))
}

func staleSummary(n int64, checked bool) string {
	if !checked {
		return "- stale not checked"
	}
	return "- " + count(n) + " stale"
}

func staleCell(n int64, checked bool) string {
	if !checked {
		return "?"
	}
	return count(n)
}

func avgSize(bytes, items int64) string {
	if items == 0 {
		return "-"
	}
	return size(float64(bytes) / float64(items))
}

func capacityText(t *tw, c *Capacity, maxDetails int) {
	t.heading("Capacity (every expected item, as migrate run writes them all)")
	rows := [][]string{}
	add := func(k, v string) { rows = append(rows, []string{k, v}) }
	largest := size(c.MaxItemBytes)
	if c.MaxItem != nil {
		largest += " (" + c.MaxItem.Entity + " " + c.MaxItem.Key.String() + ")"
	}
	add("items", fmt.Sprintf("%s, %s; average %s, largest %s", count(c.Items), size(c.Bytes), size(c.AvgItemBytes), largest))
	add("write units", fmt.Sprintf("%s = %s table + %s GSI; %s for the creates and changes alone",
		count(c.WriteUnits.Total), count(c.WriteUnits.Table), count(c.WriteUnits.Indexes), count(c.WriteUnits.CreatesAndChanges)))
	add("cost", fmt.Sprintf("%s on demand at $%s per million write units", dollars(c.EstimatedCostUSD), number(c.PricePerMillionWriteUnits)))
	wps := 0.0
	if c.EstimatedSeconds > 0 {
		wps = float64(c.WriteUnits.Total) / c.EstimatedSeconds
	}
	add("duration", fmt.Sprintf("%s at %s items/s (%s write units/s)", duration(c.EstimatedSeconds), number(c.WriteRate), count(int64(wps+0.5))))
	if c.Warm != nil {
		add("warm load", warmLine(c.Warm))
	}
	if sn := c.Snapshot; sn != nil {
		add("snapshot", snapshotLine(sn))
		for _, o := range sn.Overrides {
			add("", fmt.Sprintf("%s = %s (source: %s) is off for the snapshot's transaction", o.Name, o.Value, o.Source))
		}
	}
	add("import path", importLine(c.Import))
	add("cheaper", cheaperLine(c))
	for _, ix := range c.Indexes {
		line := fmt.Sprintf("%s, %s write units, %s distinct partition keys (%s)",
			plural(ix.Items, "item"), count(ix.WriteUnits), count(ix.DistinctPartitionKeys), ix.Method)
		if s := ix.Saving(); s != "" {
			line += "; " + s
		}
		add(ix.Index, line)
	}
	for i, sh := range c.Shards {
		k := ""
		if i == 0 {
			k = "shards"
		}
		add(k, shardLine(sh))
	}
	for i, cp := range c.Copies {
		k := ""
		if i == 0 {
			k = "copies"
		}
		add(k, fmt.Sprintf("%s ← %s {%s}: %s", cp.Entity, cp.From, strings.Join(cp.Attributes, ", "), plural(cp.Items, "item")))
	}
	t.table("  ", "ll", rows)

	if len(c.SizeHistogram) > 0 {
		t.printf("  item sizes\n")
		var peak int64
		for _, b := range c.SizeHistogram {
			peak = max(peak, b.Items)
		}
		hist := [][]string{}
		for _, b := range c.SizeHistogram {
			hist = append(hist, []string{binLabel(b), bar(b.Items, peak, barWidth), count(b.Items), pct(b.Items, c.Items)})
		}
		t.table("    ", "ll", hist)
	}
	limit := min(maxDetails, 5)
	for _, top := range []struct {
		name string
		ps   []Partition
	}{{"by items", c.TopPartitionsByItems}, {"by bytes", c.TopPartitionsByBytes}} {
		if len(top.ps) == 0 {
			continue
		}
		t.printf("  largest item collections %s\n", top.name)
		rows := [][]string{}
		for _, p := range top.ps[:min(limit, len(top.ps))] {
			rows = append(rows, []string{p.PK, plural(p.Items, "item"), size(p.Bytes)})
		}
		t.table("    ", "l", rows)
	}
}

// importLine describes the import path in one line.
func importLine(ip ImportPath) string {
	if ip.Unsupported != "" {
		return "not possible: " + ip.Unsupported
	}
	line := fmt.Sprintf("%s for %s of DYNAMODB_JSON at $%s per GB, no write units; %s at %s GB/h after %s to start (migrate export, then migrate import: new tables only)",
		dollars(ip.EstimatedCostUSD), size(ip.UncompressedBytes), number(ip.PricePerGB), duration(ip.EstimatedSeconds-ip.OverheadSeconds), number(ip.GBPerHour), duration(ip.OverheadSeconds))
	if ip.FileLimit != "" {
		line += "; too many files: " + ip.FileLimit
	}
	return line
}

// cheaperLine says which path costs less, and which is faster.
func cheaperLine(c *Capacity) string {
	w, i := c.EstimatedCostUSD, c.Import.EstimatedCostUSD
	if c.Import.Unsupported != "" {
		return "write, the only path for this table"
	}
	line := fmt.Sprintf("write: %s against %s by import", dollars(w), dollars(i))
	if c.Cheaper == "import" {
		line = fmt.Sprintf("import: %s against %s by writes", dollars(i), dollars(w))
	}
	ws, is := c.EstimatedSeconds, c.Import.EstimatedSeconds
	if ws <= is {
		return line + fmt.Sprintf("; writes are faster (%s against %s)", duration(ws), duration(is))
	}
	return line + fmt.Sprintf("; import is faster (%s against %s)", duration(is), duration(ws))
}

func shardLine(s Shards) string {
	sample := ""
	if s.SampleItems > 0 {
		sample = " (sample of " + count(int64(s.SampleItems)) + " items)"
	}
	return fmt.Sprintf("%s %s: avg item %s%s → %d items/RCU → %s items/s per partition; readRate %s → %d, padded to %d shards",
		s.Entity, s.Index, size(s.AvgItemBytes), sample, s.ItemsPerRCU, count(s.PartitionMaxReadRate), count(s.ReadRate), s.Raw, s.Count)
}

func bar(n, peak int64, width int) string {
	if peak == 0 || n == 0 {
		return ""
	}
	w := int(float64(n) / float64(peak) * float64(width))
	return strings.Repeat("█", max(w, 1))
}

func more(t *tw, total int64, shown, maxDetails int) {
	if total > int64(shown) {
		t.printf("  … %s more not shown (--max-details %d)\n", count(total-int64(shown)), maxDetails)
	}
}

func refsText(t *tw, title string, total int64, mark, code string, refs []ItemRef, maxDetails int, note string) {
	h := fmt.Sprintf("%s: %s", title, count(total))
	if note != "" && total > 0 {
		h += " (" + note + ")"
	}
	t.heading(h)
	rows := [][]string{}
	for _, r := range refs {
		rows = append(rows, []string{mark + " " + r.Entity, r.Key.String(), truncate(r.Origin, originWidth)})
	}
	if t.color {
		// Paint after aligning: colour codes must not count as width.
		var b strings.Builder
		sub := &tw{w: &b}
		sub.table("  ", "lll", rows)
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if line != "" {
				t.printf("%s", strings.Replace(line, mark, t.paint(code, mark), 1))
			}
		}
	} else {
		t.table("  ", "lll", rows)
	}
	more(t, total, len(refs), maxDetails)
}

func changesText(t *tw, title string, total int64, changes []ItemChange, maxDetails int) {
	t.heading(fmt.Sprintf("%s: %s", title, count(total)))
	width := 0
	for _, c := range changes {
		width = max(width, runeLen(c.Entity))
	}
	for _, c := range changes {
		origin := ""
		if c.Origin != "" {
			origin = "  " + truncate(c.Origin, originWidth)
		}
		t.printf("  %s %-*s  %s%s\n", t.paint(ansiYellow, "~"), width, c.Entity, c.Key, origin)
		for _, a := range c.Attributes {
			t.printf("      %s\n", attrLine(t, a))
		}
	}
	more(t, total, len(changes), maxDetails)
}

func attrLine(t *tw, a AttributeChange) string {
	switch a.Op {
	case "added":
		return t.paint(ansiGreen, "+") + " " + a.Path + ": " + Value(a.New, valueWidth)
	case "removed":
		return t.paint(ansiRed, "-") + " " + a.Path + ": " + Value(a.Old, valueWidth)
	}
	return t.paint(ansiYellow, "~") + " " + a.Path + ": " + Value(a.Old, valueWidth) + " → " + Value(a.New, valueWidth)
}

func problemsText(t *tw, total int64, ps []Problem, maxDetails int) {
	if total == 0 {
		t.heading("Problems: none")
		return
	}
	t.heading(t.paint(ansiRed, fmt.Sprintf("Problems: %s", count(total))))
	for _, p := range ps {
		t.printf("  %s %s\n", t.paint(ansiRed, "!"), problemLine(p))
	}
	more(t, total, len(ps), maxDetails)
}

func problemLine(p Problem) string {
	parts := []string{p.Kind}
	if p.Entity != "" {
		parts = append(parts, p.Entity)
	}
	if p.Key != nil {
		parts = append(parts, p.Key.String())
	}
	if p.Origin != "" {
		parts = append(parts, p.Origin)
	}
	return strings.Join(parts, " ") + ": " + p.Message
}

// VerifyText renders a verification for a terminal: the verdict, the
// per-entity counts and hashes, then every difference up to MaxDetails.
func VerifyText(w io.Writer, v *Verify, opt TextOptions) error {
	t := &tw{w: w, color: opt.Color}
	s := v.Summary
	t.heading(fmt.Sprintf("Verify: %s → table %s", v.Mapping, v.Table.Name))
	t.printf("  %s\n", readsLine(v.Table, v.Reads))
	if v.Sample < 1 {
		t.printf("  sample: %s of the keys, chosen by a hash of the key\n", pctFloat(v.Sample))
	}
	t.printf("\n")
	if v.Identical {
		t.printf("  %s\n", t.paint(ansiGreen, fmt.Sprintf("IDENTICAL: %s match the source.", plural(s.Matching, "item"))))
	} else {
		t.printf("  %s\n", t.paint(ansiRed, fmt.Sprintf("DIFFERENT: %s missing, %s different, %s unexpected, %s; %s match.",
			count(s.Missing), count(s.Different), count(s.Unexpected), plural(s.Problems, "problem"), plural(s.Matching, "item"))))
	}
	if s.Foreign > 0 {
		t.printf("  %s ignored.\n", foreign(s.Foreign))
	}
	t.printf("\n")
	// The plan's table style: names left, counts right with thousands
	// separators, a TOTAL row.
	rows := [][]string{{"ENTITY", "EXPECTED", "ACTUAL", "VERDICT", "CONTENT HASH (expected ≠ actual)"}}
	var expected, actual int64
	allMatch := true
	for _, e := range v.Entities {
		verdict, hash := "ok", shortHash(e.ExpectedHash)
		if !e.Match {
			verdict = "DIFFERENT"
			hash += " ≠ " + shortHash(e.ActualHash)
		}
		rows = append(rows, []string{e.Entity, count(e.Expected), count(e.Actual), verdict, hash})
		expected += e.Expected
		actual += e.Actual
		allMatch = allMatch && e.Match
	}
	total := "ok"
	if !allMatch {
		total = "DIFFERENT"
	}
	rows = append(rows, []string{"TOTAL", count(expected), count(actual), total, ""})
	t.table("  ", "lrrll", rows)
	t.printf("\n")
	if !v.Identical {
		refsText(t, "Missing", s.Missing, "-", ansiRed, v.Missing, v.MaxDetails, "expected, not in the table")
		changesText(t, "Different", s.Different, v.Different, v.MaxDetails)
		if v.Reads.StaleChecked {
			refsText(t, "Unexpected", s.Unexpected, "+", ansiYellow, v.Unexpected, v.MaxDetails, "in the table, not produced by the mapping")
		} else {
			t.heading("Unexpected: not checked (--compare get reads only the expected keys)")
		}
		problemsText(t, s.Problems, v.Problems, v.MaxDetails)
	}
	return t.err
}

// shortHash is the first 16 hex digits of a content hash, enough to tell
// two apart by eye.
func shortHash(h string) string { return h[:min(16, len(h))] }

func pctFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", f*100), "0"), ".") + "%"
}

// foreign describes items of entities the mapping does not own.
func foreign(n int64) string {
	if n == 1 {
		return "1 item of another entity in the table was"
	}
	return count(n) + " items of other entities in the table were"
}

// tableCreateLines describes a table to create, a line for its keys and
// one per index.
func tableCreateLines(c *TableCreate) []string {
	keys := func(ks []KeyAttribute) string {
		var parts []string
		for _, k := range ks {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", k.Role, k.Name, k.Type))
		}
		return strings.Join(parts, ", ")
	}
	out := []string{"table keys: " + keys(c.Keys)}
	for _, ix := range c.Indexes {
		proj := ix.Projection
		if len(ix.NonKeyAttributes) > 0 {
			proj += " " + strings.Join(ix.NonKeyAttributes, ", ")
		}
		out = append(out, fmt.Sprintf("%s index %s: %s; projection %s", ix.Kind, ix.Name, keys(ix.Keys), proj))
	}
	return out
}

// WriteTable renders rows as the plan and verify tables are rendered: columns
// aligned by runes, two spaces apart, the first len(align) columns aligned
// as align says ('l' left, 'r' right) and the others right-aligned. Other
// commands' tables (run's summary) use it so that all look alike.
func WriteTable(w io.Writer, indent, align string, rows [][]string) error {
	t := &tw{w: w}
	t.table(indent, align, rows)
	return t.err
}

// Count formats an integer with thousands separators, as the reports do.
func Count(n int64) string { return count(n) }

// snapshotLine says how long the source's snapshot is held.
func snapshotLine(sn *SnapshotHold) string {
	return fmt.Sprintf("a run holds the source's snapshot about %s (reading is paced by the writes; VACUUM keeps what it may see meanwhile); this plan held it %s, about what migrate export would",
		duration(sn.RunSeconds), duration(sn.PlanSeconds))
}

// warmLine describes the load's duration at the table's warm throughput.
func warmLine(w *WarmLoad) string {
	var table string
	switch {
	case w.Billing == "provisioned":
		table = fmt.Sprintf("the table's provisioned %s write units/s", count(int64(w.WriteUnitsPerSecond+0.5)))
	case w.NewTable:
		table = fmt.Sprintf("a new on-demand table's %s write units/s, doubling every 30 min at most", count(int64(w.WriteUnitsPerSecond+0.5)))
	default:
		table = fmt.Sprintf("the table's warm %s write units/s (on demand), doubling every 30 min at most", count(int64(w.WriteUnitsPerSecond+0.5)))
	}
	if w.MaxWriteUnitsPerSecond > 0 {
		table += fmt.Sprintf(" up to its maximum of %s", count(int64(w.MaxWriteUnitsPerSecond+0.5)))
	}
	return fmt.Sprintf("%s at %s; the largest item collection alone takes %s at 1,000 write units/s per partition",
		duration(w.EstimatedSeconds), table, duration(w.HotPartitionSeconds))
}
