package mapping

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
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
	m, ds := ParsePartial(file, data)
	if ds != nil {
		return nil, ds
	}
	return m, nil
}

// ParsePartial is Parse that also returns what it could read of a file
// with problems: every entity, index and pattern it found, the parts in
// error left out or empty. Such a mapping is good for one thing: Check
// against the catalog, so that a file's problems are all reported in one
// pass (MergeDiagnostics joins the two lists). The mapping is nil only when
// the file is not YAML at all.
func ParsePartial(file string, data []byte) (*Mapping, Diagnostics) {
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
	p := &parser{r: r, lines: strings.Split(string(data), "\n")}
	p.parseRoot(root, m)
	if len(r.diags) > 0 {
		return m, r.diags.sorted()
	}
	return m, nil
}

type parser struct {
	r     *reporter
	lines []string // the file's lines, to place the text of block scalars
	// reserved are the attributes the tool writes itself (table and index
	// keys, the entity attribute), as the file names them.
	reserved []reservedName
}

// reservedName is one attribute the tool writes itself, with what it is
// and where the file names it (the zero Pos for the default entity
// attribute).
type reservedName struct {
	name, what string
	rank       int // 0 table key, 1 index key, 2 entity attribute
	pos        Pos
}

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
	m.PartitionKeyType = KeyString
	var indexesNode, entitiesNode, patternsNode *yaml.Node
	p.fields(n, "the mapping", []string{"table", "keys", "indexes", "entities", "entityAttribute", "separator", "schema", "accessPatterns"}, func(key string, k, v *yaml.Node) {
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
					m.PartitionKey, m.PartitionKeyType = p.keyAttr(v, "keys.partition")
					p.reserve(m.PartitionKey, "the table's partition key", 0, v)
				case "sort":
					m.SortKey, m.SortKeyType = p.keyAttr(v, "keys.sort")
					p.reserve(m.SortKey, "the table's sort key", 0, v)
				}
			})
			if v.Kind == yaml.MappingNode {
				p.required(v, "keys", kh, "partition")
			}
		case "indexes":
			indexesNode = v
		case "entities":
			entitiesNode = v
		case "accessPatterns":
			patternsNode = v
		case "entityAttribute":
			m.EntityAttribute, _ = p.name(v, "entityAttribute")
			p.reserve(m.EntityAttribute, "the entity attribute", 2, v)
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
	if !have["entityAttribute"] {
		p.reserved = append(p.reserved, reservedName{m.EntityAttribute, "the entity attribute (by default)", 2, Pos{}})
	}
	if indexesNode != nil {
		p.parseIndexes(indexesNode, m)
		p.checkKeyTypes(m)
	}
	p.checkReservedNames()
	if entitiesNode != nil {
		p.parseEntities(entitiesNode, m)
	}
	if patternsNode != nil {
		p.parseAccessPatterns(patternsNode, m)
	}
	p.checkAttributeNames(m)
	p.checkIndexProjections(m)
}

func (p *parser) reserve(name, what string, rank int, n *yaml.Node) {
	if name != "" {
		p.reserved = append(p.reserved, reservedName{name, what, rank, pos(n)})
	}
}

