package mapping

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based position in the mapping file.
type Pos struct {
	Line, Col int
}

// Diagnostic is one problem found in a mapping file.
type Diagnostic struct {
	File string
	Pos
	Msg string
}

// String renders d as "file:line:col: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Msg)
}

// Diagnostics is every problem found in a mapping file, sorted by position.
// It implements error so that callers can return it as one.
type Diagnostics []Diagnostic

// Error renders every diagnostic, one per line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

func (ds Diagnostics) sorted() Diagnostics {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Msg < b.Msg
	})
	return ds
}

// MergeDiagnostics joins lists of diagnostics (a file's syntax problems and
// its catalog problems), each problem once, sorted; nil when there are
// none.
func MergeDiagnostics(lists ...Diagnostics) Diagnostics {
	var out Diagnostics
	seen := map[Diagnostic]bool{}
	for _, ds := range lists {
		for _, d := range ds {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out.sorted()
}

// reporter collects diagnostics for one file.
type reporter struct {
	file  string
	diags Diagnostics
}

func (r *reporter) errorf(p Pos, format string, args ...any) {
	r.diags = append(r.diags, Diagnostic{File: r.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// suggest returns ` (did you mean "x"?)` for the closest candidate within a
// small edit distance, or "".
func suggest(name string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if best == "" || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(name)/3)
	if best == "" || bestDist > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
