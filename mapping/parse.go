package mapping

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults applied when the file does not say otherwise.
const (
	DefaultEntityAttribute = "_type"
	DefaultSeparator       = "#"
	DefaultSchema          = "public"
)

// Parse reads a mapping file. It returns Diagnostics (as the error) listing
// every problem found, sorted by position, or a Mapping with no problems.
// Checks that need the source catalog are done by Check.
func Parse(file string, data []byte) (*Mapping, error) {
	r := &reporter{file: file}
	m := &Mapping{File: file, Digest: digest(data)}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		r.errorf(yamlErrPos(err), "%s", yamlErrMsg(err))
		return nil, r.diags
	}
	if len(doc.Content) == 0 {
		r.errorf(Pos{1, 1}, "empty mapping file")
		return nil, r.diags
	}
	root := doc.Content[0]
	m.Pos = pos(root)
	p := &parser{r: r}
	p.parseRoot(root, m)
	if len(r.diags) > 0 {
		return nil, r.diags.sorted()
	}
	return m, nil
}

type parser struct{ r *reporter }

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// fields walks a mapping node, rejecting unknown keys with a suggestion and
// duplicate keys, and calls handle for each known one.
func (p *parser) fields(n *yaml.Node, what string, known []string, handle func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.r.errorf(pos(n), "%s must be a mapping, not %s", what, kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			p.r.errorf(pos(k), "duplicate key %q in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		if known != nil && !contains(known, k.Value) {
			p.r.errorf(pos(k), "unknown field %q in %s%s", k.Value, what, suggest(k.Value, known))
			continue
		}
		handle(k.Value, k, v)
	}
}

func (p *parser) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.r.errorf(pos(n), "%s must be a string, not %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) name(n *yaml.Node, what string) (string, bool) {
	s, ok := p.str(n, what)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		p.r.errorf(pos(n), "%s must not be empty", what)
		return "", false
	}
	return s, true
}

func (p *parser) required(n *yaml.Node, what string, have map[string]bool, keys ...string) {
	for _, k := range keys {
		if !have[k] {
			p.r.errorf(pos(n), "%s is missing required field %q", what, k)
		}
	}
}

