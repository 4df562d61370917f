package mapping

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// AccessPattern is one question the table is designed to answer: the
// DynamoDB operation that answers it (GetItem, or Query on the table or an
// index), the same question in SQL against the source, and where its
// parameters come from. The prove package asks both and compares.
type AccessPattern struct {
	Name        string
	Description string

	// Params are the named parameters with the source column each draws its
	// values from; ParamsSQL is instead a query whose result columns are the
	// parameters, one set per row. At most one of them is set.
	Params    []*Param
	ParamsSQL string

	Op    string // OpGetItem or OpQuery
	Index string // "" for the table
	PK    *Template
	// SK is the sort key of a GetItem, or of a Query's condition.
	SK *KeyCondition
	// Descending reads the Query in descending sort key order
	// (ScanIndexForward false).
	Descending bool
	Limit      int
	// Unordered compares the answers as multisets; by default a Query's
	// answer is compared in order.
	Unordered bool

	// SQL is the same question against the source, with @name parameters.
	// An item-collection pattern has Collection instead.
	SQL    string
	SQLPos Pos
	// SQLTextPos is where the SQL's first character is.
	SQLTextPos Pos
	sqlBlock   bool
	// sqlText and paramsText place the characters of SQL and ParamsSQL
	// in the file, for errors the database reports at an offset.
	sqlText, paramsText sqlText

	// Collection makes the pattern an item collection: one Query returns
	// items of several entities under one partition key (a customer with
	// its orders and addresses), and each entity's items are compared
	// with its own SQL query, in the order declared.
	Collection []*EntityQuery

	// Buckets are declared sets a Query fans out over: one partition per
	// combination of their values ({year} in its pk), merged in sort key
	// order, the limit applying to the merged items.
	Buckets []*Bucket

	Pos, IndexPos Pos
}

// EntityQuery is the SQL side of one entity of an item-collection pattern.
type EntityQuery struct {
	Entity string
	Pos    Pos // the entity's name
	SQL    string
	SQLPos Pos
	// SQLTextPos is where the SQL's first character is.
	SQLTextPos Pos
	sqlBlock   bool
	sqlText    sqlText
}

// SQLOffsetPos is the position in the file of byte offset off of SQL.
func (q *EntityQuery) SQLOffsetPos(off int) Pos { return q.sqlText.at(q.SQL, off) }

// Param is one named parameter drawn from a source column.
type Param struct {
	Name                  string
	Schema, Table, Column string
	Pos                   Pos
}

// The operations an access pattern can use. Scan is not one of them: a
// pattern that needs a Scan is not served by the design.
const (
	OpGetItem = "GetItem"
	OpQuery   = "Query"
)

// Sort key conditions of a Query, as DynamoDB's KeyConditionExpression
// writes them.
const (
	CondEq         = "="
	CondLt         = "<"
	CondLe         = "<="
	CondGt         = ">"
	CondGe         = ">="
	CondBeginsWith = "begins_with"
	CondBetween    = "BETWEEN"
)

// KeyCondition is a sort key condition: Op with one template (two for
// BETWEEN).
type KeyCondition struct {
	Op     string
	Values []*Template
	Pos    Pos
}

var skConditions = map[string]string{
	"eq": CondEq, "lt": CondLt, "le": CondLe, "gt": CondGt, "ge": CondGe,
	"begins_with": CondBeginsWith, "between": CondBetween,
}

var skConditionNames = []string{"eq", "lt", "le", "gt", "ge", "begins_with", "between"}

