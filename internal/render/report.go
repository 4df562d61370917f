package render

import (
	"io"
	"os"
)

// Values of --format.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Report writes a report in the chosen format: one of the three writers
// (text for any other format).
func Report(w io.Writer, format string, text, markdown, json func(io.Writer) error) error {
	switch format {
	case FormatMarkdown:
		return markdown(w)
	case FormatJSON:
		return json(w)
	}
	return text(w)
}

// WantColor decides --color: "always", "never", or for "auto" a terminal
// with NO_COLOR unset and TERM not dumb.
func WantColor(w io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