func (p *parser) parseRoot(n *yaml.Node, m *Mapping) {
	have := map[string]bool{}
	m.EntityAttribute, m.Separator, m.Schema = DefaultEntityAttribute, DefaultSeparator, DefaultSchema
	var indexesNode, entitiesNode *yaml.Node
	p.fields(n, "the mapping", []string{"table", "keys", "indexes", "entities", "entityAttribute", "separator", "schema"}, func(key string, k, v *yaml.Node) {
		have[key] = true
		switch key {
		case "table":
			m.Table, _ = p.name(v, "table")
			p.checkName("table", m.Table, pos(v))
		case "keys":
			kh := map[string]bool{}
			p.fields(v, "keys", []string{"partition", "sort"}, func(key string, _, v *yaml.Node) {
				kh[key] = true
				switch key {
				case "partition":
					m.PartitionKey, _ = p.name(v, "keys.partition")
				case "sort":
					m.SortKey, _ = p.name(v, "keys.sort")
				}
			})
			if v.Kind == yaml.MappingNode {
				p.required(v, "keys", kh, "partition")
			}
		case "indexes":
			indexesNode = v
		case "entities":
			entitiesNode = v
		case "entityAttribute":
			m.EntityAttribute, _ = p.name(v, "entityAttribute")
		case "separator":
			if s, ok := p.name(v, "separator"); ok {
				m.Separator = s
			}
		case "schema":
			m.Schema, _ = p.name(v, "schema")
		}
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	p.required(n, "the mapping", have, "table", "keys", "entities")
	if indexesNode != nil {
		p.parseIndexes(indexesNode, m)
	}
	if entitiesNode != nil {
		p.parseEntities(entitiesNode, m)
	}
	p.checkAttributeNames(m)
}

func (p *parser) parseIndexes(n *yaml.Node, m *Mapping) {
	p.fields(n, "indexes", nil, func(name string, k, v *yaml.Node) {
		ix := &Index{Name: name, Pos: pos(k)}
		p.checkName("index", name, ix.Pos)
		have := map[string]bool{}
		p.fields(v, "index "+name, []string{"partition", "sort"}, func(key string, _, v *yaml.Node) {
			have[key] = true
			switch key {
			case "partition":
				ix.PartitionKey, _ = p.name(v, "partition")
			case "sort":
				ix.SortKey, _ = p.name(v, "sort")
			}
		})
		if v.Kind == yaml.MappingNode {
			p.required(v, "index "+name, have, "partition")
		}
		m.Indexes = append(m.Indexes, ix)
	})
}

// reservedAttributes are the attributes the tool writes itself: the table
// and index keys and the entity attribute, with what each one is.
func (m *Mapping) reservedAttributes() map[string]string {
	reserved := map[string]string{m.PartitionKey: "the table's partition key", m.EntityAttribute: "the entity attribute"}
	if m.SortKey != "" {
		reserved[m.SortKey] = "the table's sort key"
	}
	for _, ix := range m.Indexes {
		reserved[ix.PartitionKey] = "the partition key of index " + ix.Name
		if ix.SortKey != "" {
			reserved[ix.SortKey] = "the sort key of index " + ix.Name
		}
	}
	return reserved
}

func (m *Mapping) index(name string) *Index {
	for _, ix := range m.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

func (m *Mapping) indexNames() []string {
	names := make([]string, len(m.Indexes))
	for i, ix := range m.Indexes {
		names[i] = ix.Name
	}
	return names
}

func (p *parser) parseEntities(n *yaml.Node, m *Mapping) {
	if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		p.r.errorf(pos(n), "entities must declare at least one entity")
		return
	}
	p.fields(n, "entities", nil, func(name string, k, v *yaml.Node) {
		e := &Entity{Name: name, Pos: pos(k), Schema: m.Schema}
		p.parseEntity(v, m, e)
		m.Entities = append(m.Entities, e)
	})
}

var entityFields = []string{"from", "schema", "key", "attributes", "exclude", "index", "embed", "copy"}

func (p *parser) parseEntity(n *yaml.Node, m *Mapping, e *Entity) {
	have := map[string]bool{}
	what := "entity " + e.Name
	p.fields(n, what, entityFields, func(key string, k, v *yaml.Node) {
		have[key] = true
		switch key {
		case "from":
			e.From, _ = p.name(v, "from")
			e.FromPos = pos(v)
		case "schema":
			e.Schema, _ = p.name(v, "schema")
		case "key":
			kh := map[string]bool{}
			p.fields(v, what+" key", []string{"pk", "sk"}, func(key string, _, v *yaml.Node) {
				kh[key] = true
				switch key {
				case "pk":
					e.PK = p.template(v, "key.pk")
				case "sk":
					e.SK = p.template(v, "key.sk")
				}
			})
			if v.Kind == yaml.MappingNode {
				p.required(v, what+" key", kh, "pk")
				if m.SortKey != "" && !kh["sk"] {
					p.r.errorf(pos(v), "%s key is missing \"sk\": the table has sort key %q", what, m.SortKey)
				}
				if m.SortKey == "" && kh["sk"] {
					p.r.errorf(pos(v), "%s key has \"sk\" but the table declares no sort key", what)
				}
			}
		case "attributes":
			e.AllColumns, e.Attributes = p.parseAttributes(v, e.Name)
		case "exclude":
			e.Exclude = p.refs(v, "exclude", "column names")
		case "embed":
			p.fields(v, what+" embed", nil, func(attr string, k, v *yaml.Node) {
				if em := p.parseEmbed(attr, k, v, e.Schema); em != nil {
					e.Embeds = append(e.Embeds, em)
				}
			})
		case "copy":
			e.Copies = p.parseCopies(v, e.Schema)
		case "index":
			p.fields(v, what+" index", nil, func(name string, k, v *yaml.Node) {
				ei := &EntityIndex{Index: name, Pos: pos(k)}
				if m.index(name) == nil {
					p.r.errorf(pos(k), "index %q is not declared under indexes%s", name, suggest(name, m.indexNames()))
				}
				ih := map[string]bool{}
				p.fields(v, "index "+name+" of "+e.Name, []string{"pk", "sk", "shard"}, func(key string, k, v *yaml.Node) {
					ih[key] = true
					switch key {
					case "pk":
						ei.PK = p.template(v, "pk")
					case "sk":
						ei.SK = p.template(v, "sk")
					case "shard":
						ei.Shard = p.parseShard(k, v)
					}
				})
				p.checkShardPlaceholder(ei)
				if v.Kind == yaml.MappingNode {
					p.required(v, "index "+name+" of "+e.Name, ih, "pk")
					if ix := m.index(name); ix != nil {
						if ix.SortKey != "" && !ih["sk"] {
							p.r.errorf(pos(v), "index %s of %s is missing \"sk\": the index has sort key %q", name, e.Name, ix.SortKey)
						}
						if ix.SortKey == "" && ih["sk"] {
							p.r.errorf(pos(v), "index %s of %s has \"sk\" but the index declares no sort key", name, e.Name)
						}
					}
				}
				e.Indexes = append(e.Indexes, ei)
			})
		}
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	p.required(&yaml.Node{Line: e.Pos.Line, Column: e.Pos.Col}, what, have, "from", "key")
	if len(e.Exclude) > 0 && !e.AllColumns {
		p.r.errorf(e.Exclude[0].Pos, "exclude needs attributes: \"*\" (it removes columns from the full selection)")
	}
}

func (p *parser) template(n *yaml.Node, what string) *Template {
	s, ok := p.str(n, what)
	if !ok {
		return nil
	}
	t, err := ParseTemplate(s)
	if err != nil {
		te := err.(*TemplateError)
		p.r.errorf(offsetPos(n, te.Offset), "%s: %s", what, te.Msg)
		return nil
	}
	if s == "" {
		p.r.errorf(pos(n), "%s must not be empty: DynamoDB rejects empty key values", what)
		return nil
	}
	t.Pos = pos(n)
	t.TextPos = offsetPos(n, 0)
	return t
}

// offsetPos points into a scalar: exact for plain and double-quoted
// single-line scalars, the scalar's start otherwise.
func offsetPos(n *yaml.Node, offset int) Pos {
	switch n.Style {
	case 0:
		return Pos{n.Line, n.Column + offset}
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		return Pos{n.Line, n.Column + 1 + offset}
	}
	return pos(n)
}

func (p *parser) refs(v *yaml.Node, what, of string) []Ref {
	if v.Kind != yaml.SequenceNode {
		p.r.errorf(pos(v), "%s must be a list of %s, not %s", what, of, kindName(v))
		return nil
	}
	var out []Ref
	for _, c := range v.Content {
		if s, ok := p.name(c, what+" entry"); ok {
			out = append(out, Ref{s, pos(c)})
		}
	}
	return out
}

func (p *parser) parseAttributes(n *yaml.Node, owner string) (all bool, attrs []*Attribute) {
	if n.Kind == yaml.ScalarNode && n.Value == "*" {
		return true, nil
	}
	if n.Kind == yaml.SequenceNode {
		// A list selects columns under their own names; "*" may be one of them.
		for _, c := range n.Content {
			s, ok := p.name(c, "attribute")
			if !ok {
				continue
			}
			if s == "*" {
				all = true
				continue
			}
			attrs = append(attrs, &Attribute{Name: s, Column: s, Null: NullOmit, Pos: pos(c), ColumnPos: pos(c)})
		}
		return all, attrs
	}
	p.fields(n, "attributes of "+owner, nil, func(name string, k, v *yaml.Node) {
		a := &Attribute{Name: name, Null: NullOmit, Pos: pos(k), ColumnPos: pos(k)}
		if name == "*" {
			p.r.errorf(pos(k), `"*" selects all columns: write attributes: "*" or put "*" in a list`)
			return
		}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				a.Column = name // "name:" with no value keeps the column's own name
			} else {
				a.Column, _ = p.name(v, "column of attribute "+name)
				a.ColumnPos = pos(v)
			}
		case yaml.MappingNode:
			p.fields(v, "attribute "+name, []string{"column", "as", "null"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "column":
					a.Column, _ = p.name(v, "column")
					a.ColumnPos = pos(v)
				case "as":
					s, ok := p.name(v, "as")
					if ok {
						if !contains(conversions, Conversion(s)) {
							p.r.errorf(pos(v), "unknown conversion %q%s", s, suggest(s, convNames()))
						} else {
							a.As = Conversion(s)
						}
					}
				case "null":
					s, ok := p.name(v, "null")
					if ok {
						switch NullMode(s) {
						case NullOmit, NullKeep:
							a.Null = NullMode(s)
						default:
							p.r.errorf(pos(v), "null must be %q or %q, not %q", NullOmit, NullKeep, s)
						}
					}
				}
			})
			if a.Column == "" {
				a.Column = name
			}
		default:
			p.r.errorf(pos(v), "attribute %s must be a column name or a mapping, not %s", name, kindName(v))
			return
		}
		attrs = append(attrs, a)
	})
	return all, attrs
}

func convNames() []string {
	s := make([]string, len(conversions))
	for i, c := range conversions {
		s[i] = string(c)
	}
	return s
}

// checkAttributeNames rejects attribute names that would overwrite the key,
// index or entity attributes the tool writes itself.
func (p *parser) checkAttributeNames(m *Mapping) {
	reserved := m.reservedAttributes()
	for _, e := range m.Entities {
		seen := map[string]bool{}
		for _, a := range e.Attributes {
			if what, ok := reserved[a.Name]; ok && a.Name != "" {
				p.r.errorf(a.Pos, "attribute %q of %s would overwrite %s", a.Name, e.Name, what)
			}
			if seen[a.Name] {
				p.r.errorf(a.Pos, "attribute %q is declared twice in %s", a.Name, e.Name)
			}
			seen[a.Name] = true
		}
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "null"
	}
	return fmt.Sprintf("%q", n.Value)
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
