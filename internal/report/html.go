package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/google/renameio/v2"
)

// WriteHTMLFile writes the plan's HTML page to path, through a temporary
// file renamed into place once complete.
func WriteHTMLFile(path string, p *Plan) error {
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer f.Cleanup()
	if err := HTML(f, p); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// HTML writes a plan as one self-contained HTML page: inline CSS, inline
// SVG charts (items per entity by outcome, item-size histogram, largest
// item collections by bytes), the capacity estimate and the diff tables.
// It loads nothing from the network and runs no script.
func HTML(w io.Writer, p *Plan) error {
	c := *p
	c.Schema = PlanSchema
	return pageTemplate.Execute(w, newPage(&c))
}

type page struct {
	*Plan
	ReadsLine        string
	StaleText        string
	Outcome          template.HTML
	EntityChart      template.HTML
	HistogramChart   template.HTML
	PartitionChart   template.HTML
	PartitionByItems template.HTML
	Facts            []fact
	Changes          []pageChange
	MoreCreates      int64
	MoreChanges      int64
	MoreStale        int64
	MoreProblems     int64
}

// fact is one row of the capacity table.
type fact struct {
	K string
	V template.HTML
}

type pageChange struct {
	ItemChange
	Attrs []pageAttr
}

type pageAttr struct {
	Path, Op, Old, New string
}

func newPage(p *Plan) *page {
	s := p.Summary
	pg := &page{Plan: p, ReadsLine: capitalize(readsLine(p.Table, p.Reads)) + "."}
	pg.StaleText = count(s.Stale)
	if !p.Reads.StaleChecked {
		pg.StaleText = "not checked"
	}
	pg.Outcome = hbarChart("Expected items by outcome", []barRow{{
		label: "all items",
		segments: []segment{
			{float64(s.Create), "create", count(s.Create) + " to create"},
			{float64(s.Change), "change", count(s.Change) + " to change"},
			{float64(s.Unchanged), "unchanged", count(s.Unchanged) + " unchanged"},
			{float64(s.Stale), "stale", count(s.Stale) + " stale"},
		},
		note: count(s.Expected+s.Stale) + " items",
	}}, 90)
	var rows []barRow
	for _, e := range p.Entities {
		rows = append(rows, barRow{
			label: e.Entity,
			segments: []segment{
				{float64(e.Create), "create", e.Entity + ": " + count(e.Create) + " to create"},
				{float64(e.Change), "change", e.Entity + ": " + count(e.Change) + " to change"},
				{float64(e.Unchanged), "unchanged", e.Entity + ": " + count(e.Unchanged) + " unchanged"},
				{float64(e.Stale), "stale", e.Entity + ": " + count(e.Stale) + " stale"},
			},
			note: count(e.Expected),
		})
	}
	pg.EntityChart = hbarChart("Items per entity", rows, 130)
	c := &p.Capacity
	pg.HistogramChart = histogramChart(c.SizeHistogram, c.Items)
	rows = nil
	for _, pt := range c.TopPartitionsByBytes {
		rows = append(rows, barRow{label: pt.PK, segments: []segment{{float64(pt.Bytes), "bar", pt.PK + ": " + size(pt.Bytes) + " in " + plural(pt.Items, "item")}}, note: size(pt.Bytes)})
	}
	pg.PartitionChart = hbarChart("Largest item collections by bytes", rows, 220)
	rows = nil
	for _, pt := range c.TopPartitionsByItems {
		rows = append(rows, barRow{label: pt.PK, segments: []segment{{float64(pt.Items), "bar2", pt.PK + ": " + plural(pt.Items, "item")}}, note: plural(pt.Items, "item")})
	}
	pg.PartitionByItems = hbarChart("Largest item collections by items", rows, 220)

	largest := template.HTML(template.HTMLEscapeString(size(c.MaxItemBytes)))
	if c.MaxItem != nil {
		largest += template.HTML(" — "+template.HTMLEscapeString(c.MaxItem.Entity)+" ") + keyHTML(c.MaxItem.Key.PK)
		if c.MaxItem.Key.SK != "" {
			largest += " | " + keyHTML(c.MaxItem.Key.SK)
		}
	}
	wps := 0.0
	if c.EstimatedSeconds > 0 {
		wps = float64(c.WriteUnits.Total) / c.EstimatedSeconds
	}
	text := func(k, v string) fact { return fact{k, template.HTML(template.HTMLEscapeString(v))} }
	pg.Facts = []fact{
		text("Items", count(c.Items)+" ("+size(c.Bytes)+")"),
		text("Average item", size(c.AvgItemBytes)),
		{"Largest item", largest},
		text("Write units", count(c.WriteUnits.Total)+" = "+count(c.WriteUnits.Table)+" table + "+count(c.WriteUnits.Indexes)+" GSI"),
		text("Write units for creates and changes alone", count(c.WriteUnits.CreatesAndChanges)),
		text("On-demand cost", dollars(c.EstimatedCostUSD)+" at $"+number(c.PricePerMillionWriteUnits)+" per million write units"),
		text("Duration", duration(c.EstimatedSeconds)+" at "+number(c.WriteRate)+" items/s ("+count(int64(wps+0.5))+" write units/s)"),
	}
	if c.Warm != nil {
		pg.Facts = append(pg.Facts, text("Duration at warm throughput", warmLine(c.Warm)))
	}
	pg.Facts = append(pg.Facts,
		text("Import from S3 instead", importLine(c.Import)),
		text("Cheaper", cheaperLine(c)),
	)
	if c.Snapshot != nil {
		pg.Facts = append(pg.Facts, text("Source snapshot", snapshotLine(c.Snapshot)))
	}
	for _, ch := range p.Changes {
		pc := pageChange{ItemChange: ch}
		for _, a := range ch.Attributes {
			pc.Attrs = append(pc.Attrs, pageAttr{Path: a.Path, Op: a.Op, Old: Value(a.Old, 300), New: Value(a.New, 300)})
		}
		pg.Changes = append(pg.Changes, pc)
	}
	pg.MoreCreates = s.Create - int64(len(p.Creates))
	pg.MoreChanges = s.Change - int64(len(p.Changes))
	pg.MoreStale = s.Stale - int64(len(p.Stale))
	pg.MoreProblems = s.Problems - int64(len(p.Problems))
	return pg
}

var pageTemplate = template.Must(template.New("plan").Funcs(template.FuncMap{
	"count":            func(n int64) string { return count(n) },
	"countInt":         func(n int) string { return count(n) },
	"size":             func(n int64) string { return size(n) },
	"sizeF":            func(n float64) string { return size(n) },
	"avgSize":          avgSize,
	"stale":            staleCell,
	"join":             strings.Join,
	"binLabel":         binLabel,
	"tableCreateLines": tableCreateLines,
	"pct":              pct,
	"problem":          problemLine,
	"key":              keyHTML,
}).Parse(pageHTML))

// keyHTML renders a key so that it wraps only between its parts: each part
// up to and including a "#" is one unbreakable token, with a break
// opportunity after it. A timestamp's hyphens or a long number never split.
func keyHTML(k string) template.HTML {
	if k == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<code class="key">`)
	for rest := k; rest != ""; {
		tok := rest
		if i := strings.IndexByte(rest, '#'); i >= 0 {
			tok = rest[:i+1]
		}
		rest = rest[len(tok):]
		b.WriteString(`<span class="tok">` + template.HTMLEscapeString(tok) + `</span>`)
		if rest != "" {
			b.WriteString("<wbr>")
		}
	}
	b.WriteString(`</code>`)
	return template.HTML(b.String())
}

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>migrate plan: {{.Table.Name}}</title>
<style>
:root { --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Source Han Sans SC", "PingFang SC", "PingFang TC", "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Microsoft YaHei", "Microsoft JhengHei", "Yu Gothic", "Meiryo", "Malgun Gothic", "Apple SD Gothic Neo", sans-serif;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", "Noto Sans Mono CJK SC", "Noto Sans Mono CJK JP", "Noto Sans CJK SC", "PingFang SC", "Hiragino Sans", "Microsoft YaHei", "Yu Gothic", "Malgun Gothic", monospace;
  --create: #2e7d32; --change: #e6a100; --unchanged: #b0bec5; --stale: #c62828; --bar: #3f6fb5; --bar2: #7e57c2; --ink: #1f2933; --muted: #607080; --line: #dde3ea; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 var(--sans); color: var(--ink); background: #f5f7fa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
code, .mono { font: 12.5px/1.4 var(--mono); }
.sub { color: var(--muted); margin: 0 0 18px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 130px; }
.card .n { font-size: 26px; font-weight: 650; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
.card.create .n { color: var(--create); } .card.change .n { color: #b07a00; } .card.stale .n { color: var(--stale); } .card.problems .n { color: var(--stale); }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 12px 0; overflow-x: auto; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 12px; }
.legend span { display: inline-block; margin-right: 14px; color: var(--muted); font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; white-space: nowrap; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td code { overflow-wrap: anywhere; }
code.key { overflow-wrap: normal; word-break: normal; }
code.key .tok { white-space: nowrap; }
tr.item td { border-top: 2px solid var(--line); }
.op-added { color: var(--create); } .op-removed { color: var(--stale); } .op-changed { color: #b07a00; }
.old { background: #fdecea; } .new { background: #e8f5e9; }
.warn { background: #fdecea; border: 1px solid #f5c2c0; color: #7f1d1d; border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.ok { background: #e8f5e9; border: 1px solid #b9dfbc; color: #1b5e20; border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.more { color: var(--muted); font-style: italic; margin: 6px 0; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg .label, svg .note, svg .tick { font: 12px var(--sans); fill: var(--ink); }
svg .tick { fill: var(--muted); font-size: 11px; }
svg .axis { stroke: var(--line); }
svg .create { fill: var(--create); } svg .change { fill: var(--change); } svg .unchanged { fill: var(--unchanged); } svg .stale { fill: var(--stale); }
svg .bar { fill: var(--bar); } svg .bar2 { fill: var(--bar2); }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
</style>
</head>
<body>
<main>
<h1>migrate plan: <code>{{.Table.Name}}</code></h1>
<p class="sub">Mapping <code>{{.Mapping}}</code> · generated {{.GeneratedAt.Format "2006-01-02 15:04:05 MST"}} · {{.ReadsLine}}</p>

<div class="cards">
  <div class="card"><div class="k">expected</div><div class="n">{{count .Summary.Expected}}</div></div>
  <div class="card create"><div class="k">create</div><div class="n">{{count .Summary.Create}}</div></div>
  <div class="card change"><div class="k">change</div><div class="n">{{count .Summary.Change}}</div></div>
  <div class="card"><div class="k">unchanged</div><div class="n">{{count .Summary.Unchanged}}</div></div>
  <div class="card stale"><div class="k">stale</div><div class="n">{{.StaleText}}</div></div>
  <div class="card"><div class="k">foreign (not compared)</div><div class="n">{{count .Summary.Foreign}}</div></div>
  <div class="card problems"><div class="k">problems</div><div class="n">{{count .Summary.Problems}}</div></div>
</div>
{{if gt .Summary.Problems 0}}<div class="warn"><strong>{{count .Summary.Problems}} problem(s):</strong> <code>migrate run</code> would fail. See <a href="#problems">Problems</a>.</div>
{{else if and .Table.Exists (eq .Summary.Create 0) (eq .Summary.Change 0) (eq .Summary.Stale 0)}}<div class="ok">The table already holds exactly what the mapping produces.</div>{{end}}{{with .Table.Create}}<div class="warn">The table does not exist: <code>migrate run</code> needs <code>--create-table</code>, which creates it on demand ({{.Billing}}):<ul>{{range tableCreateLines .}}<li>{{.}}</li>{{end}}</ul></div>{{end}}

<div class="panel">
  <div class="legend"><span><i style="background:var(--create)"></i>create</span><span><i style="background:var(--change)"></i>change</span><span><i style="background:var(--unchanged)"></i>unchanged</span><span><i style="background:var(--stale)"></i>stale</span></div>
  {{.Outcome}}
</div>

<div class="grid">
  <div class="panel"><h3>Items per entity</h3>{{.EntityChart}}</div>
  <div class="panel"><h3>Item size histogram</h3>{{.HistogramChart}}</div>
  <div class="panel"><h3>Largest item collections by bytes</h3>{{.PartitionChart}}</div>
  <div class="panel"><h3>Largest item collections by items</h3>{{.PartitionByItems}}</div>
</div>

<h2>Entities</h2>
<div class="panel"><table>
<tr><th>entity</th><th>source</th><th class="r">expected</th><th class="r">create</th><th class="r">change</th><th class="r">unchanged</th><th class="r">stale</th><th class="r">avg size</th><th class="r">max size</th><th class="r">write units</th></tr>
{{range .Entities}}<tr><td>{{.Entity}}</td><td><code>{{.Source}}</code></td><td class="r">{{count .Expected}}</td><td class="r">{{count .Create}}</td><td class="r">{{count .Change}}</td><td class="r">{{count .Unchanged}}</td><td class="r">{{stale .Stale $.Reads.StaleChecked}}</td><td class="r">{{avgSize .Bytes .Expected}}</td><td class="r">{{size .MaxItemBytes}}</td><td class="r">{{count .WriteUnits}}</td></tr>
{{end}}</table></div>

<h2>Capacity and cost</h2>
<p class="sub">Every expected item, as <code>migrate run</code> writes them all.</p>
<div class="panel"><table>
{{range .Facts}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>
{{end}}</table></div>
{{with .Capacity.Indexes}}<div class="panel"><h3>Global secondary indexes</h3><table>
<tr><th>index</th><th class="r">items</th><th class="r">write units</th><th class="r">distinct partition keys</th><th>counted</th></tr>
{{range .}}<tr><td><code>{{.Index}}</code></td><td class="r">{{count .Items}}</td><td class="r">{{count .WriteUnits}}</td><td class="r">{{count .DistinctPartitionKeys}}</td><td>{{.Method}}{{with .Saving}}; {{.}}{{end}}</td></tr>
{{end}}</table></div>{{end}}
{{with .Capacity.Shards}}<div class="panel"><h3>Computed shard counts (count: auto)</h3><table>
<tr><th>entity</th><th>index</th><th class="r">avg item</th><th class="r">items/RCU</th><th class="r">items/s per partition</th><th class="r">readRate</th><th class="r">raw</th><th class="r">shards</th></tr>
{{range .}}<tr><td>{{.Entity}}</td><td><code>{{.Index}}</code></td><td class="r">{{sizeF .AvgItemBytes}}</td><td class="r">{{countInt .ItemsPerRCU}}</td><td class="r">{{count .PartitionMaxReadRate}}</td><td class="r">{{count .ReadRate}}</td><td class="r">{{countInt .Raw}}</td><td class="r"><strong>{{countInt .Count}}</strong></td></tr>
{{end}}</table></div>{{end}}
{{with .Capacity.Copies}}<div class="panel"><h3>Copied attributes: items an update of the source rewrites</h3><table>
<tr><th>entity</th><th>copied from</th><th>attributes</th><th class="r">items carrying them</th></tr>
{{range .}}<tr><td>{{.Entity}}</td><td>{{.From}}</td><td><code>{{join .Attributes ", "}}</code></td><td class="r">{{count .Items}}</td></tr>
{{end}}</table></div>{{end}}

<h2>Creates ({{count .Summary.Create}})</h2>
{{if .Creates}}<div class="panel"><table>
<tr><th>entity</th><th>PK</th><th>SK</th><th>source row</th></tr>
{{range .Creates}}<tr><td class="op-added">{{.Entity}}</td><td>{{key .Key.PK}}</td><td>{{key .Key.SK}}</td><td>{{.Origin}}</td></tr>
{{end}}</table></div>{{end}}
{{if gt .MoreCreates 0}}<p class="more">… and {{count .MoreCreates}} more not shown (--max-details {{.MaxDetails}}).</p>{{end}}

<h2>Changes ({{count .Summary.Change}})</h2>
{{if .Changes}}<div class="panel"><table>
<tr><th>entity</th><th>PK</th><th>SK</th><th>attribute</th><th>op</th><th>old</th><th>new</th></tr>
{{range .Changes}}{{$c := .}}{{range $i, $a := .Attrs}}<tr{{if eq $i 0}} class="item"{{end}}>{{if eq $i 0}}<td>{{$c.Entity}}</td><td>{{key $c.Key.PK}}</td><td>{{key $c.Key.SK}}</td>{{else}}<td></td><td></td><td></td>{{end}}<td><code>{{$a.Path}}</code></td><td class="op-{{$a.Op}}">{{$a.Op}}</td><td class="{{if $a.Old}}old{{end}}"><code>{{$a.Old}}</code></td><td class="{{if $a.New}}new{{end}}"><code>{{$a.New}}</code></td></tr>
{{end}}{{end}}</table></div>{{end}}
{{if gt .MoreChanges 0}}<p class="more">… and {{count .MoreChanges}} more not shown (--max-details {{.MaxDetails}}).</p>{{end}}

<h2>Stale ({{.StaleText}})</h2>
{{if .Reads.StaleChecked}}<p class="sub">In the table, of this mapping's entities, no longer produced by it. <code>migrate run</code> does not delete them.</p>
{{if .Stale}}<div class="panel"><table>
<tr><th>entity</th><th>PK</th><th>SK</th></tr>
{{range .Stale}}<tr><td class="op-removed">{{.Entity}}</td><td>{{key .Key.PK}}</td><td>{{key .Key.SK}}</td></tr>
{{end}}</table></div>{{end}}
{{if gt .MoreStale 0}}<p class="more">… and {{count .MoreStale}} more not shown (--max-details {{.MaxDetails}}).</p>{{end}}
{{else}}<p class="sub"><code>--compare get</code> reads only the expected keys; finding stale items needs a full read (<code>--compare scan</code>).</p>{{end}}

<h2 id="problems">Problems ({{count .Summary.Problems}})</h2>
{{if .Problems}}<div class="panel"><table>
{{range .Problems}}<tr><td class="op-removed">{{problem .}}</td></tr>
{{end}}</table></div>{{else}}<p class="sub">None.</p>{{end}}
{{if gt .MoreProblems 0}}<p class="more">… and {{count .MoreProblems}} more not shown (--max-details {{.MaxDetails}}).</p>{{end}}

<footer>{{.Schema}} · the same data as <code>migrate plan --format json</code></footer>
</main>
</body>
</html>
`
