// Package render prints what the engine returns, for the migrate command:
// run and export summaries, sync status lines and documents, cutover's
// verdict, query's items, validate's key proof, and the progress a run
// reports while it goes on. Each renderer is a function of a writer and a
// result, so that it is tested alone, without a command around it.
//
// Plan, verify and prune documents are package report's, which the
// engine itself uses; render builds on the engine and the engine never
// imports it.
package render

import (
	"fmt"
	"io"
	"strings"
)

// printer writes formatted lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// Plural is "1 file", "2 files", "3 entities".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}
