package mapping

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Template is a key template such as "ORDER#{placed_at}#{order_id:10}":
// literal text with placeholders naming source columns. "{name:N}" pads an
// integer with zeros to N digits so that it sorts; "{{" and "}}" are literal
// braces.
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
	Column  string
	Width   int // zero-pad width for integers; 0 = no padding
	Offset  int // byte offset of the placeholder in Raw, for diagnostics
}

// TemplateError is a syntax error at a byte offset of the template text.
type TemplateError struct {
	Offset int
	Msg    string
}

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
			end := strings.IndexByte(raw[i:], '}')
			if end < 0 {
				return nil, &TemplateError{i, `unclosed "{"`}
			}
			body := raw[i+1 : i+end]
			p, err := parsePlaceholder(body, i)
			if err != nil {
				return nil, err
			}
			flush()
			t.Parts = append(t.Parts, p)
			i += end + 1
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return t, nil
}

func parsePlaceholder(body string, offset int) (Part, error) {
	name, spec, hasSpec := strings.Cut(body, ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return Part{}, &TemplateError{offset, "empty placeholder {}"}
	}
	if strings.ContainsRune(name, '{') {
		return Part{}, &TemplateError{offset, `"{" inside a placeholder`}
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$' || r == '.') {
			return Part{}, &TemplateError{offset, fmt.Sprintf("invalid character %q in placeholder %q", r, name)}
		}
	}
	p := Part{Column: name, Offset: offset}
	if hasSpec {
		w, err := strconv.Atoi(strings.TrimSpace(spec))
		if err != nil || w < 1 || w > 40 {
			return Part{}, &TemplateError{offset, fmt.Sprintf("invalid width %q in {%s}: want a number of digits from 1 to 40", spec, body)}
		}
		p.Width = w
	}
	return p, nil
}

// Columns returns the distinct column names the template references, in order.
func (t *Template) Columns() []string {
	var cols []string
	seen := map[string]bool{}
	for _, p := range t.Parts {
		if p.Column != "" && !seen[p.Column] {
			seen[p.Column] = true
			cols = append(cols, p.Column)
		}
	}
	return cols
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