func (p *parser) parseAccessPatterns(n *yaml.Node, m *Mapping) {
	p.fields(n, "accessPatterns", nil, func(name string, k, v *yaml.Node) {
		ap := &AccessPattern{Name: name, Pos: pos(k)}
		what := "access pattern " + name
		have := map[string]bool{}
		p.fields(v, what, []string{"description", "params", "get", "query", "sql", "ordered"}, func(key string, k, v *yaml.Node) {
			have[key] = true
			switch key {
			case "description":
				ap.Description, _ = p.str(v, "description")
			case "params":
				p.parseParams(v, m, ap)
			case "get":
				ap.Op = OpGetItem
				p.parseGet(v, m, ap)
			case "query":
				ap.Op = OpQuery
				p.parseQuery(v, m, ap)
			case "sql":
				if v.Kind == yaml.MappingNode {
					p.parseCollection(v, ap)
					return
				}
				ap.SQL, _ = p.name(v, "sql")
				ap.SQLPos, ap.SQLTextPos = pos(v), offsetPos(v, 0)
				ap.sqlBlock = v.Style == yaml.LiteralStyle || v.Style == yaml.FoldedStyle
				ap.sqlText = p.sqlText(v)
			case "ordered":
				if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
					p.r.errorf(pos(v), "ordered must be true or false, not %s", kindName(v))
					return
				}
				ap.Unordered = v.Value == "false"
			}
		})
		if v.Kind != yaml.MappingNode {
			return
		}
		p.required(v, what, have, "sql")
		switch {
		case have["get"] && have["query"]:
			p.r.errorf(pos(v), "%s has both get and query: a pattern is one operation", what)
		case !have["get"] && !have["query"]:
			p.r.errorf(pos(v), "%s needs get: { pk, sk } or query: { pk, ... }: the operation that answers it (never a Scan)", what)
		}
		if len(ap.Collection) > 0 {
			switch {
			case ap.Op == OpGetItem:
				p.r.errorf(ap.Collection[0].Pos, "%s: sql per entity makes an item collection, which a query reads (GetItem returns one item)", what)
			case ap.Limit > 0:
				p.r.errorf(ap.Collection[0].Pos, "%s: sql per entity cannot take limit: the limit cuts the collection's items in sort key order, which no entity's query alone can follow", what)
			}
		}
		p.checkPatternParams(ap)
		p.checkBuckets(ap)
		m.AccessPatterns = append(m.AccessPatterns, ap)
	})
}

// parseCollection reads sql: { Entity: "SELECT ...", ... }, an
// item-collection pattern's SQL side.
func (p *parser) parseCollection(n *yaml.Node, ap *AccessPattern) {
	if len(n.Content) == 0 {
		p.r.errorf(pos(n), "access pattern %s: sql is empty: write a query, or one query per entity of an item collection", ap.Name)
		return
	}
	p.fields(n, "sql", nil, func(name string, k, v *yaml.Node) {
		q := &EntityQuery{Entity: name, Pos: pos(k)}
		q.SQL, _ = p.name(v, "sql of "+name)
		q.SQLPos, q.SQLTextPos = pos(v), offsetPos(v, 0)
		q.sqlBlock = v.Style == yaml.LiteralStyle || v.Style == yaml.FoldedStyle
		q.sqlText = p.sqlText(v)
		ap.Collection = append(ap.Collection, q)
	})
}

// parseParams reads params: { name: table.column } or params: "SELECT ...".
func (p *parser) parseParams(v *yaml.Node, m *Mapping, ap *AccessPattern) {
	if v.Kind == yaml.ScalarNode {
		ap.ParamsSQL, _ = p.name(v, "params")
		ap.paramsText = p.sqlText(v)
		if ap.ParamsSQL != "" && !strings.ContainsAny(strings.TrimSpace(ap.ParamsSQL), " \t\n") {
			p.r.errorf(pos(v), "params is a query (SELECT ... AS name) or { name: table.column }, not %q", ap.ParamsSQL)
		}
		return
	}
	p.fields(v, "params", nil, func(name string, k, v *yaml.Node) {
		s, ok := p.name(v, "parameter "+name)
		if !ok {
			return
		}
		parts := strings.Split(s, ".")
		prm := &Param{Name: name, Schema: m.Schema, Pos: pos(v)}
		switch len(parts) {
		case 2:
			prm.Table, prm.Column = parts[0], parts[1]
		case 3:
			prm.Schema, prm.Table, prm.Column = parts[0], parts[1], parts[2]
		}
		if prm.Column == "" || prm.Table == "" || prm.Schema == "" {
			p.r.errorf(pos(v), "parameter %s: want table.column (or schema.table.column) to draw values from, or params: \"SELECT ...\", not %q", name, s)
			return
		}
		if name == ShardPlaceholder {
			p.r.errorf(pos(k), "parameter %s: {%s} is the shard number of a sharded index; name the parameter otherwise", name, ShardPlaceholder)
			return
		}
		ap.Params = append(ap.Params, prm)
	})
}

