package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
)

// Cutover prints a cutover's checks, each ok or FAIL with its evidence,
// then GO or NO-GO and why.
func Cutover(w io.Writer, table string, res *engine.CutoverResult) error {
	p := &printer{w: w}
	p.f("cutover of table %s (%s)\n", table, res.Elapsed.Round(time.Millisecond))
	check := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
		}
		p.f("  [%s] %s\n", mark, fmt.Sprintf(format, args...))
	}
	check(true, "caught up with the source at %s, applying %d changes", res.CaughtUp, res.Applied)
	var quiet int64
	var byTable []string
	for t, n := range res.QuietChanges {
		quiet += n
		byTable = append(byTable, fmt.Sprintf("%s: %d", t, n))
	}
	slices.Sort(byTable)
	if quiet == 0 {
		check(true, "no write to a mapped table during the %s quiet period (every change up to %s is in the table)", res.Quiet, res.Final)
	} else {
		check(false, "%d writes to mapped tables during the %s quiet period (%s); applied up to %s", quiet, res.Quiet, strings.Join(byTable, ", "), res.Final)
	}
	if len(res.Writers) == 0 {
		check(true, "no session holds a write lock on a mapped table")
	}
	for _, wr := range res.Writers {
		check(false, "write lock held: %s", wr)
	}
	if v := res.Verify; v != nil {
		s := v.Summary
		what := "every item"
		if v.Sample < 1 {
			what = fmt.Sprintf("a %.4g%% sample", v.Sample*100)
		}
		check(v.Identical, "verify (%s): %d expected, %d matching, %d missing, %d different, %d unexpected, %d problems",
			what, s.Expected, s.Matching, s.Missing, s.Different, s.Unexpected, s.Problems)
		if !v.Identical && p.err == nil {
			p.err = report.VerifyText(indent{w}, v, report.TextOptions{})
		}
	}
	if res.Go {
		p.f("GO: the table holds every change of the source, and the source takes no more writes\n")
		return p.err
	}
	p.f("NO-GO:\n")
	for _, r := range res.NoGo {
		p.f("  - %s\n", r)
	}
	return p.err
}

// indent writes through w with every line indented.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	s := strings.ReplaceAll(strings.TrimRight(string(p), "\n"), "\n", "\n      ")
	if _, err := fmt.Fprintf(i.w, "      %s\n", s); err != nil {
		return 0, err
	}
	return len(p), nil
}
