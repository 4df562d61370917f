package mapping

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Condition is a where clause: a small predicate over the row's columns in
// SQL syntax, e.g. "end_date IS NULL AND status IN ('OPEN', 'HELD')". It is
// parsed into a tree and evaluated by the transform on every row, with
// SQL's three-valued logic; it is never sent to the database as text, so it
// cannot inject SQL.
//
// Grammar (keywords in any case):
//
//	expr     = and { OR and }
//	and      = not { AND not }
//	not      = NOT not | "(" expr ")" | test
//	test     = operand ( cmp operand | IS [NOT] NULL | IS [NOT] TRUE | IS [NOT] FALSE
//	                   | [NOT] IN "(" literal { "," literal } ")"
//	                   | [NOT] BETWEEN operand AND operand )
//	         | column                          a boolean column
//	cmp      = "=" | "<>" | "!=" | "<" | "<=" | ">" | ">="
//	operand  = column | literal
//	column   = name { "." name }               name: bare, or "quoted" with "" for a quote
//	literal  = number | 'text' ('' for a quote) | TRUE | FALSE | NULL
type Condition struct {
	Raw  string
	Expr Expr
	Pos  Pos // the YAML scalar
	// TextPos is where the condition's first character is, so a token's
	// position is TextPos plus its offset.
	TextPos Pos
}

// Expr is a node of a condition: *Logic, *Not, *Compare, *IsNull, *IsBool,
// *In, *Between or *Truth.
type Expr interface{ exprNode() }

// Logic is AND or OR of two or more terms.
type Logic struct {
	Op    string // "AND" or "OR"
	Terms []Expr
}

// Not negates X.
type Not struct{ X Expr }

// Compare is L op R, op one of = <> < <= > >= (!= is read as <>).
type Compare struct {
	Op   string
	L, R Operand
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	X   Operand
	Not bool
}

// IsBool is X IS [NOT] TRUE|FALSE: never unknown.
type IsBool struct {
	X     Operand
	Value bool
	Not   bool
}

// In is X [NOT] IN (list).
type In struct {
	X    Operand
	List []Operand
	Not  bool
}

// Between is X [NOT] BETWEEN Lo AND Hi (inclusive, as in SQL).
type Between struct {
	X, Lo, Hi Operand
	Not       bool
}

// Truth is a boolean column standing alone as a test.
type Truth struct{ X Operand }

func (*Logic) exprNode()   {}
func (*Not) exprNode()     {}
func (*Compare) exprNode() {}
func (*IsNull) exprNode()  {}
func (*IsBool) exprNode()  {}
func (*In) exprNode()      {}
func (*Between) exprNode() {}
func (*Truth) exprNode()   {}

// LiteralKind classifies literals.
type LiteralKind int

// The kinds of literals.
const (
	LitNumber LiteralKind = iota + 1
	LitString
	LitBool
	LitNull
)

// Operand is a column reference (Column != "") or a literal.
type Operand struct {
	Path   []string // copies leading to the column's table, as in templates
	Column string
	Lit    LiteralKind
	Text   string // the literal's value: digits of a number, the string, "true"/"false"
	Offset int    // byte offset in the condition text
}

// IsColumn reports whether the operand names a column.
func (o Operand) IsColumn() bool { return o.Column != "" }

// Ref renders a column operand as written.
func (o Operand) Ref() string { return Part{Path: o.Path, Column: o.Column}.Ref() }

// Operands calls f for every operand of the condition, in order.
func (c *Condition) Operands(f func(*Operand)) {
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Logic:
			for _, t := range e.Terms {
				walk(t)
			}
		case *Not:
			walk(e.X)
		case *Compare:
			f(&e.L)
			f(&e.R)
		case *IsNull:
			f(&e.X)
		case *IsBool:
			f(&e.X)
		case *In:
			f(&e.X)
			for i := range e.List {
				f(&e.List[i])
			}
		case *Between:
			f(&e.X)
			f(&e.Lo)
			f(&e.Hi)
		case *Truth:
			f(&e.X)
		}
	}
	walk(c.Expr)
}

