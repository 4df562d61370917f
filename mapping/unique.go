package mapping

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// KeyProof says whether the items of a mapping are proven to have distinct
// primary keys within one run, so that a run needs no duplicate check for
// them, and why or why not.
type KeyProof struct {
	// Entities has one entry per entity, in mapping order.
	Entities []EntityKeyProof
}

// EntityKeyProof is the proof for one entity's items.
type EntityKeyProof struct {
	Entity string
	// Unique is true when no two items of the run can share a key with an
	// item of this entity: two rows of its table give different keys, and
	// no other entity's key can equal one of its keys.
	Unique bool
	// Reason says why (Unique) or what is missing, in a sentence.
	Reason string
}

// Proven reports whether every entity's keys are proven unique.
func (p KeyProof) Proven() bool {
	for _, e := range p.Entities {
		if !e.Unique {
			return false
		}
	}
	return true
}

// UniqueEntities lists the entities whose keys are proven unique.
func (p KeyProof) UniqueEntities() []string {
	var out []string
	for _, e := range p.Entities {
		if e.Unique {
			out = append(out, e.Name())
		}
	}
	return out
}

// Name is the entity's name.
func (e EntityKeyProof) Name() string { return e.Entity }

// ProveUniqueKeys proves, where it can, that the items of a mapping have
// distinct primary keys. It relies on three facts the run enforces for
// every key placeholder: a NULL or empty value is a row error, a value
// containing the separator is a row error, and {col:N} gives exactly N
// digits or a row error. An entity's keys are then unique among its items
// when its key templates, together, contain every column of its table's
// primary key or of a unique key whose columns are NOT NULL, and each
// template can be read back into its values: every placeholder but the
// last is zero-padded or followed by a literal containing the separator
// (and the values of a unique key's columns, as keys print them, differ
// whenever the values differ). Two entities' keys are disjoint when one of
// their templates, split at the separator (one character), has a
// different number of parts or a part whose literal text cannot match.
//
// m must have passed Check against cat.
func ProveUniqueKeys(m *Mapping, cat *Catalog) KeyProof {
	var p KeyProof
	for _, e := range m.Entities {
		p.Entities = append(p.Entities, proveEntity(m, e, cat))
	}
	for i, a := range m.Entities {
		for j, b := range m.Entities {
			if i == j || !p.Entities[i].Unique || keysDisjoint(m, a, b) {
				continue
			}
			p.Entities[i] = EntityKeyProof{Entity: a.Name, Reason: fmt.Sprintf("its keys could equal keys of %s", b.Name)}
		}
	}
	return p
}

func proveEntity(m *Mapping, e *Entity, cat *Catalog) EntityKeyProof {
	no := func(format string, args ...any) EntityKeyProof {
		return EntityKeyProof{Entity: e.Name, Reason: fmt.Sprintf(format, args...)}
	}
	t := cat.Lookup(e.Schema, e.From)
	if t == nil || e.PK == nil || (m.SortKey != "" && e.SK == nil) {
		return no("its key is not fully defined")
	}
	if utf8.RuneCountInString(m.Separator) != 1 {
		return no("the separator %q is not one character", m.Separator)
	}
	templates := []*Template{e.PK}
	if m.SortKey != "" {
		templates = append(templates, e.SK)
	}
	used := map[string]bool{}
	for _, tpl := range templates {
		if !readable(tpl, m.Separator) {
			return no("in %q two placeholders meet without the separator %q between them, so different values could make the same key", tpl.Raw, m.Separator)
		}
		for _, part := range tpl.Parts {
			// A value function (lower, year, ...) may give two values one
			// text, and a copied column is another table's: neither
			// makes a key unique.
			if part.Column != "" && len(part.Funcs) == 0 && len(part.Path) == 0 {
				used[part.Column] = true
			}
		}
	}
	for _, u := range t.Unique {
		if covers(t, u, used) {
			return EntityKeyProof{Entity: e.Name, Unique: true,
				Reason: fmt.Sprintf("the key contains the unique key (%s) of %s.%s", strings.Join(u, ", "), t.Schema, t.Name)}
		}
	}
	return no("the key does not contain every column of a NOT NULL unique key of %s.%s", t.Schema, t.Name)
}