func (p *parser) parseGet(v *yaml.Node, m *Mapping, ap *AccessPattern) {
	have := map[string]bool{}
	p.fields(v, "get", []string{"pk", "sk"}, func(key string, k, v *yaml.Node) {
		have[key] = true
		switch key {
		case "pk":
			ap.PK = p.template(v, "get pk")
		case "sk":
			if t := p.template(v, "get sk"); t != nil {
				ap.SK = &KeyCondition{Op: CondEq, Values: []*Template{t}, Pos: pos(k)}
			}
		}
	})
	if v.Kind != yaml.MappingNode {
		return
	}
	p.required(v, "get", have, "pk")
	if m.SortKey != "" && !have["sk"] {
		p.r.errorf(pos(v), "get needs sk: GetItem takes the whole primary key (a partition is read with query)")
	}
	if m.SortKey == "" && have["sk"] {
		p.r.errorf(pos(v), "get has sk but the table declares no sort key")
	}
}

func (p *parser) parseQuery(v *yaml.Node, m *Mapping, ap *AccessPattern) {
	have := map[string]bool{}
	var skNode *yaml.Node
	p.fields(v, "query", []string{"index", "pk", "sk", "direction", "limit", "buckets"}, func(key string, k, v *yaml.Node) {
		have[key] = true
		switch key {
		case "index":
			ap.Index, _ = p.name(v, "index")
			ap.IndexPos = pos(v)
			if ap.Index != "" && m.index(ap.Index) == nil {
				p.r.errorf(pos(v), "index %q is not declared under indexes%s", ap.Index, suggest(ap.Index, m.indexNames()))
			}
		case "pk":
			ap.PK = p.template(v, "query pk")
		case "sk":
			skNode = k
			ap.SK = p.parseKeyCondition(k, v)
		case "direction":
			if s, ok := p.name(v, "direction"); ok {
				switch s {
				case "asc":
				case "desc":
					ap.Descending = true
				default:
					p.r.errorf(pos(v), "direction must be asc or desc (ScanIndexForward true or false), not %q", s)
				}
			}
		case "limit":
			if n, ok := p.positiveInt(v, "limit", 1<<30); ok {
				ap.Limit = int(n)
			}
		case "buckets":
			p.parseBuckets(v, ap)
		}
	})
	if v.Kind != yaml.MappingNode {
		return
	}
	p.required(v, "query", have, "pk")
	if skNode != nil {
		sort := m.SortKey
		if ix := m.index(ap.Index); ix != nil {
			sort = ix.SortKey
		}
		if sort == "" {
			p.r.errorf(pos(skNode), "query has sk but %s has no sort key", targetName(ap.Index))
		}
	}
}

func targetName(index string) string {
	if index == "" {
		return "the table"
	}
	return "index " + index
}

// parseKeyCondition reads sk: { eq|lt|le|gt|ge|begins_with: T } or
// sk: { between: [A, B] }; a plain template means eq.
func (p *parser) parseKeyCondition(k, v *yaml.Node) *KeyCondition {
	kc := &KeyCondition{Pos: pos(k)}
	if v.Kind == yaml.ScalarNode {
		if t := p.template(v, "sk"); t != nil {
			kc.Op, kc.Values = CondEq, []*Template{t}
			return kc
		}
		return nil
	}
	n := 0
	p.fields(v, "sk condition", skConditionNames, func(key string, k, v *yaml.Node) {
		n++
		kc.Op = skConditions[key]
		if kc.Op == CondBetween {
			if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
				p.r.errorf(pos(v), "between takes two sort key templates: between: [from, to]")
				return
			}
			for _, c := range v.Content {
				if t := p.template(c, "sk between"); t != nil {
					kc.Values = append(kc.Values, t)
				}
			}
			return
		}
		if t := p.template(v, "sk "+key); t != nil {
			kc.Values = []*Template{t}
		}
	})
	if v.Kind == yaml.MappingNode && n != 1 {
		p.r.errorf(pos(v), "sk condition takes exactly one of %s", strings.Join(skConditionNames, ", "))
		return nil
	}
	if len(kc.Values) == 0 {
		return nil
	}
	return kc
}

// Templates returns the pattern's key templates: pk, then the sort key
// condition's.
func (ap *AccessPattern) Templates() []*Template {
	var out []*Template
	if ap.PK != nil {
		out = append(out, ap.PK)
	}
	if ap.SK != nil {
		out = append(out, ap.SK.Values...)
	}
	return out
}