// ParseCondition parses a where clause. Errors are *TemplateError with the
// byte offset of the problem. It never panics on any input.
func ParseCondition(raw string) (*Condition, error) {
	toks, err := lexCondition(raw)
	if err != nil {
		return nil, err
	}
	p := &condParser{toks: toks, end: len(raw)}
	if len(toks) == 0 {
		return nil, &TemplateError{0, "empty condition"}
	}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, &TemplateError{t.off, fmt.Sprintf("unexpected %s: want AND, OR or the end of the condition", t)}
	}
	return &Condition{Raw: raw, Expr: e}, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuoted // "quoted identifier"
	tokString // 'string literal'
	tokNumber
	tokOp // = <> != < <= > >=
	tokLParen
	tokRParen
	tokComma
	tokDot
)

type token struct {
	kind tokKind
	text string
	off  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of condition"
	case tokString:
		return "'" + t.text + "'"
	case tokQuoted:
		return `"` + t.text + `"`
	}
	return fmt.Sprintf("%q", t.text)
}

// keyword reports whether t is the keyword kw (bare identifiers only: a
// quoted "and" is a column).
func (t token) keyword(kw string) bool { return t.kind == tokIdent && strings.EqualFold(t.text, kw) }

var reserved = []string{"AND", "OR", "NOT", "IS", "NULL", "TRUE", "FALSE", "IN", "BETWEEN"}

func lexCondition(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{tokLParen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tokRParen, ")", i})
			i++
		case c == ',':
			out = append(out, token{tokComma, ",", i})
			i++
		case c == '.' && !(i+1 < len(s) && isDigit(s[i+1])):
			out = append(out, token{tokDot, ".", i})
			i++
		case c == '=':
			out = append(out, token{tokOp, "=", i})
			i++
		case c == '<' || c == '>' || c == '!':
			op, n := string(c), 1
			if i+1 < len(s) && (s[i+1] == '=' || c == '<' && s[i+1] == '>') {
				op, n = op+string(s[i+1]), 2
			}
			switch op {
			case "!":
				return nil, &TemplateError{i, `"!" alone is not an operator: write <> or NOT`}
			case "!=":
				op = "<>"
			}
			out = append(out, token{tokOp, op, i})
			i += n
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				what := "string"
				if c == '"' {
					what = "quoted name"
				}
				return nil, &TemplateError{i, fmt.Sprintf("unclosed %s (double the quote to write one inside)", what)}
			}
			kind := tokString
			if c == '"' {
				kind = tokQuoted
				if b.Len() == 0 {
					return nil, &TemplateError{i, `empty quoted name ""`}
				}
			}
			out = append(out, token{kind, b.String(), i})
			i = j
		case isDigit(c) || c == '-' || c == '+' || c == '.':
			j := i
			if c == '-' || c == '+' {
				j++
			}
			start := j
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '.' {
				j++
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			if j == start || s[start:j] == "." {
				return nil, &TemplateError{i, fmt.Sprintf("%q is not a number", s[i:min(j+1, len(s))])}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '-' || s[k] == '+') {
					k++
				}
				d := k
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				if k > d {
					j = k
				}
			}
			out = append(out, token{tokNumber, s[i:j], i})
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !bareRune(r) {
				return nil, &TemplateError{i, fmt.Sprintf("unexpected character %q (quote names with other characters: \"Order ID\"; text literals take single quotes)", r)}
			}
			j := i + size
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !bareRune(r) {
					break
				}
				j += size
			}
			out = append(out, token{tokIdent, s[i:j], i})
			i = j
		}
	}
	return out, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

