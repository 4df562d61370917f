package engine

import (
	"strings"

	"github.com/pgdynamo/migrate/mapping"
)

// rejectColumn names the source column behind the attribute that a
// DynamoDB rejection's message names, where the mapping can tell: an
// attribute taken from one column (named, or under `columns: "*"`), or a key
// built by a template with one placeholder. It is "" when the message names
// no such attribute (DynamoDB often names none).
func rejectColumn(m *mapping.Mapping, entity, reason string) string {
	e := m.Entity(entity)
	if e == nil {
		return ""
	}
	for _, a := range e.Attributes {
		if a.Column != "" && mentions(reason, a.Name) {
			return a.Column
		}
	}
	single := func(t *mapping.Template) string {
		if t == nil {
			return ""
		}
		if cols := t.Columns(); len(cols) == 1 {
			return cols[0]
		}
		return ""
	}
	keys := []struct {
		attr string
		t    *mapping.Template
	}{{m.PartitionKey, e.PK}, {m.SortKey, e.SK}}
	for _, ei := range e.Indexes {
		for _, ix := range m.Indexes {
			if ix.Name == ei.Index {
				keys = append(keys, struct {
					attr string
					t    *mapping.Template
				}{ix.PartitionKey, ei.PK}, struct {
					attr string
					t    *mapping.Template
				}{ix.SortKey, ei.SK})
			}
		}
	}
	for _, k := range keys {
		if k.attr != "" && mentions(reason, k.attr) {
			return single(k.t)
		}
	}
	return ""
}

// mentions says whether msg holds name as a whole word: not inside a
// longer attribute name (GSI1PK must not match PK).
func mentions(msg, name string) bool {
	word := func(b byte) bool {
		return b == '_' || b == '-' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !word(msg[j-1])) && (end == len(msg) || !word(msg[end])) {
			return true
		}
		i = j + 1
	}
}
