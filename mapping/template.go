package mapping

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Template is a key template such as "ORDER#{placed_at}#{order_id:10}":
// literal text with placeholders naming source columns. "{{" and "}}" are
// literal braces. A placeholder is
//
//	{column}                 the column's canonical key text
//	{column:N}               an integer zero-padded to N digits, so that it sorts
//	{column|f|g:arg}         the value passed through functions, left to right
//	{parent.column}          a column of a copied parent (the copy's into, or its table)
//	{"Order ID"}             a quoted name: any characters, "" for a quote
type Template struct {
	Raw   string
	Parts []Part
	Pos   Pos // the YAML scalar
	// TextPos is where the template's first character is (after a quote),
	// so a placeholder's position is TextPos plus its offset.
	TextPos Pos
}

// Part is a literal (Column == "") or a placeholder.
type Part struct {
	Literal string
	// Path names the copies leading to the column's table, outermost first
	// ({books.authors.name} has Path [books authors]); nil for the row's
	// own table.
	Path   []string
	Column string
	Width  int    // zero-pad width for integers; 0 = no padding
	Funcs  []Func // value functions, applied in order
	Offset int    // byte offset of the placeholder in Raw, for diagnostics
}

// Func is one value function of a placeholder, such as lower or
// decimal:10.2.
type Func struct {
	Name   string
	Arg    string // the text after ":", "" when none
	Offset int    // byte offset of the name in the template text
}

// Ref renders the placeholder's column reference as written, quoting
// names that need it: customers.country, "Order ID".
func (p Part) Ref() string {
	var b strings.Builder
	for _, s := range append(append([]string(nil), p.Path...), p.Column) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(QuoteName(s))
	}
	return b.String()
}

// QuoteName writes a name as a template or where clause refers to it:
// bare when it is made of letters, digits, _ and $, else in double quotes
// with quotes doubled.
func QuoteName(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !bareRune(r) }) < 0 {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func bareRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$'
}

// TemplateError is a syntax error at a byte offset of the template text.
type TemplateError struct {
	Offset int
	Msg    string
}

