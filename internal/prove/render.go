package prove

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/pgdynamo/migrate/internal/report"
)

// outcome is a pattern's one-word verdict.
func (p PatternResult) outcome() string {
	switch {
	case p.Error != "":
		return "ERROR"
	case p.Mismatched > 0:
		return "DIFFERS"
	case p.Matched == 0:
		return "UNTRIED"
	}
	return "matched"
}

// Summary is the result's one-line verdict.
func (r *Result) Summary() string {
	var differs, failed, untried int
	for _, p := range r.Patterns {
		switch p.outcome() {
		case "DIFFERS":
			differs++
		case "ERROR":
			failed++
		case "UNTRIED":
			untried++
		}
	}
	if r.Proven {
		if len(r.Patterns) == 1 {
			return "the access pattern was answered alike by DynamoDB and SQL"
		}
		return fmt.Sprintf("all %d access patterns answered alike by DynamoDB and SQL", len(r.Patterns))
	}
	var parts []string
	if differs > 0 {
		parts = append(parts, fmt.Sprintf("%d differ", differs))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d could not run", failed))
	}
	if untried > 0 {
		parts = append(parts, fmt.Sprintf("%d had nothing to try", untried))
	}
	return fmt.Sprintf("%d of %s not proven: %s", differs+failed+untried, patternsWord(len(r.Patterns)), strings.Join(parts, ", "))
}

func patternsWord(n int) string {
	if n == 1 {
		return "1 access pattern"
	}
	return fmt.Sprintf("%d access patterns", n)
}

func sampleNote(p PatternResult) string {
	if p.Sampled {
		return fmt.Sprintf("sample of %d", p.Domain)
	}
	return "all"
}

// WriteText writes the result for a terminal.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "prove: table %s, %s, up to %d parameter sets each (seed %d)\n\n", r.Table, patternsWord(len(r.Patterns)), r.Samples, r.Seed)
	rows := [][]string{{"PATTERN", "OPERATION", "TRIED", "OF", "MISSING", "MATCHED", "MISMATCHED", "SKIPPED", "ITEMS", "RESULT"}}
	n := func(v int) string { return report.Count(int64(v)) }
	for _, p := range r.Patterns {
		op := p.Operation
		if p.Index != "" {
			op += " " + p.Index
		}
		if p.Shards > 0 {
			op += fmt.Sprintf(" x%d shards", p.Shards)
		}
		rows = append(rows, []string{p.Name, op, n(p.Tried), sampleNote(p), n(p.Missing), n(p.Matched), n(p.Mismatched), n(p.Skipped), report.Count(p.Items), p.outcome()})
	}
	// The table style of plan, verify and run.
	if err := report.WriteTable(w, "", "llrlrrrrrl", rows); err != nil {
		return err
	}
	for _, p := range r.Patterns {
		if p.Error == "" && len(p.Differences) == 0 && p.SkipReason == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", p.Name, p.Request)
		if p.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", p.Error)
		}
		for _, d := range p.Differences {
			fmt.Fprintf(w, "  differs for %s:\n    %s\n", paramsText(d.Params), d.Message)
		}
		if p.SkipReason != "" {
			fmt.Fprintf(w, "  skipped %d (first: %s)\n", p.Skipped, p.SkipReason)
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Summary())
	return err
}

func paramsText(ps []Param) string {
	if len(ps) == 0 {
		return "no parameters"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, ", ")
}

// WriteMarkdown writes the result for a pull request comment.
func (r *Result) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "### Access patterns proven against `%s`\n\n", r.Table)
	fmt.Fprintf(w, "%s. Up to %d parameter sets per pattern, seed %d.\n\n", r.Summary(), r.Samples, r.Seed)
	fmt.Fprintln(w, "| pattern | operation | request | tried | of | missing | matched | mismatched | skipped | result |")
	fmt.Fprintln(w, "|---|---|---|--:|---|--:|--:|--:|--:|---|")
	for _, p := range r.Patterns {
		op := p.Operation
		if p.Index != "" {
			op += " `" + p.Index + "`"
		}
		if p.Shards > 0 {
			op += fmt.Sprintf(" × %d shards", p.Shards)
		}
		fmt.Fprintf(w, "| `%s` | %s | `%s` | %d | %s | %d | %d | %d | %d | %s |\n", p.Name, op, mdCell(p.Request), p.Tried, sampleNote(p), p.Missing, p.Matched, p.Mismatched, p.Skipped, p.outcome())
	}
	for _, p := range r.Patterns {
		if p.Error == "" && len(p.Differences) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n**%s**\n\n", p.Name)
		if p.Error != "" {
			fmt.Fprintf(w, "- error: %s\n", mdCell(p.Error))
		}
		for _, d := range p.Differences {
			fmt.Fprintf(w, "- differs for `%s`: %s\n", mdCell(paramsText(d.Params)), mdCell(d.Message))
		}
	}
	return nil
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

// WriteJSON writes the result as the migrate.prove/v1 document.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