// covers reports whether used holds every column of the unique key u, all
// NOT NULL and of a kind whose key text differs for different values.
func covers(t *Table, u []string, used map[string]bool) bool {
	for _, name := range u {
		c := t.Column(name)
		if !used[name] || c == nil || !c.NotNull || !c.Type.Kind.KeyUsable() {
			return false
		}
	}
	return len(u) > 0
}

// readable reports whether a template's values can be read back from the
// keys it makes: each placeholder but the last ends where a fixed width
// says or where the separator of the literal after it is.
func readable(t *Template, sep string) bool {
	for i, p := range t.Parts {
		if p.Column == "" || p.Width > 0 {
			continue
		}
		last := true
		for _, q := range t.Parts[i+1:] {
			if q.Column != "" {
				last = false
			}
		}
		if last {
			continue
		}
		if i+1 >= len(t.Parts) || t.Parts[i+1].Column != "" || !strings.Contains(t.Parts[i+1].Literal, sep) {
			return false
		}
	}
	return true
}

// keysDisjoint reports whether no key of entity a can equal a key of b.
func keysDisjoint(m *Mapping, a, b *Entity) bool {
	if a.PK == nil || b.PK == nil {
		return false
	}
	if templatesDisjoint(a.PK, b.PK, m.Separator) {
		return true
	}
	return m.SortKey != "" && a.SK != nil && b.SK != nil && templatesDisjoint(a.SK, b.SK, m.Separator)
}

// templatesDisjoint reports whether two templates cannot make the same
// string. Values contain no separator, so a key has exactly as many
// separators as its template's literals; part i of two keys (between
// separators) must then match for the keys to be equal.
func templatesDisjoint(a, b *Template, sep string) bool {
	if utf8.RuneCountInString(sep) != 1 {
		return false
	}
	sa, sb := keySegments(a, sep), keySegments(b, sep)
	if len(sa) != len(sb) {
		return true
	}
	for i := range sa {
		if segmentsDisjoint(sa[i], sb[i]) {
			return true
		}
	}
	return false
}

// keySegment is the part of a template between two separators: literal text
// before the first placeholder, after the last, and whether it has
// placeholders at all.
type keySegment struct {
	prefix, suffix string
	placeholders   int
}

func keySegments(t *Template, sep string) []keySegment {
	out := []keySegment{{}}
	cur := &out[0]
	for _, p := range t.Parts {
		if p.Column != "" {
			cur.placeholders++
			cur.suffix = ""
			continue
		}
		pieces := strings.Split(p.Literal, sep)
		for k, piece := range pieces {
			if k > 0 {
				out = append(out, keySegment{})
				cur = &out[len(out)-1]
			}
			if cur.placeholders == 0 {
				cur.prefix += piece
			}
			cur.suffix += piece
		}
	}
	return out
}

// segmentsDisjoint reports whether two segments cannot be the same text.
// A placeholder's value is at least one character.
func segmentsDisjoint(a, b keySegment) bool {
	if a.placeholders == 0 && b.placeholders == 0 {
		return a.prefix != b.prefix
	}
	if a.placeholders == 0 {
		a, b = b, a
	}
	// a has placeholders.
	if b.placeholders == 0 {
		lit := b.prefix
		return !strings.HasPrefix(lit, a.prefix) || !strings.HasSuffix(lit, a.suffix) ||
			len(lit) < len(a.prefix)+len(a.suffix)+a.placeholders
	}
	return !strings.HasPrefix(a.prefix, b.prefix) && !strings.HasPrefix(b.prefix, a.prefix) ||
		!strings.HasSuffix(a.suffix, b.suffix) && !strings.HasSuffix(b.suffix, a.suffix)
}
