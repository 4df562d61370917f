package mapping

import (
	"fmt"
	"slices"
	"strings"
)

// A singleton entity has a key without a column of its own, or without the
// primary key: "an employee's current job" at EMP#1 / CURRENT_JOB, read
// with GetItem. Its rows are one per key only when the catalog says so: a
// unique index over the key's columns, full, or partial with a predicate
// the entity's where filter implies (DeBrie calls such items singletons).

// singletonIndex looks for a unique index that makes e's rows one per key.
// It returns the index, or nil and a sentence saying what would make the
// key unique, to follow the refusal.
func singletonIndex(t *Table, e *Entity, used map[string]bool, cols []string) (*UniqueIndex, string) {
	var partial []string
	for i := range t.UniqueIndexes {
		ix := &t.UniqueIndexes[i]
		if !coversUnique(&Table{Columns: t.Columns, Unique: [][]string{ix.Columns}}, used) {
			var nullable []string
			for _, c := range ix.Columns {
				if col := t.Column(c); used[c] && col != nil && !col.NotNull {
					nullable = append(nullable, c)
				}
			}
			if len(nullable) > 0 && allUsed(ix.Columns, used) {
				partial = append(partial, fmt.Sprintf("the unique index %s over (%s) lets rows with NULL in %s repeat: make them NOT NULL",
					ix.Name, strings.Join(ix.Columns, ", "), strings.Join(nullable, ", ")))
			}
			continue
		}
		if ix.Predicate == "" {
			return ix, ""
		}
		pred, err := readPredicate(ix.Predicate)
		if err != nil {
			partial = append(partial, fmt.Sprintf("the partial unique index %s over (%s) has a predicate this tool cannot read (%s)",
				ix.Name, strings.Join(ix.Columns, ", "), ix.Predicate))
			continue
		}
		if e.Where != nil && implies(e.Where.Expr, pred.Expr) {
			return ix, ""
		}
		partial = append(partial, fmt.Sprintf("the unique index %s over (%s) holds only where %s, which the where filter of %s does not imply: add that condition to the where filter",
			ix.Name, strings.Join(ix.Columns, ", "), bare(pred.Raw), e.Name))
	}
	if len(partial) > 0 {
		return nil, strings.Join(partial, "; ")
	}
	if len(cols) == 0 {
		return nil, "its key names no column of the table, so every row would produce the same item"
	}
	return nil, fmt.Sprintf("a unique constraint or unique index over (%s), or a partial unique index over them whose predicate the where filter implies, would make it one row per key",
		strings.Join(cols, ", "))
}

// implies reports whether where implies pred, conservatively: every
// conjunct of pred is a conjunct of where (operands compared as written,
// literals by text). A false answer may be wrong; a true one is not.
func implies(where, pred Expr) bool {
	have := conjuncts(where, nil)
	for _, p := range conjuncts(pred, nil) {
		if !slices.ContainsFunc(have, func(w Expr) bool { return exprEqual(w, p) }) {
			return false
		}
	}
	return true
}

func conjuncts(e Expr, out []Expr) []Expr {
	if l, ok := e.(*Logic); ok && l.Op == "AND" {
		for _, t := range l.Terms {
			out = conjuncts(t, out)
		}
		return out
	}
	return append(out, e)
}

func exprEqual(a, b Expr) bool {
	switch a := a.(type) {
	case *Logic:
		b, ok := b.(*Logic)
		return ok && a.Op == b.Op && slices.EqualFunc(a.Terms, b.Terms, exprEqual)
	case *Not:
		b, ok := b.(*Not)
		return ok && exprEqual(a.X, b.X)
	case *Compare:
		b, ok := b.(*Compare)
		return ok && a.Op == b.Op && operandEqual(a.L, b.L) && operandEqual(a.R, b.R)
	case *IsNull:
		b, ok := b.(*IsNull)
		return ok && a.Not == b.Not && operandEqual(a.X, b.X)
	case *IsBool:
		b, ok := b.(*IsBool)
		return ok && a.Not == b.Not && a.Value == b.Value && operandEqual(a.X, b.X)
	case *In:
		b, ok := b.(*In)
		return ok && a.Not == b.Not && operandEqual(a.X, b.X) && slices.EqualFunc(a.List, b.List, operandEqual)
	case *Between:
		b, ok := b.(*Between)
		return ok && a.Not == b.Not && operandEqual(a.X, b.X) && operandEqual(a.Lo, b.Lo) && operandEqual(a.Hi, b.Hi)
	case *Truth:
		b, ok := b.(*Truth)
		return ok && operandEqual(a.X, b.X)
	}
	return false
}

func operandEqual(a, b Operand) bool {
	return a.Column == b.Column && slices.Equal(a.Path, b.Path) && a.Lit == b.Lit && a.Text == b.Text
}