// Error renders e as "offset N: message".
func (e *TemplateError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// ParseTemplate parses template text. It never panics on any input.
func ParseTemplate(raw string) (*Template, error) {
	t := &Template{Raw: raw}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, Part{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '{' && i+1 < len(raw) && raw[i+1] == '{':
			lit.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(raw) && raw[i+1] == '}':
			lit.WriteByte('}')
			i += 2
		case c == '}':
			return nil, &TemplateError{i, `unmatched "}" (write "}}" for a literal brace)`}
		case c == '{':
			p, end, err := parsePlaceholder(raw, i)
			if err != nil {
				return nil, err
			}
			flush()
			t.Parts = append(t.Parts, p)
			i = end
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return t, nil
}

// placeholderScanner reads one placeholder starting at the "{" at start.
type placeholderScanner struct {
	s     string
	i     int
	start int
}

func (sc *placeholderScanner) errf(at int, format string, args ...any) error {
	return &TemplateError{at, fmt.Sprintf(format, args...)}
}

func (sc *placeholderScanner) skipSpace() {
	for sc.i < len(sc.s) && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

// name reads a bare or quoted name.
func (sc *placeholderScanner) name(what string) (string, error) {
	sc.skipSpace()
	if sc.i >= len(sc.s) {
		return "", sc.errf(sc.start, `unclosed "{"`)
	}
	if sc.s[sc.i] == '"' {
		open := sc.i
		var b strings.Builder
		for sc.i++; sc.i < len(sc.s); sc.i++ {
			if sc.s[sc.i] != '"' {
				b.WriteByte(sc.s[sc.i])
				continue
			}
			if sc.i+1 < len(sc.s) && sc.s[sc.i+1] == '"' {
				b.WriteByte('"')
				sc.i++
				continue
			}
			sc.i++
			if b.Len() == 0 {
				return "", sc.errf(open, `empty quoted name ""`)
			}
			return b.String(), nil
		}
		return "", sc.errf(open, `unclosed quote in placeholder (write "" for a quote inside a quoted name)`)
	}
	from := sc.i
	for sc.i < len(sc.s) {
		r, size := decodeRune(sc.s[sc.i:])
		if !bareRune(r) {
			break
		}
		sc.i += size
	}
	if sc.i == from {
		if sc.s[sc.i] == '}' && what == "column" && sc.i == sc.start+1 {
			return "", sc.errf(sc.start, "empty placeholder {}")
		}
		r, _ := decodeRune(sc.s[sc.i:])
		if r == '{' {
			return "", sc.errf(sc.start, `"{" inside a placeholder`)
		}
		return "", sc.errf(sc.i, "invalid character %q where a %s name belongs (quote names with other characters: {\"Order ID\"})", r, what)
	}
	return sc.s[from:sc.i], nil
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func parsePlaceholder(s string, start int) (Part, int, error) {
	sc := &placeholderScanner{s: s, i: start + 1, start: start}
	p := Part{Offset: start}
	var names []string
	for {
		n, err := sc.name("column")
		if err != nil {
			return Part{}, 0, err
		}
		names = append(names, n)
		sc.skipSpace()
		if sc.i < len(s) && s[sc.i] == '.' {
			sc.i++
			continue
		}
		break
	}
	p.Path, p.Column = names[:len(names)-1], names[len(names)-1]
	if len(p.Path) == 0 {
		p.Path = nil
	}
	sc.skipSpace()
	if sc.i < len(s) && s[sc.i] == ':' {
		from := sc.i + 1
		end := strings.IndexAny(s[from:], "|}")
		if end < 0 {
			return Part{}, 0, sc.errf(start, `unclosed "{"`)
		}
		spec := s[from : from+end]
		w, err := strconv.Atoi(strings.TrimSpace(spec))
		if err != nil || w < 1 || w > 40 {
			return Part{}, 0, sc.errf(start, "invalid width %q in {%s}: want a number of digits from 1 to 40", spec, s[start+1:from+end])
		}
		p.Width = w
		sc.i = from + end
	}
	for sc.i < len(s) && s[sc.i] == '|' {
		sc.i++
		sc.skipSpace()
		at := sc.i
		name, err := sc.name("function")
		if err != nil {
			return Part{}, 0, err
		}
		f := Func{Name: name, Offset: at}
		sc.skipSpace()
		if sc.i < len(s) && s[sc.i] == ':' {
			from := sc.i + 1
			end := strings.IndexAny(s[from:], "|}")
			if end < 0 {
				return Part{}, 0, sc.errf(start, `unclosed "{"`)
			}
			f.Arg = strings.TrimSpace(s[from : from+end])
			sc.i = from + end
		}
		p.Funcs = append(p.Funcs, f)
	}
	sc.skipSpace()
	if sc.i >= len(s) {
		return Part{}, 0, sc.errf(start, `unclosed "{"`)
	}
	if s[sc.i] != '}' {
		r, _ := decodeRune(s[sc.i:])
		if r == '{' {
			return Part{}, 0, sc.errf(start, `"{" inside a placeholder`)
		}
		return Part{}, 0, sc.errf(sc.i, "invalid character %q in placeholder (quote names with other characters: {\"Order ID\"})", r)
	}
	if p.Width > 0 && len(p.Funcs) > 0 {
		return Part{}, 0, sc.errf(start, "{%s} mixes zero-padding and functions: pad a non-negative integer with {column:N}, or encode with |signed:N", s[start+1:sc.i])
	}
	return p, sc.i + 1, nil
}

// Columns returns the distinct column references the template makes, in
// order, as Part.Ref writes them: own columns by name, copied ones with
// their path.
func (t *Template) Columns() []string {
	var cols []string
	seen := map[string]bool{}
	for _, p := range t.Parts {
		if p.Column == "" {
			continue
		}
		r := p.Ref()
		if len(p.Path) == 0 {
			r = p.Column
		}
		if !seen[r] {
			seen[r] = true
			cols = append(cols, r)
		}
	}
	return cols
}

// OwnColumns returns the distinct columns of the row's own table the
// template uses, in order (copied columns left out).
func (t *Template) OwnColumns() []string {
	var cols []string
	seen := map[string]bool{}
	for _, p := range t.Parts {
		if p.Column != "" && len(p.Path) == 0 && !seen[p.Column] {
			seen[p.Column] = true
			cols = append(cols, p.Column)
		}
	}
	return cols
}

// Placeholders returns the template's placeholder parts, in order.
func (t *Template) Placeholders() []Part {
	var out []Part
	for _, p := range t.Parts {
		if p.Column != "" {
			out = append(out, p)
		}
	}
	return out
}

// Constant reports whether the template has no placeholders.
func (t *Template) Constant() bool {
	for _, p := range t.Parts {
		if p.Column != "" {
			return false
		}
	}
	return true
}

// Prefix is the literal text before the first placeholder: the part every
// key the template produces starts with.
func (t *Template) Prefix() string {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Column != "" {
			break
		}
		b.WriteString(p.Literal)
	}
	return b.String()
}
