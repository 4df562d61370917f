package mapping

import (
	"strings"
)

// Match reports whether key could have been produced by the template: its
// literal parts appear in order and exactly, and each placeholder stands
// for a non-empty value that does not contain the separator (transform
// makes such values row errors), of exactly Width digits when the
// placeholder is zero-padded. A key that does not match was not written by
// this template, whatever its entity attribute says; prune leaves it alone.
//
// Literals between placeholders may also occur inside values ("T#{p}-{q}"
// with p = "a-b"), so every way of splitting the key is tried; the work is
// bounded by parts × len(key)², remembered per (part, offset).
func (t *Template) Match(key, sep string) bool {
	return t.MatchValues(key, sep, nil)
}

// MatchValues is Match that also asks value whether each placeholder's
// text (by its index in Parts) is one the placeholder could have produced:
// its column's type, width and functions decide that, which this package
// does not know. A nil value accepts every text.
func (t *Template) MatchValues(key, sep string, value func(part int, text string) bool) bool {
	m := matcher{t: t, key: key, sep: sep, value: value, failed: map[[2]int]bool{}}
	return m.match(0, 0)
}

type matcher struct {
	t        *Template
	key, sep string
	value    func(part int, text string) bool
	failed   map[[2]int]bool // (part, offset) pairs known not to match
}

func (m *matcher) accepts(part int, text string) bool {
	return m.value == nil || m.value(part, text)
}

func (m *matcher) match(part, at int) bool {
	if part == len(m.t.Parts) {
		return at == len(m.key)
	}
	if m.failed[[2]int{part, at}] {
		return false
	}
	ok := m.try(part, at)
	if !ok {
		m.failed[[2]int{part, at}] = true
	}
	return ok
}

func (m *matcher) try(part, at int) bool {
	p := m.t.Parts[part]
	rest := m.key[at:]
	if p.Column == "" {
		return strings.HasPrefix(rest, p.Literal) && m.match(part+1, at+len(p.Literal))
	}
	// The longest value that does not contain the separator.
	limit := len(rest)
	if m.sep != "" {
		if i := strings.Index(rest, m.sep); i >= 0 {
			limit = i + len(m.sep) - 1
		}
	}
	if p.Width > 0 {
		if p.Width > limit || !digits(rest[:p.Width]) || !m.accepts(part, rest[:p.Width]) {
			return false
		}
		return m.match(part+1, at+p.Width)
	}
	next := ""
	if part+1 < len(m.t.Parts) && m.t.Parts[part+1].Column == "" {
		next = m.t.Parts[part+1].Literal
	}
	for n := 1; n <= limit; n++ {
		if !strings.HasPrefix(rest[n:], next) {
			continue // the literal after the value is not here
		}
		if m.accepts(part, rest[:n]) && m.match(part+1, at+n) {
			return true
		}
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// MatchesKey reports whether an item key (the partition and sort key
// values; sk is "" for a table without a sort key) could have been
// produced by the entity's key templates with the mapping's separator.
func (e *Entity) MatchesKey(pk, sk, sep string) bool {
	if e.PK == nil || !e.PK.Match(pk, sep) {
		return false
	}
	if e.SK == nil {
		return sk == ""
	}
	return e.SK.Match(sk, sep)
}

// Entity returns the entity with the given name, or nil.
func (m *Mapping) Entity(name string) *Entity {
	for _, e := range m.Entities {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// MayProduce reports whether the mapping could have written an item whose
// entity attribute holds entity and whose key values are pk and sk (sk ""
// for a table without a sort key): entity names one of its entities and
// the key matches that entity's key templates. Anything else in the table
// is foreign to the mapping, whatever its entity attribute says, and prune
// leaves it alone. Keys are compared as text: a template of an N or B key
// (a single placeholder) matches any value. transform.Plan.Owner also
// knows each placeholder's column type; prune, plan and verify use that.
func (m *Mapping) MayProduce(entity, pk, sk string) bool {
	e := m.Entity(entity)
	if e == nil {
		return false
	}
	matches := func(t *Template, v string, typ KeyType) bool {
		switch {
		case t == nil:
			return v == ""
		case typ != KeyString:
			return true // one placeholder: any number or binary value
		}
		return t.Match(v, m.Separator)
	}
	return matches(e.PK, pk, m.PartitionKeyType) && matches(e.SK, sk, m.SortKeyType)
}