// readPredicate parses a partial index's predicate as pg_get_expr prints
// it, e.g. "((status)::text = 'open'::text)" or
// "(kind = ANY (ARRAY['a'::text, 'b'::text]))", into a Condition: casts
// go (the filter compares values as the row holds them), a parenthesised
// column loses its parentheses and "= ANY (ARRAY[...])" becomes IN.
func readPredicate(s string) (*Condition, error) {
	s = outsideQuotes(s, func(s string, i int, b *strings.Builder) int {
		switch {
		case strings.HasPrefix(s[i:], "::"):
			return skipType(s, i+2) - i
		case s[i] == '(' && (i == 0 || !isIdentByte(s[i-1])): // not a call's
			if n := parenColumn(s[i:]); n > 0 {
				b.WriteString(s[i+1 : i+n-1])
				return n
			}
		}
		return 0
	})
	// Without casts, "x = ANY ((ARRAY['a', 'b']))" or "x = ANY (ARRAY[...])"
	// remains; the parentheses opened before ARRAY close after its "]".
	var closing []int
	s = outsideQuotes(s, func(s string, i int, b *strings.Builder) int {
		for _, op := range []struct{ sql, in string }{{"= ANY (", "IN ("}, {"<> ALL (", "NOT IN ("}} {
			if !strings.HasPrefix(s[i:], op.sql) {
				continue
			}
			j := i + len(op.sql)
			opened := 1
			for strings.HasPrefix(s[j:], "(") {
				j++
				opened++
			}
			if !strings.HasPrefix(s[j:], "ARRAY[") {
				return 0
			}
			b.WriteString(op.in)
			closing = append(closing, opened)
			return j + len("ARRAY[") - i
		}
		if n := len(closing); n > 0 && s[i] == ']' {
			want := "]" + strings.Repeat(")", closing[n-1])
			if strings.HasPrefix(s[i:], want) {
				b.WriteString(")")
				closing = closing[:n-1]
				return len(want)
			}
		}
		return 0
	})
	return ParseCondition(s)
}

// outsideQuotes copies s, calling f at every byte outside 'strings' and
// "identifiers": f writes a replacement and returns how many bytes it
// consumed, or 0 to copy the byte.
func outsideQuotes(s string, f func(s string, i int, b *strings.Builder) int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if c := s[i]; c == '\'' || c == '"' {
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(s))
			b.WriteString(s[i:end])
			i = end
			continue
		}
		if n := f(s, i, &b); n > 0 {
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// bare drops the parentheses around a whole condition, for messages.
func bare(raw string) string {
	if !strings.HasPrefix(raw, "(") || !strings.HasSuffix(raw, ")") {
		return raw
	}
	depth := 0
	inner := raw[1 : len(raw)-1]
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return raw // "(a) AND (b)": the first ")" closes the first "("
			}
		}
	}
	return inner
}

// multiWordTypes are the type names Postgres prints with spaces.
var multiWordTypes = []string{"character varying", "timestamp without time zone", "timestamp with time zone",
	"time without time zone", "time with time zone", "double precision", "bit varying"}

// skipType returns the index after the type name that starts at i (after
// "::"), with its modifiers and array brackets.
func skipType(s string, i int) int {
	for _, name := range multiWordTypes {
		if strings.HasPrefix(s[i:], name) {
			i += len(name)
			goto mods
		}
	}
	if i < len(s) && s[i] == '"' {
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return len(s)
		}
		i += j + 2
	}
	for i < len(s) && (isIdentByte(s[i]) || s[i] == '.') {
		i++
	}
mods:
	if i < len(s) && s[i] == '(' {
		if j := strings.IndexByte(s[i:], ')'); j > 0 {
			i += j + 1
		}
	}
	for strings.HasPrefix(s[i:], "[]") {
		i += 2
	}
	return i
}

// parenColumn returns the length of "(name)", "(\"name\")" or "(123)" at
// the start of s, or 0.
func parenColumn(s string) int {
	j := 1
	if j < len(s) && s[j] == '"' {
		k := strings.IndexByte(s[j+1:], '"')
		if k < 0 {
			return 0
		}
		j += k + 2
	} else {
		// A column, or a number Postgres parenthesised for a cast.
		for j < len(s) && (isIdentByte(s[j]) || s[j] == '.') {
			j++
		}
		if j == 1 {
			return 0
		}
	}
	if j < len(s) && s[j] == ')' {
		return j + 1
	}
	return 0
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= 0x80
}

func allUsed(cols []string, used map[string]bool) bool {
	for _, c := range cols {
		if !used[c] {
			return false
		}
	}
	return len(cols) > 0
}