// Sharded reports whether the pattern fans out over every shard of a
// sharded index ({shard} in its pk).
func (ap *AccessPattern) Sharded() bool {
	if ap.PK == nil {
		return false
	}
	for _, part := range ap.PK.Placeholders() {
		if part.Column == ShardPlaceholder && len(part.Path) == 0 {
			return true
		}
	}
	return false
}

// FansOut reports whether one parameter set reads several partitions:
// the shards of a sharded index, or the combinations of declared buckets.
func (ap *AccessPattern) FansOut() bool { return ap.Sharded() || len(ap.Buckets) > 0 }

// ParamNames lists the declared parameter names (nil for ParamsSQL).
func (ap *AccessPattern) ParamNames() []string {
	var out []string
	for _, prm := range ap.Params {
		out = append(out, prm.Name)
	}
	return out
}

// checkPatternParams checks that templates and SQL use only declared
// parameters (when they are declared by column), and that {shard} appears
// only in a query's pk.
func (p *parser) checkPatternParams(ap *AccessPattern) {
	declared := ap.ParamNames()
	byColumn := ap.ParamsSQL == ""
	for i, t := range ap.Templates() {
		for _, part := range t.Placeholders() {
			at := Pos{t.TextPos.Line, t.TextPos.Col + part.Offset}
			if len(part.Path) > 0 {
				p.r.errorf(at, "access pattern %s: {%s}: placeholders of a pattern name its parameters, not copied columns", ap.Name, part.Ref())
				continue
			}
			if part.Column == ShardPlaceholder {
				if i != 0 || ap.Op != OpQuery {
					p.r.errorf(at, "access pattern %s: {%s} belongs in a query's pk, where it fans the query out over every shard", ap.Name, ShardPlaceholder)
				}
				continue
			}
			if ap.bucket(part.Column) != nil {
				if i != 0 {
					p.r.errorf(at, "access pattern %s: {%s} is a bucket: it belongs in the pk, where it picks the partitions the query fans out over", ap.Name, part.Column)
				}
				continue
			}
			if byColumn && !contains(declared, part.Column) {
				p.r.errorf(at, "access pattern %s: {%s} is not a parameter: declare it under params%s", ap.Name, part.Column, suggest(part.Column, declared))
			}
		}
	}
	if !byColumn {
		return
	}
	for _, q := range ap.Queries() {
		for _, use := range sqlParams(q.SQL) {
			if !contains(declared, use.name) {
				at := Pos{q.SQLTextPos.Line, q.SQLTextPos.Col + use.offset}
				if q.sqlBlock || strings.Contains(q.SQL[:use.offset], "\n") {
					at = q.SQLPos // inside a block scalar: the scalar's position
				}
				p.r.errorf(at, "access pattern %s: %s uses @%s, which is not a parameter%s", ap.Name, q.what(), use.name, suggest(use.name, declared))
			}
		}
	}
}

// Queries lists the pattern's SQL side: its sql, or one query per entity
// of an item collection (Entity set).
func (ap *AccessPattern) Queries() []*EntityQuery {
	if len(ap.Collection) > 0 {
		return ap.Collection
	}
	if ap.SQL == "" {
		return nil
	}
	return []*EntityQuery{{SQL: ap.SQL, SQLPos: ap.SQLPos, SQLTextPos: ap.SQLTextPos, sqlBlock: ap.sqlBlock, sqlText: ap.sqlText}}
}

// what names the query in messages: "sql", or "sql of Order".
func (q *EntityQuery) what() string {
	if q.Entity == "" {
		return "sql"
	}
	return "sql of " + q.Entity
}

// SQLParams lists the @name parameters the pattern's SQL uses, each once,
// in order of first use.
func (ap *AccessPattern) SQLParams() []string {
	var out []string
	for _, q := range ap.Queries() {
		for _, u := range sqlParams(q.SQL) {
			if !contains(out, u.name) {
				out = append(out, u.name)
			}
		}
	}
	return out
}

type sqlParam struct {
	name   string
	offset int
}