// checkReservedNames rejects a key or entity attribute named like another
// one: the tool would write one over the other (an entity attribute named
// GSI1PK puts every item under its entity name in GSI1, silently). The
// table's keys come first, then the indexes', then the entity attribute:
// the later one is reported, where it is named. An index keyed on the
// table's own key attributes (an inverted index: partition SK, sort PK) is
// no collision: the items' table keys are its entries, and no entity may
// give it templates (checkAttributeNames). A local index shares the
// table's partition key by definition and names only its sort key.
func (p *parser) checkReservedNames() {
	rs := slices.Clone(p.reserved)
	slices.SortStableFunc(rs, func(a, b reservedName) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.pos.Line, b.pos.Line), cmp.Compare(a.pos.Col, b.pos.Col))
	})
	first := map[string]reservedName{}
	for _, r := range rs {
		prev, ok := first[r.name]
		if !ok {
			first[r.name] = r
			continue
		}
		if prev.rank == 0 && r.rank == 1 {
			continue // an index on the table's own keys
		}
		at := r.pos
		if at == (Pos{}) {
			at = prev.pos // the default entity attribute is named nowhere
		}
		p.r.errorf(at, "%s is %q, which is already %s: the key attributes and the entity attribute each need their own name", upperFirst(r.what), r.name, prev.what)
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// keyAttr reads a key attribute: a name (type S), or { name, type }.
func (p *parser) keyAttr(v *yaml.Node, what string) (string, KeyType) {
	if v.Kind != yaml.MappingNode {
		name, _ := p.name(v, what)
		return name, KeyString
	}
	var name string
	typ := KeyString
	have := map[string]bool{}
	p.fields(v, what, []string{"name", "type"}, func(key string, _, v *yaml.Node) {
		have[key] = true
		switch key {
		case "name":
			name, _ = p.name(v, what+" name")
		case "type":
			if s, ok := p.name(v, what+" type"); ok {
				switch KeyType(s) {
				case KeyString, KeyNumber, KeyBinary:
					typ = KeyType(s)
				default:
					p.r.errorf(pos(v), "%s type must be S (string), N (number) or B (binary), not %q", what, s)
				}
			}
		}
	})
	p.required(v, what, have, "name")
	return name, typ
}

// DynamoDB's limits on the indexes of one table.
const (
	maxGlobalIndexes = 20
	maxLocalIndexes  = 5
	maxProjected     = 100 // non-key attributes projected, summed over all indexes
)

func (p *parser) parseIndexes(n *yaml.Node, m *Mapping) {
	globals, locals := 0, 0
	p.fields(n, "indexes", nil, func(name string, k, v *yaml.Node) {
		ix := &Index{Name: name, Pos: pos(k), PartitionKeyType: KeyString, Projection: Projection{Type: ProjectAll, Pos: pos(k)}}
		p.checkName("index", name, ix.Pos)
		have := map[string]bool{}
		var partitionNode *yaml.Node
		p.fields(v, "index "+name, []string{"partition", "sort", "local", "projection"}, func(key string, k, v *yaml.Node) {
			have[key] = true
			switch key {
			case "partition":
				partitionNode = k
				ix.PartitionKey, ix.PartitionKeyType = p.keyAttr(v, "partition")
				p.reserve(ix.PartitionKey, "the partition key of index "+name, 1, v)
			case "sort":
				ix.SortKey, ix.SortKeyType = p.keyAttr(v, "sort")
				p.reserve(ix.SortKey, "the sort key of index "+name, 1, v)
			case "local":
				if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
					p.r.errorf(pos(v), "local must be true or false, not %s", kindName(v))
					return
				}
				ix.Local = v.Value == "true"
			case "projection":
				ix.Projection = p.parseProjection(v)
			}
		})
		if v.Kind == yaml.MappingNode {
			switch {
			case ix.Local:
				locals++
				if partitionNode != nil {
					p.r.errorf(pos(partitionNode), "index %s is local: it shares the table's partition key %q, so it declares only sort", name, m.PartitionKey)
				}
				p.required(v, "local index "+name, have, "sort")
				if m.SortKey == "" {
					p.r.errorf(pos(k), "local index %s needs a table with a sort key (keys.sort): an LSI is an alternative sort key of the table's item collections", name)
				}
				ix.PartitionKey, ix.PartitionKeyType = m.PartitionKey, m.PartitionKeyType
			default:
				globals++
				p.required(v, "index "+name, have, "partition")
			}
			switch {
			case locals > maxLocalIndexes && ix.Local:
				p.r.errorf(pos(k), "index %s: a table has at most %d local secondary indexes", name, maxLocalIndexes)
			case globals > maxGlobalIndexes && !ix.Local:
				p.r.errorf(pos(k), "index %s: a table has at most %d global secondary indexes", name, maxGlobalIndexes)
			}
		}
		m.Indexes = append(m.Indexes, ix)
	})
}