type condParser struct {
	toks []token
	i    int
	end  int
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 100

func (p *condParser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{kind: tokEOF, off: p.end}
}

func (p *condParser) next() token {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

func (p *condParser) or(depth int) (Expr, error) {
	if depth > maxDepth {
		return nil, &TemplateError{p.peek().off, "condition nested too deeply"}
	}
	first, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	terms := []Expr{first}
	for p.peek().keyword("OR") {
		p.next()
		e, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return &Logic{Op: "OR", Terms: terms}, nil
}

func (p *condParser) and(depth int) (Expr, error) {
	first, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	terms := []Expr{first}
	for p.peek().keyword("AND") {
		p.next()
		e, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return &Logic{Op: "AND", Terms: terms}, nil
}

func (p *condParser) not(depth int) (Expr, error) {
	if depth > maxDepth {
		return nil, &TemplateError{p.peek().off, "condition nested too deeply"}
	}
	t := p.peek()
	if t.keyword("NOT") {
		p.next()
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	if t.kind == tokLParen {
		p.next()
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, &TemplateError{c.off, fmt.Sprintf("unexpected %s: want \")\" to close the \"(\" at offset %d", c, t.off)}
		}
		return e, nil
	}
	return p.test()
}

func (p *condParser) operand() (Operand, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		return Operand{Lit: LitNumber, Text: t.text, Offset: t.off}, nil
	case tokString:
		return Operand{Lit: LitString, Text: t.text, Offset: t.off}, nil
	case tokIdent:
		switch {
		case t.keyword("TRUE"), t.keyword("FALSE"):
			return Operand{Lit: LitBool, Text: strings.ToLower(t.text), Offset: t.off}, nil
		case t.keyword("NULL"):
			return Operand{Lit: LitNull, Text: "null", Offset: t.off}, nil
		}
		for _, kw := range reserved {
			if t.keyword(kw) {
				return Operand{}, &TemplateError{t.off, fmt.Sprintf("unexpected keyword %s: want a column or a value (quote a column named %s: \"%s\")", strings.ToUpper(t.text), t.text, t.text)}
			}
		}
		fallthrough
	case tokQuoted:
		names := []string{t.text}
		for p.peek().kind == tokDot {
			p.next()
			n := p.next()
			if n.kind != tokIdent && n.kind != tokQuoted {
				return Operand{}, &TemplateError{n.off, fmt.Sprintf("unexpected %s after \".\": want a column name", n)}
			}
			names = append(names, n.text)
		}
		o := Operand{Column: names[len(names)-1], Offset: t.off}
		if len(names) > 1 {
			o.Path = names[:len(names)-1]
		}
		return o, nil
	}
	return Operand{}, &TemplateError{t.off, fmt.Sprintf("unexpected %s: want a column or a value", t)}
}

func (p *condParser) test() (Expr, error) {
	x, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tokOp:
		p.next()
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		return &Compare{Op: t.text, L: x, R: y}, nil
	case t.keyword("IS"):
		p.next()
		not := false
		if p.peek().keyword("NOT") {
			p.next()
			not = true
		}
		v := p.next()
		switch {
		case v.keyword("NULL"):
			return &IsNull{X: x, Not: not}, nil
		case v.keyword("TRUE"), v.keyword("FALSE"):
			return &IsBool{X: x, Value: v.keyword("TRUE"), Not: not}, nil
		}
		return nil, &TemplateError{v.off, fmt.Sprintf("unexpected %s after IS: want NULL, TRUE or FALSE", v)}
	case t.keyword("NOT"), t.keyword("IN"), t.keyword("BETWEEN"):
		not := false
		if t.keyword("NOT") {
			p.next()
			not = true
		}
		kw := p.next()
		switch {
		case kw.keyword("IN"):
			if c := p.next(); c.kind != tokLParen {
				return nil, &TemplateError{c.off, fmt.Sprintf("unexpected %s after IN: want \"(\"", c)}
			}
			in := &In{X: x, Not: not}
			for {
				v, err := p.operand()
				if err != nil {
					return nil, err
				}
				in.List = append(in.List, v)
				c := p.next()
				if c.kind == tokRParen {
					return in, nil
				}
				if c.kind != tokComma {
					return nil, &TemplateError{c.off, fmt.Sprintf("unexpected %s in IN list: want \",\" or \")\"", c)}
				}
			}
		case kw.keyword("BETWEEN"):
			lo, err := p.operand()
			if err != nil {
				return nil, err
			}
			if a := p.next(); !a.keyword("AND") {
				return nil, &TemplateError{a.off, fmt.Sprintf("unexpected %s in BETWEEN: want AND", a)}
			}
			hi, err := p.operand()
			if err != nil {
				return nil, err
			}
			return &Between{X: x, Lo: lo, Hi: hi, Not: not}, nil
		}
		return nil, &TemplateError{kw.off, fmt.Sprintf("unexpected %s after NOT: want IN or BETWEEN", kw)}
	}
	if x.IsColumn() {
		return &Truth{X: x}, nil
	}
	return nil, &TemplateError{t.off, fmt.Sprintf("unexpected %s: want a comparison (=, <>, <, <=, >, >=), IS, IN or BETWEEN", t)}
}