// sqlParams finds @name parameters outside quotes and comments, as pgx's
// named arguments read them.
func sqlParams(sql string) []sqlParam {
	var out []sqlParam
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return out
			}
			i += j + 1
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case c == '@':
			j := i + 1
			for j < len(sql) {
				r, size := utf8.DecodeRuneInString(sql[j:])
				if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
					break
				}
				j += size
			}
			if j > i+1 {
				out = append(out, sqlParam{sql[i+1 : j], i})
			}
			i = j - 1
		}
	}
	return out
}

// checkPatterns validates the access patterns against the entities and
// the catalog: parameters name real columns, and the pattern's keys can be
// produced by the templates of the table or index it names.
func checkPatterns(r *reporter, m *Mapping, cat *Catalog) {
	for _, ap := range m.AccessPatterns {
		for _, prm := range ap.Params {
			t := relation(r, cat, prm.Schema, prm.Table, prm.Pos)
			if t != nil {
				tableColumn(r, t, prm.Column, prm.Pos, "access pattern "+ap.Name+" parameter "+prm.Name)
			}
		}
		checkPatternKeys(r, m, ap)
		checkCollection(r, m, ap)
	}
}

// checkCollection checks an item-collection pattern: each query names an
// entity that writes a partition key like the pattern's to the table or
// index it queries, so that its items are in the collection.
func checkCollection(r *reporter, m *Mapping, ap *AccessPattern) {
	if len(ap.Collection) == 0 || ap.PK == nil || (ap.Index != "" && m.index(ap.Index) == nil) {
		return
	}
	var names []string
	for _, e := range m.Entities {
		names = append(names, e.Name)
	}
	shapes := shapesOf(m, ap.Index)
	for _, q := range ap.Collection {
		if m.Entity(q.Entity) == nil {
			r.errorf(q.Pos, "access pattern %s: sql of %s: no entity is named %q%s", ap.Name, q.Entity, q.Entity, suggest(q.Entity, names))
			continue
		}
		var writes []string
		shared := false
		for _, s := range shapes {
			if s.entity != q.Entity || s.pk == nil {
				continue
			}
			writes = append(writes, strconv.Quote(s.pk.Raw))
			shared = shared || templatesMatch(ap.PK, s.pk, m.Separator, false)
		}
		switch {
		case shared:
		case len(writes) == 0:
			r.errorf(q.Pos, "access pattern %s: sql of %s: %s writes no item to %s, so the collection cannot hold it", ap.Name, q.Entity, q.Entity, targetName(ap.Index))
		default:
			r.errorf(q.Pos, "access pattern %s: sql of %s: %s does not share the partition key %q on %s (it writes %s)", ap.Name, q.Entity, q.Entity, ap.PK.Raw, targetName(ap.Index), strings.Join(writes, ", "))
		}
	}
}

// keyShape is one (pk, sk) template pair an entity writes to the table or
// an index, with whether that index is sharded for the entity.
type keyShape struct {
	entity  string
	pk, sk  *Template
	sharded bool
}

func shapesOf(m *Mapping, index string) []keyShape {
	var out []keyShape
	ix := m.index(index)
	for _, e := range m.Entities {
		switch {
		case index == "":
			out = append(out, keyShape{entity: e.Name, pk: e.PK, sk: e.SK})
		default:
			for _, ei := range e.Indexes {
				if ei.Index != index {
					continue
				}
				pk := ei.PK
				if ix != nil && ix.Local {
					pk = e.PK
				}
				out = append(out, keyShape{entity: e.Name, pk: pk, sk: ei.SK, sharded: ei.Shard != nil})
			}
		}
	}
	return out
}

