package report

import (
	"fmt"
	"html/template"
	"strings"
)

// Charts are inline SVG built here, styled by the page's CSS classes, so
// the HTML file needs nothing from the network and no script.

// segment is one part of a horizontal bar.
type segment struct {
	value float64
	class string // CSS class giving the fill
	title string // tooltip
}

// barRow is one labelled bar of a horizontal bar chart.
type barRow struct {
	label    string
	segments []segment
	note     string // printed after the bar
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// hbarChart draws labelled horizontal (stacked) bars, scaled to the largest
// row total.
func hbarChart(title string, rows []barRow, labelWidth int) template.HTML {
	const width, rowH, barH, noteW, top = 640, 24, 16, 110, 8
	if len(rows) == 0 {
		return ""
	}
	peak := 0.0
	for _, r := range rows {
		total := 0.0
		for _, s := range r.segments {
			total += s.value
		}
		peak = max(peak, total)
	}
	area := float64(width - labelWidth - noteW - 8)
	h := top + rowH*len(rows) + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg"><title>%s</title>`, width, h, width, h, esc(title))
	for i, r := range rows {
		y := top + i*rowH
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, labelWidth-6, y+barH-3, esc(truncate(r.label, labelWidth/7)))
		x := float64(labelWidth)
		values := make([]float64, len(r.segments))
		for j, s := range r.segments {
			values[j] = s.value
		}
		for j, w := range segmentWidths(values, peak, area) {
			s := r.segments[j]
			if w == 0 {
				continue
			}
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%d" width="%.1f" height="%d"><title>%s</title></rect>`, s.class, x, y, w, barH, esc(s.title))
			x += w
		}
		fmt.Fprintf(&b, `<text class="note" x="%.1f" y="%d">%s</text>`, x+6, y+barH-3, esc(r.note))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// minSegment is the narrowest a non-zero bar segment is drawn, in chart
// units, so that 4 creates stay visible next to 2 million unchanged items.
const minSegment = 5

// segmentWidths scales a row's values to widths: a row totalling peak
// fills area. Non-zero values get at least minSegment; what that adds is
// taken from the wider segments, so the row never grows past its scale.
func segmentWidths(values []float64, peak, area float64) []float64 {
	ws := make([]float64, len(values))
	if peak <= 0 {
		return ws
	}
	var total, added, wide float64
	for i, v := range values {
		if v <= 0 {
			continue
		}
		ws[i] = v / peak * area
		total += ws[i]
		if ws[i] < minSegment {
			added += minSegment - ws[i]
			ws[i] = minSegment
		} else {
			wide += ws[i]
		}
	}
	if added > 0 && wide > 0 {
		// Shrink the wide segments by what the narrow ones gained, never
		// below the minimum themselves.
		f := max((wide-added)/wide, 0)
		for i, v := range values {
			if v > 0 && ws[i] > minSegment {
				ws[i] = max(ws[i]*f, minSegment)
			}
		}
	}
	return ws
}

// histogramChart draws the item-size histogram as vertical bars.
func histogramChart(bins []SizeBin, total int64) template.HTML {
	if len(bins) == 0 {
		return ""
	}
	const width, height, top, bottom, left = 560, 230, 22, 46, 10
	colW := min(90, (width-2*left)/len(bins))
	var peak int64
	for _, b := range bins {
		peak = max(peak, b.Items)
	}
	area := float64(height - top - bottom)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg"><title>Item size histogram</title>`, width, height, width, height)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, left, height-bottom, left+colW*len(bins), height-bottom)
	for i, bin := range bins {
		x := left + i*colW
		h := 0.0
		if peak > 0 {
			h = float64(bin.Items) / float64(peak) * area
		}
		if bin.Items > 0 {
			h = max(h, minSegment)
		}
		y := float64(height-bottom) - h
		fmt.Fprintf(&b, `<rect class="bar" x="%d" y="%.1f" width="%d" height="%.1f"><title>%s: %s items (%s)</title></rect>`,
			x+6, y, colW-12, h, esc(binLabel(bin)), count(bin.Items), pct(bin.Items, total))
		if bin.Items > 0 {
			fmt.Fprintf(&b, `<text class="note" x="%d" y="%.1f" text-anchor="middle">%s</text>`, x+colW/2, y-5, esc(shortCount(bin.Items)))
		}
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="middle">%s</text>`, x+colW/2, height-bottom+16, esc(size(bin.MinBytes)))
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">items by size (bin lower bound; 1 KB = 1 write unit)</text>`, left, height-8)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// shortCount abbreviates large counts for chart labels: 12.3k, 4.5M.
func shortCount(n int64) string {
	switch {
	case n < 10_000:
		return count(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