// checkKeyTypes checks that an attribute serving as several keys (an
// inverted index keyed on SK) has one type in all of them.
func (p *parser) checkKeyTypes(m *Mapping) {
	type use struct {
		typ  KeyType
		what string
	}
	seen := map[string]use{}
	add := func(name string, typ KeyType, what string, at Pos) {
		if name == "" {
			return
		}
		if typ == "" {
			typ = KeyString
		}
		if prev, ok := seen[name]; ok && prev.typ != typ {
			p.r.errorf(at, "%s: key attribute %q has type %s here but %s as %s; an attribute has one type", what, name, typ, prev.typ, prev.what)
			return
		}
		if _, ok := seen[name]; !ok {
			seen[name] = use{typ, what}
		}
	}
	add(m.PartitionKey, m.PartitionKeyType, "the table's partition key", m.Pos)
	add(m.SortKey, m.SortKeyType, "the table's sort key", m.Pos)
	for _, ix := range m.Indexes {
		if !ix.Local {
			add(ix.PartitionKey, ix.PartitionKeyType, "index "+ix.Name, ix.Pos)
		}
		add(ix.SortKey, ix.SortKeyType, "index "+ix.Name, ix.Pos)
	}
}

// parseProjection reads projection: ALL | KEYS_ONLY | { include: [attr, ...] }.
func (p *parser) parseProjection(v *yaml.Node) Projection {
	pr := Projection{Type: ProjectAll, Pos: pos(v)}
	if v.Kind == yaml.MappingNode {
		have := map[string]bool{}
		p.fields(v, "projection", []string{"include"}, func(_ string, _, v *yaml.Node) {
			have["include"] = true
			pr.Type = ProjectInclude
			pr.NonKeyAttributes = p.refs(v, "projection include", "attribute names")
		})
		p.required(v, "projection", have, "include")
		if have["include"] && len(pr.NonKeyAttributes) == 0 {
			p.r.errorf(pos(v), "projection include must name at least one attribute (or use KEYS_ONLY)")
		}
		return pr
	}
	s, ok := p.name(v, "projection")
	if !ok {
		return pr
	}
	switch strings.ToUpper(s) {
	case string(ProjectAll):
		pr.Type = ProjectAll
	case string(ProjectKeysOnly):
		pr.Type = ProjectKeysOnly
	case string(ProjectInclude):
		p.r.errorf(pos(v), "projection INCLUDE names its attributes: projection: { include: [attr, ...] }")
	default:
		p.r.errorf(pos(v), "projection must be ALL, KEYS_ONLY or { include: [attr, ...] }, not %q%s", s, suggest(strings.ToUpper(s), []string{"ALL", "KEYS_ONLY"}))
	}
	return pr
}

// checkIndexProjections checks INCLUDE projections: the attributes exist on
// some item of the index, and DynamoDB's limit of 100 projected attributes
// over all indexes.
func (p *parser) checkIndexProjections(m *Mapping) {
	total := 0
	for _, ix := range m.Indexes {
		if ix.Projection.Type != ProjectInclude {
			continue
		}
		total += len(ix.Projection.NonKeyAttributes)
		if total > maxProjected {
			p.r.errorf(ix.Projection.Pos, "index %s: the indexes of a table project at most %d non-key attributes in all, this makes %d", ix.Name, maxProjected, total)
		}
		reserved := m.reservedAttributes()
		written := m.writtenAttributes(ix.Name)
		for _, a := range ix.Projection.NonKeyAttributes {
			switch a.Name {
			case m.PartitionKey, m.SortKey, ix.PartitionKey, ix.SortKey:
				p.r.errorf(a.Pos, "index %s projects %q, a key of the table or the index: keys are always projected", ix.Name, a.Name)
				continue
			}
			if _, isKey := reserved[a.Name]; isKey {
				continue // another index's key or the entity attribute: written by the tool
			}
			if written != nil && !written[a.Name] {
				p.r.errorf(a.Pos, "index %s projects %q, which no entity in the index writes%s", ix.Name, a.Name, suggest(a.Name, sortedKeys(written)))
			}
		}
	}
}