func checkPatternKeys(r *reporter, m *Mapping, ap *AccessPattern) {
	if ap.PK == nil || (ap.Index != "" && m.index(ap.Index) == nil) {
		return
	}
	what := "access pattern " + ap.Name
	where := targetName(ap.Index)
	shapes := shapesOf(m, ap.Index)
	var matched []keyShape
	var raws []string
	for _, s := range shapes {
		if s.pk == nil {
			continue
		}
		raws = append(raws, s.pk.Raw)
		if templatesMatch(ap.PK, s.pk, m.Separator, false) {
			matched = append(matched, s)
		}
	}
	if len(matched) == 0 {
		if undeclaredMatch(m, ap) {
			return // an entry in an index the file does not declare, reported where it is
		}
		r.errorf(ap.PK.Pos, "%s: no entity writes a partition key like %q to %s%s", what, ap.PK.Raw, where, closest(ap.PK.Raw, raws))
		return
	}
	sharded := false
	for _, s := range matched {
		sharded = sharded || s.sharded
	}
	switch {
	case sharded && !ap.Sharded():
		r.errorf(ap.PK.Pos, "%s: %s is sharded for %s: write {%s} in the pk to query every shard and merge", what, where, shardedNames(matched), ShardPlaceholder)
	case !sharded && ap.Sharded():
		r.errorf(ap.PK.Pos, "%s: {%s} fans out over shards, but no entity shards %s with a pk like %q", what, ShardPlaceholder, where, ap.PK.Raw)
	}
	if ap.SK == nil {
		return
	}
	prefix := ap.SK.Op != CondEq
	for _, v := range ap.SK.Values {
		ok := false
		var skRaws []string
		for _, s := range matched {
			if s.sk == nil {
				continue
			}
			skRaws = append(skRaws, s.sk.Raw)
			ok = ok || templatesMatch(v, s.sk, m.Separator, prefix)
		}
		if !ok {
			how := "a sort key like"
			if prefix {
				how = "a sort key starting like"
			}
			r.errorf(v.Pos, "%s: no entity with partition key %q writes %s %q to %s%s", what, ap.PK.Raw, how, v.Raw, where, closest(v.Raw, skRaws))
		}
	}
}

// undeclaredMatch reports whether an entity writes a partition key like the
// pattern's to an index the mapping does not declare: the index name is
// the problem, not the pattern.
func undeclaredMatch(m *Mapping, ap *AccessPattern) bool {
	for _, e := range m.Entities {
		for _, ei := range e.Indexes {
			if m.index(ei.Index) == nil && ei.PK != nil && templatesMatch(ap.PK, ei.PK, m.Separator, false) {
				return true
			}
		}
	}
	return false
}