// writtenAttributes lists the attribute names the entities in an index
// write by name (explicit attributes, embeds, copies), or nil when one of
// them selects "*" (its names are known only from the catalog).
func (m *Mapping) writtenAttributes(index string) map[string]bool {
	out := map[string]bool{m.EntityAttribute: true}
	var copies func([]*Copy)
	copies = func(cs []*Copy) {
		for _, c := range cs {
			if c.Into != "" {
				out[c.Into] = true
				continue
			}
			for _, a := range c.Attributes {
				out[a.Name] = true
			}
			copies(c.Copies)
		}
	}
	for _, e := range m.Entities {
		in := false
		for _, ei := range e.Indexes {
			in = in || ei.Index == index
		}
		if !in {
			continue
		}
		if e.AllColumns {
			return nil
		}
		for _, a := range e.Attributes {
			out[a.Name] = true
		}
		for _, em := range e.Embeds {
			out[em.Attribute] = true
		}
		for _, ag := range e.Aggregates {
			out[ag.Attribute] = true
		}
		copies(e.Copies)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reservedAttributes are the attributes the tool writes itself: the table
// and index keys and the entity attribute, with what each one is (the first
// one, should the file give two the same name: a diagnostic of its own).
func (m *Mapping) reservedAttributes() map[string]string {
	reserved := map[string]string{}
	add := func(name, what string) {
		if _, ok := reserved[name]; !ok && name != "" {
			reserved[name] = what
		}
	}
	add(m.PartitionKey, "the table's partition key")
	add(m.SortKey, "the table's sort key")
	for _, ix := range m.Indexes {
		if !ix.Local { // a local index's partition key is the table's
			add(ix.PartitionKey, "the partition key of index "+ix.Name)
		}
		add(ix.SortKey, "the sort key of index "+ix.Name)
	}
	add(m.EntityAttribute, "the entity attribute")
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

var entityFields = []string{"from", "schema", "key", "attributes", "exclude", "index", "embed", "copy", "where", "aggregate"}

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
		case "where":
			e.Where = p.condition(v, "where")
		case "aggregate":
			p.fields(v, what+" aggregate", nil, func(attr string, k, v *yaml.Node) {
				if ag := p.parseAggregate(attr, k, v, e.Schema); ag != nil {
					e.Aggregates = append(e.Aggregates, ag)
				}
			})
		case "index":
			p.fields(v, what+" index", nil, func(name string, k, v *yaml.Node) {
				ei := &EntityIndex{Index: name, Pos: pos(k)}
				if m.index(name) == nil {
					p.r.errorf(pos(k), "index %q is not declared under indexes%s", name, suggest(name, m.indexNames()))
				}
				ih := map[string]bool{}
				ix := m.index(name)
				p.fields(v, "index "+name+" of "+e.Name, []string{"pk", "sk", "shard", "where", "empty"}, func(key string, k, v *yaml.Node) {
					ih[key] = true
					switch key {
					case "pk":
						if ix != nil && ix.Local {
							p.r.errorf(pos(k), "index %s is local: it shares the table's partition key, so %s gives it only sk", name, e.Name)
							return
						}
						ei.PK = p.template(v, "pk")
					case "sk":
						ei.SK = p.template(v, "sk")
					case "shard":
						ei.Shard = p.parseShard(k, v)
					case "where":
						ei.Where = p.condition(v, "where")
					case "empty":
						if s, ok := p.name(v, "empty"); ok {
							switch s {
							case "absent":
								ei.EmptyAbsent = true
							case "error":
							default:
								p.r.errorf(pos(v), "empty must be \"error\" (an empty key value is a row error) or \"absent\" (the item stays out of the index), not %q", s)
							}
						}
					}
				})
				p.checkShardPlaceholder(ei)
				if v.Kind == yaml.MappingNode && ix != nil {
					if !ix.Local {
						p.required(v, "index "+name+" of "+e.Name, ih, "pk")
					}
					if ix.SortKey != "" && !ih["sk"] {
						p.r.errorf(pos(v), "index %s of %s is missing \"sk\": the index has sort key %q", name, e.Name, ix.SortKey)
					}
					if ix.SortKey == "" && ih["sk"] {
						p.r.errorf(pos(v), "index %s of %s has \"sk\" but the index declares no sort key", name, e.Name)
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
	bad := false
	for _, part := range t.Placeholders() {
		for _, f := range part.Funcs {
			at := offsetPos(n, f.Offset)
			if msg := checkFuncName(f.Name); msg != "" {
				p.r.errorf(at, "%s: {%s|%s}: %s", what, part.Ref(), f.Name, msg)
				bad = true
				continue
			}
			if _, _, err := FuncArgs(f); err != nil {
				p.r.errorf(at, "%s: {%s|%s}: %v", what, part.Ref(), f.Name, err)
				bad = true
			}
		}
	}
	if bad {
		return nil
	}
	return t
}

// condition parses a where clause, reporting a syntax error at its position.
func (p *parser) condition(n *yaml.Node, what string) *Condition {
	s, ok := p.str(n, what)
	if !ok {
		return nil
	}
	c, err := ParseCondition(s)
	if err != nil {
		te := err.(*TemplateError)
		p.r.errorf(offsetPos(n, te.Offset), "%s: %s", what, te.Msg)
		return nil
	}
	c.Pos = pos(n)
	c.TextPos = offsetPos(n, 0)
	return c
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

// checkAttributeNames rejects item attribute names that would overwrite the
// key, index or entity attributes the tool writes itself, or each other:
// attributes, embeds and copied attributes all land in one item.
func (p *parser) checkAttributeNames(m *Mapping) {
	reserved := m.reservedAttributes()
	for _, e := range m.Entities {
		seen := map[string]string{} // attribute name -> what already writes it
		// what is "attribute", "embed", "copied attribute" or "copy into";
		// as is the same with an article, for the message about a later one.
		add := func(name string, at Pos, what, as string) {
			if name == "" {
				return
			}
			if r, ok := reserved[name]; ok {
				p.r.errorf(at, "%s %q of %s would overwrite %s", what, name, e.Name, r)
				return
			}
			prev, ok := seen[name]
			switch {
			case ok && what == "attribute" && prev == "an attribute":
				p.r.errorf(at, "attribute %q is declared twice in %s", name, e.Name)
			case ok:
				p.r.errorf(at, "%s %q of %s is already %s of the item", what, name, e.Name, prev)
			default:
				seen[name] = as
			}
		}
		for _, a := range e.Attributes {
			add(a.Name, a.Pos, "attribute", "an attribute")
		}
		for _, em := range e.Embeds {
			add(em.Attribute, em.Pos, "embed", "an embed")
		}
		for _, ag := range e.Aggregates {
			add(ag.Attribute, ag.Pos, "aggregate", "an aggregate")
		}
		for _, ei := range e.Indexes {
			ix := m.index(ei.Index)
			if ix == nil {
				continue
			}
			for _, k := range []struct{ role, attr string }{{"partition key", ix.PartitionKey}, {"sort key", ix.SortKey}} {
				if ix.Local && k.role == "partition key" {
					continue // a local index's partition key is the table's, by definition
				}
				if k.attr != "" && (k.attr == m.PartitionKey || k.attr == m.SortKey) {
					p.r.errorf(ei.Pos, "index %s has the table's own key attribute %q as its %s: the items' table keys are its entries, so %s cannot give it templates that would overwrite them",
						ix.Name, k.attr, k.role, e.Name)
					break
				}
			}
		}
		var copies func([]*Copy)
		copies = func(cs []*Copy) {
			for _, cp := range cs {
				if cp.Into != "" {
					// One map attribute; what it copies lands inside it.
					add(cp.Into, cp.IntoPos, "copy into", "a copied map")
					continue
				}
				for _, a := range cp.Attributes {
					add(a.Name, a.Pos, "copied attribute", "a copied attribute")
				}
				copies(cp.Copies) // flat: its nested copies land on the item too
			}
		}
		copies(e.Copies)
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