// closest names the template of the design that is most like raw: the
// longest common prefix (keys are read from the left), then the smallest
// edit distance. Template parameters are named freely, so unlike "did you
// mean" there is no distance limit.
func closest(raw string, candidates []string) string {
	best, bestPrefix, bestDist := "", -1, 0
	for _, c := range candidates {
		n := 0
		for n < len(raw) && n < len(c) && raw[n] == c[n] {
			n++
		}
		d := editDistance(raw, c)
		if n > bestPrefix || n == bestPrefix && (d < bestDist || d == bestDist && c < best) {
			best, bestPrefix, bestDist = c, n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (the nearest it writes is %q)", best)
}

func shardedNames(shapes []keyShape) string {
	var names []string
	for _, s := range shapes {
		if s.sharded && !contains(names, s.entity) {
			names = append(names, s.entity)
		}
	}
	return strings.Join(names, ", ")
}

// templatesMatch reports whether the pattern template p can produce a key
// that the entity template e produces (prefix: a prefix of one). Keys are
// compared segment by segment between separators, since values never
// contain the separator: literal segments must be equal, a segment with a
// placeholder must agree with the other in its literal prefix and suffix.
func templatesMatch(p, e *Template, sep string, prefix bool) bool {
	ps, es := segments(p, sep), segments(e, sep)
	if len(ps) > len(es) || (!prefix && len(ps) != len(es)) {
		return false
	}
	for i := range ps {
		last := prefix && i == len(ps)-1
		if !segmentsMatch(ps[i], es[i], last) {
			return false
		}
	}
	return true
}

// segment is the text between separators: literal, or with placeholders
// (then only its literal head and tail are known).
type segment struct {
	head, tail string
	wild       bool
}

func segments(t *Template, sep string) []segment {
	out := []segment{{}}
	for _, part := range t.Parts {
		cur := &out[len(out)-1]
		if part.Column != "" {
			cur.wild = true
			cur.tail = ""
			continue
		}
		pieces := strings.Split(part.Literal, sep)
		for i, piece := range pieces {
			if i > 0 {
				out = append(out, segment{})
				cur = &out[len(out)-1]
			}
			if cur.wild {
				cur.tail += piece
			} else {
				cur.head += piece
			}
		}
	}
	return out
}

func segmentsMatch(p, e segment, prefixOnly bool) bool {
	switch {
	case !p.wild && !e.wild:
		if prefixOnly {
			return strings.HasPrefix(e.head, p.head)
		}
		return p.head == e.head
	case prefixOnly && !p.wild:
		// A literal start of a segment: the entity segment's head and the
		// pattern text must agree as far as both go.
		return strings.HasPrefix(e.head, p.head) || strings.HasPrefix(p.head, e.head)
	}
	if !strings.HasPrefix(p.head, e.head) && !strings.HasPrefix(e.head, p.head) {
		return false
	}
	if prefixOnly {
		return true
	}
	return strings.HasSuffix(p.tail, e.tail) || strings.HasSuffix(e.tail, p.tail)
}

// String renders a key condition as DynamoDB writes it.
func (kc *KeyCondition) String() string {
	switch kc.Op {
	case CondBetween:
		return fmt.Sprintf("BETWEEN %q AND %q", kc.Values[0].Raw, kc.Values[1].Raw)
	case CondBeginsWith:
		return fmt.Sprintf("begins_with %q", kc.Values[0].Raw)
	}
	return fmt.Sprintf("%s %q", kc.Op, kc.Values[0].Raw)
}

// sqlText places the characters of a SQL scalar in the file: the scalar's
// position, where its text starts, and for a literal block (|) where each
// of its lines starts. Elsewhere (folded or multi-line plain scalars)
// lines are joined, and a position past the first line is the scalar's.
type sqlText struct {
	pos, text Pos
	lines     []Pos // literal blocks only
	oneLine   bool  // a scalar whose text is on its first line
}

func (p *parser) sqlText(v *yaml.Node) sqlText {
	st := sqlText{pos: pos(v), text: offsetPos(v, 0), oneLine: v.Style != yaml.LiteralStyle && v.Style != yaml.FoldedStyle}
	if v.Style != yaml.LiteralStyle || v.Kind != yaml.ScalarNode {
		return st
	}
	// The block's lines follow the indicator's line; its indentation is
	// the first non-blank line's.
	indent := -1
	for i := v.Line; i < len(p.lines) && indent < 0; i++ {
		if t := strings.TrimLeft(p.lines[i], " "); t != "" {
			indent = len(p.lines[i]) - len(t)
		}
	}
	if indent < 0 {
		return st
	}
	for i := range strings.Count(v.Value, "\n") + 1 {
		st.lines = append(st.lines, Pos{v.Line + 1 + i, indent + 1})
	}
	return st
}

// at is the position of byte offset off of the scalar's text.
func (st sqlText) at(text string, off int) Pos {
	off = min(max(off, 0), len(text))
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndexByte(text[:off], '\n') + 1)
	switch {
	case line < len(st.lines):
		return Pos{st.lines[line].Line, st.lines[line].Col + col}
	case line == 0 && st.oneLine:
		return Pos{st.text.Line, st.text.Col + col}
	}
	return st.pos
}

// SQLOffsetPos is the position in the file of byte offset off of SQL.
func (ap *AccessPattern) SQLOffsetPos(off int) Pos { return ap.sqlText.at(ap.SQL, off) }

// ParamsSQLOffsetPos is the position in the file of byte offset off of
// ParamsSQL.
func (ap *AccessPattern) ParamsSQLOffsetPos(off int) Pos { return ap.paramsText.at(ap.ParamsSQL, off) }

// PositionalSQL rewrites @name parameters to $1, $2, ..., one number per
// distinct name in order of first use, as pgx's named arguments do, so
// that the SQL can be prepared. back maps a byte offset of the result to
// one of sql.
func PositionalSQL(sql string) (out string, back func(int) int) {
	var b strings.Builder
	type shift struct{ at, delta int } // from output offset at, add delta
	var shifts []shift
	numbers := map[string]int{}
	last := 0
	for _, u := range sqlParams(sql) {
		n, ok := numbers[u.name]
		if !ok {
			n = len(numbers) + 1
			numbers[u.name] = n
		}
		b.WriteString(sql[last:u.offset])
		repl := "$" + strconv.Itoa(n)
		b.WriteString(repl)
		last = u.offset + 1 + len(u.name)
		shifts = append(shifts, shift{b.Len(), last - b.Len()})
	}
	b.WriteString(sql[last:])
	return b.String(), func(off int) int {
		delta := 0
		for _, s := range shifts {
			if off >= s.at {
				delta = s.delta
			}
		}
		return off + delta
	}
}
