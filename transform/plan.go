package transform

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Item is one DynamoDB item with where it came from.
type Item struct {
	Entity    string
	Table     string // source table, schema-qualified
	SourceKey string // e.g. "order_id=981, book_id=17"
	Attrs     map[string]types.AttributeValue
}

// RowError is a source row that cannot become an entity's item: it names
// the entity, the source table, the row's key and the column at fault.
// A row with several problems names them all: Problems lists each with its
// column, Column is the first one's, and Err says all of them.
type RowError struct {
	Entity, Table, Key, Column string
	Err                        error
	Problems                   []Problem
}

// Problem is one reason a row cannot become an item.
type Problem struct {
	Column string // "" when no one column is at fault
	Err    error
}

// String renders p as "column C: error", or the error alone.
func (p Problem) String() string {
	if p.Column == "" {
		return p.Err.Error()
	}
	return "column " + p.Column + ": " + p.Err.Error()
}

// Error names the entity, table, row and column, then the cause.
func (e *RowError) Error() string {
	if len(e.Problems) > 1 {
		return fmt.Sprintf("entity %s, table %s, row %s: %d problems: %v", e.Entity, e.Table, e.Key, len(e.Problems), e.Err)
	}
	col := ""
	if e.Column != "" {
		col = " column " + e.Column
	}
	return fmt.Sprintf("entity %s, table %s, row %s%s: %v", e.Entity, e.Table, e.Key, col, e.Err)
}

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }

// Reason says what is wrong with the row without naming the row: each
// problem with its column ("column ratio: attribute ratio: NaN ...; column
// ..."), for a report line that names the row itself.
func (e *RowError) Reason() string {
	if len(e.Problems) > 1 {
		return e.Err.Error()
	}
	return Problem{Column: e.Column, Err: e.Err}.String()
}

// problems is the error of a row with several problems: each with its
// column, separated by "; ".
type problems []Problem

func (ps problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.String()
	}
	return strings.Join(msgs, "; ")
}

func (ps problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p.Err
	}
	return errs
}

// Plan is a compiled mapping: one Source per source table.
type Plan struct {
	Mapping *mapping.Mapping
	Sources []*Source
}

// Source is everything read from one table and every entity built from it.
// Several entities may read the same table (an entity item and an edge
// item from one row); the table is then read once.
type Source struct {
	Name     string // schema.table
	Query    extract.Query
	Entities []*entityPlan
	keyIdx   []int // positions of the order-by columns in the row
	// joinOf and embedOf name the entity each of Query's joins and embeds
	// is for.
	joinOf, embedOf []string

	fixups []fixup
}

// A column's position in the row is known only when every entity has
// added its columns, so plans hold slots that finalize fills.
type fixup struct {
	rel  int // -1 base table, else join index
	name string
	dst  *int
}

type entityPlan struct {
	m         *mapping.Mapping
	e         *mapping.Entity
	pk, sk    keyPlan
	where     cond // nil: every row
	indexes   []*indexPlan
	attrs     []*attrPlan
	intos     [][]string // map attributes of copies with into, parents first
	embeds    []*embedPlan
	tableName string
	// entityName is the value of the entity attribute, shared by the
	// entity's items.
	entityName types.AttributeValue
}

type keyPlan struct {
	t    *mapping.Template
	typ  mapping.KeyType
	cols []int // per template part: row position; -1 literal; -2 shard
	// plain is a string key whose placeholders have no value functions:
	// apply renders it into the item's buffer of key texts (appendKey).
	plain bool
	// constant is the value of a plain template without placeholders,
	// shared by every item: attribute values are never modified once
	// built.
	constant types.AttributeValue
}

type indexPlan struct {
	name           string
	pkAttr, skAttr string
	pk, sk         keyPlan // pk.t is nil for a local index
	where          cond
	emptyAbsent    bool
	shard          *mapping.Shard
	shardCount     int
	shardBy        int // row position of the shard column; -1 = row key
}

type attrPlan struct {
	col  int
	a    mapping.Attribute
	into []string // the map attribute (path) a copy with into puts it in
}

type embedPlan struct {
	em    *mapping.Embed
	pos   int // row position of the embed value
	cols  []mapping.Column
	byIdx int
	attrs []*attrPlan // col = index into cols
}

// Compile joins a mapping with the source catalog. The mapping must have
// passed mapping.Check against the same catalog.
func Compile(m *mapping.Mapping, cat *mapping.Catalog) (*Plan, error) {
	p := &Plan{Mapping: m}
	byTable := map[string]*Source{}
	for _, e := range m.Entities {
		t := cat.Lookup(e.Schema, e.From)
		if t == nil {
			return nil, fmt.Errorf("transform: table %s.%s is not in the catalog", e.Schema, e.From)
		}
		name := t.Schema + "." + t.Name
		src := byTable[name]
		if src == nil {
			order := t.OrderKey()
			if order == nil {
				return nil, fmt.Errorf("transform: table %s has no primary or NOT NULL unique key to read it in order", name)
			}
			src = &Source{Name: name, Query: extract.Query{Schema: t.Schema, Table: t.Name, OrderBy: order}}
			byTable[name] = src
			p.Sources = append(p.Sources, src)
			src.keyIdx = make([]int, len(order))
			for i, k := range order {
				src.slot(t, -1, k, &src.keyIdx[i])
			}
		}
		ep, err := src.compileEntity(m, e, t, cat)
		if err != nil {
			return nil, err
		}
		src.Entities = append(src.Entities, ep)
	}
	for _, src := range p.Sources {
		src.finalize()
	}
	return p, nil
}

func (s *Source) compileEntity(m *mapping.Mapping, e *mapping.Entity, t *mapping.Table, cat *mapping.Catalog) (*entityPlan, error) {
	ep := &entityPlan{m: m, e: e, tableName: s.Name, entityName: &types.AttributeValueMemberS{Value: e.Name}}
	// Copies first: templates and where clauses may use their columns.
	rels := map[*mapping.Copy]int{}
	if err := s.compileCopies(ep, e.Copies, -1, nil, cat, rels); err != nil {
		return nil, err
	}
	res := &resolver{s: s, e: e, t: t, cat: cat, rels: rels}
	var err error
	if ep.pk, err = s.keyPlan(res, e.PK, m.PartitionKeyType, false); err != nil {
		return nil, err
	}
	if ep.sk, err = s.keyPlan(res, e.SK, m.SortKeyType, false); err != nil {
		return nil, err
	}
	cc := &condCompiler{resolve: res.position}
	if ep.where, err = cc.compile(e.Where); err != nil {
		return nil, fmt.Errorf("transform: entity %s where: %w", e.Name, err)
	}
	for _, ei := range e.Indexes {
		var ix *mapping.Index
		for _, cand := range m.Indexes {
			if cand.Name == ei.Index {
				ix = cand
			}
		}
		if ix == nil {
			return nil, fmt.Errorf("transform: entity %s uses undeclared index %s", e.Name, ei.Index)
		}
		ip := &indexPlan{name: ix.Name, pkAttr: ix.PartitionKey, skAttr: ix.SortKey, shard: ei.Shard, shardBy: -1, emptyAbsent: ei.EmptyAbsent}
		if ix.Local {
			ip.pkAttr = "" // the table's partition key, already written
		}
		if ip.pk, err = s.keyPlan(res, ei.PK, ix.PartitionKeyType, ei.Shard != nil); err != nil {
			return nil, err
		}
		if ip.sk, err = s.keyPlan(res, ei.SK, ix.SortKeyType, ei.Shard != nil); err != nil {
			return nil, err
		}
		if ip.where, err = cc.compile(ei.Where); err != nil {
			return nil, fmt.Errorf("transform: entity %s index %s where: %w", e.Name, ei.Index, err)
		}
		if ei.Shard != nil {
			ip.shardCount = ei.Shard.Count
			if ei.Shard.By != "" {
				s.slot(t, -1, ei.Shard.By, &ip.shardBy)
			}
		}
		ep.indexes = append(ep.indexes, ip)
	}
	explicit := map[string]bool{}
	for _, a := range e.Attributes {
		explicit[a.Name] = true
	}
	var own []*attrPlan
	if e.AllColumns {
		excluded := map[string]bool{}
		for _, x := range e.Exclude {
			excluded[x.Name] = true
		}
		for _, c := range t.Columns {
			if !excluded[c.Name] && !explicit[c.Name] {
				own = append(own, &attrPlan{a: mapping.Attribute{Name: c.Name, Column: c.Name, Null: mapping.NullOmit}})
			}
		}
	}
	for _, a := range e.Attributes {
		own = append(own, &attrPlan{a: *a})
	}
	for _, ap := range own {
		if t.Column(ap.a.Column) == nil {
			return nil, fmt.Errorf("transform: column %s.%s is not in the catalog", s.Name, ap.a.Column)
		}
		s.slot(t, -1, ap.a.Column, &ap.col)
	}
	// Own attributes first, as before copies existed in this order.
	ep.attrs = append(own, ep.attrs...)
	for _, em := range e.Embeds {
		s.embedOf = append(s.embedOf, e.Name)
		emp, err := s.compileEmbed(em, cat)
		if err != nil {
			return nil, err
		}
		ep.embeds = append(ep.embeds, emp)
	}
	return ep, nil
}

// resolver finds the row position of a column reference of an entity: its
// own table's column, or a copied parent's through the copy's join.
type resolver struct {
	s    *Source
	e    *mapping.Entity
	t    *mapping.Table
	cat  *mapping.Catalog
	rels map[*mapping.Copy]int
}

// table returns the relation (-1 own table, else join index) and table a
// path leads to.
func (r *resolver) table(path []string) (int, *mapping.Table, error) {
	rel, t, level := -1, r.t, r.e.Copies
	for _, seg := range path {
		var found *mapping.Copy
		for _, c := range level {
			if c.Name() == seg {
				found = c
			}
		}
		if found == nil {
			return 0, nil, fmt.Errorf("transform: entity %s has no copy %q", r.e.Name, seg)
		}
		rel, level = r.rels[found], found.Copies
		if t = r.cat.Lookup(found.Schema, found.From); t == nil {
			return 0, nil, fmt.Errorf("transform: table %s.%s is not in the catalog", found.Schema, found.From)
		}
	}
	return rel, t, nil
}

// slot registers dst for a column reference.
func (r *resolver) slot(path []string, column string, dst *int) (pgkind.Kind, error) {
	rel, t, err := r.table(path)
	if err != nil {
		return 0, err
	}
	c := t.Column(column)
	if c == nil {
		return 0, fmt.Errorf("transform: column %s of %s.%s is not in the catalog", column, t.Schema, t.Name)
	}
	r.s.slot(t, rel, column, dst)
	return c.Type.Kind, nil
}

// position is slot for where clauses, which are compiled into closures:
// they read the position through the pointer finalize fills.
func (r *resolver) position(path []string, column string) (*int, pgkind.Kind, error) {
	pos := new(int)
	k, err := r.slot(path, column, pos)
	return pos, k, err
}

// compileCopies adds one LEFT JOIN per copy hop; rel is the relation the
// hop joins from (-1 for the entity's own table), into the map path its
// attributes go in.
func (s *Source) compileCopies(ep *entityPlan, copies []*mapping.Copy, rel int, into []string, cat *mapping.Catalog, rels map[*mapping.Copy]int) error {
	for _, cp := range copies {
		parent := cat.Lookup(cp.Schema, cp.From)
		if parent == nil {
			return fmt.Errorf("transform: table %s.%s is not in the catalog", cp.Schema, cp.From)
		}
		j := extract.Join{Schema: parent.Schema, Table: parent.Name}
		for _, jp := range cp.Join {
			j.On = append(j.On, extract.JoinOn{Column: jp.Column, Ref: rel, RefColumn: jp.Other})
		}
		s.Query.Joins = append(s.Query.Joins, j)
		s.joinOf = append(s.joinOf, ep.e.Name)
		idx := len(s.Query.Joins) - 1
		rels[cp] = idx
		path := into
		if cp.Into != "" {
			path = append(append([]string(nil), into...), cp.Into)
			ep.intos = append(ep.intos, path)
		}
		for _, a := range cp.Attributes {
			ap := &attrPlan{a: *a, into: path}
			ep.attrs = append(ep.attrs, ap)
			s.slot(parent, idx, a.Column, &ap.col)
		}
		if err := s.compileCopies(ep, cp.Copies, idx, path, cat, rels); err != nil {
			return err
		}
	}
	return nil
}

func (s *Source) compileEmbed(em *mapping.Embed, cat *mapping.Catalog) (*embedPlan, error) {
	child := cat.Lookup(em.Schema, em.From)
	if child == nil {
		return nil, fmt.Errorf("transform: table %s.%s is not in the catalog", em.Schema, em.From)
	}
	emp := &embedPlan{em: em, byIdx: -1}
	colIdx := func(name string) int {
		for i, c := range emp.cols {
			if c.Name == name {
				return i
			}
		}
		emp.cols = append(emp.cols, *child.Column(name))
		return len(emp.cols) - 1
	}
	explicit := map[string]bool{}
	for _, a := range em.Attributes {
		explicit[a.Name] = true
	}
	if em.AllColumns {
		excluded := map[string]bool{}
		for _, x := range em.Exclude {
			excluded[x.Name] = true
		}
		for _, c := range child.Columns {
			if !excluded[c.Name] && !explicit[c.Name] {
				emp.attrs = append(emp.attrs, &attrPlan{col: colIdx(c.Name), a: mapping.Attribute{Name: c.Name, Column: c.Name, Null: mapping.NullOmit}})
			}
		}
	}
	for _, a := range em.Attributes {
		if child.Column(a.Column) == nil {
			return nil, fmt.Errorf("transform: column %s.%s is not in the catalog", em.From, a.Column)
		}
		emp.attrs = append(emp.attrs, &attrPlan{col: colIdx(a.Column), a: *a})
	}
	if em.By.Name != "" {
		emp.byIdx = colIdx(em.By.Name)
	}
	e := extract.Embed{Schema: child.Schema, Table: child.Name, Columns: emp.cols, Limit: em.Max + 1}
	for _, jp := range em.Join {
		e.On = append(e.On, extract.JoinOn{Column: jp.Column, Ref: -1, RefColumn: jp.Other})
	}
	for _, o := range em.Order {
		e.OrderBy = append(e.OrderBy, o.Name)
	}
	if len(e.OrderBy) == 0 {
		e.OrderBy = child.OrderKey()
	}
	s.Query.Embeds = append(s.Query.Embeds, e)
	idx := len(s.Query.Embeds) - 1
	s.fixups = append(s.fixups, fixup{rel: -2 - idx, dst: &emp.pos})
	return emp, nil
}

// slot registers dst to receive the row position of column name of
// relation rel, adding the column to the query.
func (s *Source) slot(t *mapping.Table, rel int, name string, dst *int) {
	cols := &s.Query.Columns
	if rel >= 0 {
		cols = &s.Query.Joins[rel].Columns
	}
	found := false
	for _, c := range *cols {
		if c.Name == name {
			found = true
		}
	}
	if !found {
		*cols = append(*cols, *t.Column(name))
	}
	s.fixups = append(s.fixups, fixup{rel: rel, name: name, dst: dst})
}

// finalize fills every registered slot with the row position.
func (s *Source) finalize() {
	offsets := make([]int, len(s.Query.Joins))
	off := len(s.Query.Columns)
	for i, j := range s.Query.Joins {
		offsets[i] = off
		off += len(j.Columns)
	}
	for _, f := range s.fixups {
		switch {
		case f.rel <= -2: // embed -2-i
			*f.dst = off + (-2 - f.rel)
		case f.rel == -1:
			*f.dst = indexOf(s.Query.Columns, f.name)
		default:
			*f.dst = offsets[f.rel] + indexOf(s.Query.Joins[f.rel].Columns, f.name)
		}
	}
	s.fixups = nil
}

func indexOf(cols []mapping.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func (s *Source) keyPlan(r *resolver, tpl *mapping.Template, typ mapping.KeyType, shard bool) (keyPlan, error) {
	kp := keyPlan{t: tpl, typ: typ}
	if tpl == nil {
		return kp, nil
	}
	kp.plain = typ != mapping.KeyNumber && typ != mapping.KeyBinary
	for _, part := range tpl.Parts {
		kp.plain = kp.plain && len(part.Funcs) == 0
	}
	if kp.plain && tpl.Constant() {
		kp.constant = &types.AttributeValueMemberS{Value: tpl.Prefix()}
	}
	kp.cols = make([]int, len(tpl.Parts))
	for i, part := range tpl.Parts {
		switch {
		case part.Column == "":
			kp.cols[i] = -1
		case shard && part.Column == mapping.ShardPlaceholder && len(part.Path) == 0:
			kp.cols[i] = -2
		default:
			if _, err := r.slot(part.Path, part.Column, &kp.cols[i]); err != nil {
				return kp, fmt.Errorf("transform: template %q: %w", tpl.Raw, err)
			}
		}
	}
	return kp, nil
}

// column returns the catalog column at a row position.
func (s *Source) column(pos int) mapping.Column {
	if pos < len(s.Query.Columns) {
		return s.Query.Columns[pos]
	}
	pos -= len(s.Query.Columns)
	for _, j := range s.Query.Joins {
		if pos < len(j.Columns) {
			return j.Columns[pos]
		}
		pos -= len(j.Columns)
	}
	return mapping.Column{}
}

// Position returns the values of the row's order-by key, for checkpoints.
func (s *Source) Position(row extract.Row) []any {
	pos := make([]any, len(s.keyIdx))
	for i, idx := range s.keyIdx {
		pos[i] = row.Values[idx]
	}
	return pos
}

// SourceKey formats the row's key as "col=value, col=value".
func (s *Source) SourceKey(row extract.Row) string {
	var b []byte
	for i, idx := range s.keyIdx {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s.Query.Columns[idx].Name...)
		b = append(b, '=')
		switch v := row.Values[idx].(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case string:
			b = append(b, v...)
		case extract.Decimal:
			b = append(b, v...)
		default:
			b = fmt.Append(b, v)
		}
	}
	return string(b)
}

// HasEntity reports whether the source builds the named entity.
func (s *Source) HasEntity(name string) bool {
	for _, ep := range s.Entities {
		if ep.e.Name == name {
			return true
		}
	}
	return false
}

// ShardSetting names an index of an entity whose shard count is "auto".
type ShardSetting struct {
	Entity, Index string
	ReadRate      int64
}

// AutoShards lists the shard counts that must be computed (SetShardCount)
// before Apply.
func (p *Plan) AutoShards() []ShardSetting {
	var out []ShardSetting
	for _, s := range p.Sources {
		for _, ep := range s.Entities {
			for _, ip := range ep.indexes {
				if ip.shard != nil && ip.shard.Count == 0 {
					out = append(out, ShardSetting{Entity: ep.e.Name, Index: ip.name, ReadRate: ip.shard.ReadRate})
				}
			}
		}
	}
	return out
}

// SetShardCount sets an "auto" shard count once it is computed.
func (p *Plan) SetShardCount(entity, index string, n int) {
	for _, s := range p.Sources {
		for _, ep := range s.Entities {
			for _, ip := range ep.indexes {
				if ep.e.Name == entity && ip.name == index {
					ip.shardCount = n
				}
			}
		}
	}
}

// Apply builds the items of every entity reading this source from one row.
// Entities whose item cannot be built report a RowError; the others still
// produce their items.
func (s *Source) Apply(row extract.Row) ([]Item, []*RowError) {
	items, errs := s.Build(row)
	if len(items) > 0 {
		key := s.SourceKey(row)
		for i := range items {
			items[i].SourceKey = key
		}
	}
	return items, errs
}

// Build is Apply without the items' SourceKey, which is a formatted string
// per row that most rows never need: a caller that reports an item's
// origin calls SourceKey when it does. Row errors carry their key.
func (s *Source) Build(row extract.Row) ([]Item, []*RowError) {
	items := make([]Item, 0, len(s.Entities))
	var errs []*RowError
	key := &rowKey{src: s, row: row}
	for _, ep := range s.Entities {
		if ep.where != nil && ep.where(row) != tTrue {
			continue // the entity holds only rows its where clause accepts
		}
		it, err := ep.apply(s, row, key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, it)
	}
	return items, errs
}

// rowKey is a row's SourceKey, formatted the first time it is needed.
type rowKey struct {
	src  *Source
	row  extract.Row
	text string
	done bool
}

func (k *rowKey) String() string {
	if !k.done {
		k.text, k.done = k.src.SourceKey(k.row), true
	}
	return k.text
}

// rowErr is the RowError of a row with one problem.
func (ep *entityPlan) rowErr(key *rowKey, col string, err error) *RowError {
	return ep.rowErrs(key, []Problem{{Column: col, Err: err}})
}

// rowErrs is the RowError of a row with the given problems (at least one).
func (ep *entityPlan) rowErrs(key *rowKey, ps []Problem) *RowError {
	e := &RowError{Entity: ep.e.Name, Table: ep.tableName, Key: key.String(), Column: ps[0].Column, Err: ps[0].Err, Problems: ps}
	if len(ps) > 1 {
		e.Err = problems(ps)
	}
	return e
}

// shardOf picks the shard for a row: a stable hash, so that every run and
// every verification puts the item in the same shard.
func shardOf(text string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(text))
	return strconv.FormatUint(h.Sum64()%uint64(n), 10)
}

func (ep *entityPlan) apply(s *Source, row extract.Row, key *rowKey) (Item, *RowError) {
	m := ep.m
	attrs := make(map[string]types.AttributeValue, len(ep.attrs)+6)
	al := &avAlloc{
		s: make([]types.AttributeValueMemberS, 0, 2+2*len(ep.indexes)+len(ep.attrs)),
		n: make([]types.AttributeValueMemberN, 0, len(ep.attrs)),
	}
	// Every problem of the row is collected, so that its reject line names
	// them all and one fix of the source is enough.
	var probs []Problem
	problem := func(col string, err error) { probs = append(probs, Problem{Column: col, Err: err}) }
	// The item's string key texts go into one buffer (on the stack unless
	// long) and become one string; each such key attribute is a part of
	// it. Constant keys and keys built otherwise (N, B, value functions)
	// come with their value.
	var scratch [256]byte
	b := scratch[:0]
	type keySpan struct {
		attr       string
		start, end int
		av         types.AttributeValue
	}
	var spanBuf [8]keySpan
	spans := spanBuf[:0]
	// render writes one key attribute; false when it cannot: a problem, or
	// an index key that cannot be built from a NULL (or, with empty:
	// absent, empty) input.
	render := func(kp keyPlan, attr string, ip *indexPlan) bool {
		if kp.t == nil {
			return true
		}
		if kp.constant != nil {
			spans = append(spans, keySpan{attr: attr, av: kp.constant})
			return true
		}
		if kp.plain {
			start := len(b)
			var ok bool
			var err *RowError
			b, ok, err = ep.appendKey(b, s, row, key, kp, attr, ip)
			if err != nil {
				probs = append(probs, err.Problems...)
			}
			if ok {
				spans = append(spans, keySpan{attr: attr, start: start, end: len(b)})
			}
			return ok
		}
		av, ok, err := ep.renderKey(s, row, key, kp, attr, ip)
		if err != nil {
			probs = append(probs, err.Problems...)
		}
		if ok {
			spans = append(spans, keySpan{attr: attr, av: av})
		}
		return ok
	}
	render(ep.pk, m.PartitionKey, nil)
	render(ep.sk, m.SortKey, nil)
	for _, ip := range ep.indexes {
		// An index key with a NULL input, or a row its where clause does
		// not accept, leaves the item out of the index: both index
		// attributes are omitted together (a sparse index).
		if ip.where != nil && ip.where(row) != tTrue {
			continue
		}
		if !render(ip.pk, ip.pkAttr, ip) {
			continue
		}
		if !render(ip.sk, ip.skAttr, ip) && ip.pkAttr != "" && ip.pk.t != nil {
			pk := spans[len(spans)-1] // the index's partition key, just rendered
			spans = spans[:len(spans)-1]
			if pk.av == nil {
				b = b[:pk.start]
			}
		}
	}
	text := string(b)
	for _, sp := range spans {
		if sp.av != nil {
			attrs[sp.attr] = sp.av
			continue
		}
		attrs[sp.attr] = al.S(text[sp.start:sp.end])
	}
	attrs[m.EntityAttribute] = ep.entityName
	var nested map[string]map[string]types.AttributeValue // by into path
	for _, ap := range ep.attrs {
		c := s.column(ap.col)
		av, ok, err := attributeValue(row.Values[ap.col], c.Type, ap.a.As, ap.a.Null, al)
		if err == nil && ok {
			// In the item, and in each map a copy with into makes.
			err = checkNesting(av, 1+len(ap.into))
		}
		if err != nil {
			problem(c.Name, fmt.Errorf("attribute %s: %w", ap.a.Name, err))
			continue
		}
		if !ok {
			continue
		}
		if len(ap.into) == 0 {
			attrs[ap.a.Name] = av
			continue
		}
		if nested == nil {
			nested = map[string]map[string]types.AttributeValue{}
		}
		p := strings.Join(ap.into, "\x00")
		if nested[p] == nil {
			nested[p] = map[string]types.AttributeValue{}
		}
		nested[p][ap.a.Name] = av
	}
	// Copies with into become maps, innermost first so that a parent map
	// sees its children; a map left empty (no parent row) is omitted.
	for i := len(ep.intos) - 1; i >= 0 && nested != nil; i-- {
		path := ep.intos[i]
		inner := nested[strings.Join(path, "\x00")]
		if len(inner) == 0 {
			continue
		}
		dst := attrs
		if len(path) > 1 {
			pp := strings.Join(path[:len(path)-1], "\x00")
			if nested[pp] == nil {
				nested[pp] = map[string]types.AttributeValue{}
			}
			dst = nested[pp]
		}
		dst[path[len(path)-1]] = &types.AttributeValueMemberM{Value: inner}
	}
	for _, emp := range ep.embeds {
		av, col, err := emp.build(row.Values[emp.pos], al)
		if err != nil {
			problem(col, fmt.Errorf("embed %s: %w", emp.em.Attribute, err))
			continue
		}
		attrs[emp.em.Attribute] = av
	}
	if len(probs) > 0 {
		return Item{}, ep.rowErrs(key, probs)
	}
	return Item{Entity: ep.e.Name, Table: ep.tableName, Attrs: attrs}, nil
}

// appendKey is renderKey for the common key, a string whose placeholders
// have no value functions: its text goes straight into dst, the buffer
// of the item's key texts (dst comes back as it was when the key cannot
// be built). The outcomes and messages are renderKey's.
func (ep *entityPlan) appendKey(dst []byte, s *Source, row extract.Row, key *rowKey, kp keyPlan, attr string, ip *indexPlan) ([]byte, bool, *RowError) {
	start := len(dst)
	fail := func(col string, err error) ([]byte, bool, *RowError) {
		return dst[:start], false, ep.rowErr(key, col, fmt.Errorf("%s %q: %w", attr, kp.t.Raw, err))
	}
	emptyAbsent := ip != nil && ip.emptyAbsent
	for i, part := range kp.t.Parts {
		switch kp.cols[i] {
		case -1:
			dst = append(dst, part.Literal...)
			continue
		case -2:
			if ip.shardCount < 1 {
				return fail("", fmt.Errorf("index %s: shard count is not computed", ip.name))
			}
			var in string
			if ip.shardBy < 0 {
				in = key.String()
			} else {
				c := s.column(ip.shardBy)
				txt, err := KeyText(row.Values[ip.shardBy], c.Type.Kind, 0, "")
				if errors.Is(err, errNull) {
					return dst[:start], false, nil // no shard input: stays out of the index
				}
				if err != nil {
					return dst[:start], false, ep.rowErr(key, c.Name, fmt.Errorf("shard of %s: %w", ip.name, err))
				}
				in = txt
			}
			dst = append(dst, shardOf(in, ip.shardCount)...)
			continue
		}
		c := s.column(kp.cols[i])
		var err error
		dst, err = AppendKeyText(dst, row.Values[kp.cols[i]], c.Type.Kind, part.Width, ep.m.Separator)
		switch {
		case err == nil:
		case errors.Is(err, errNull) || emptyAbsent && errors.Is(err, errEmpty):
			if ip == nil {
				// A table key cannot be left out: NULL is a row error.
				return fail(nullColumn(kp, row), errNull)
			}
			return dst[:start], false, nil
		default:
			return fail(part.Column, err)
		}
	}
	return dst, true, nil
}

// renderKey renders one key template for a row: false, without an error,
// when an index key cannot be built from a NULL (or, with empty: absent,
// empty) input. ip is the index the key belongs to, nil for the table's
// own key.
func (ep *entityPlan) renderKey(s *Source, row extract.Row, key *rowKey, kp keyPlan, attr string, ip *indexPlan) (types.AttributeValue, bool, *RowError) {
	var shardErr *RowError
	values := func(i int) (KeyValue, error) {
		if kp.cols[i] != -2 {
			c := s.column(kp.cols[i])
			return KeyValue{V: row.Values[kp.cols[i]], Kind: c.Type.Kind}, nil
		}
		if ip.shardCount < 1 {
			return KeyValue{}, fmt.Errorf("index %s: shard count is not computed", ip.name)
		}
		var in string
		if ip.shardBy < 0 {
			in = key.String()
		} else {
			c := s.column(ip.shardBy)
			txt, err := KeyText(row.Values[ip.shardBy], c.Type.Kind, 0, "")
			if errors.Is(err, errNull) {
				return KeyValue{}, err // no shard input: stays out of the index
			}
			if err != nil {
				shardErr = ep.rowErr(key, c.Name, fmt.Errorf("shard of %s: %w", ip.name, err))
				return KeyValue{}, err
			}
			in = txt
		}
		return KeyValue{V: shardOf(in, ip.shardCount), Kind: pgkind.Text}, nil
	}
	emptyAbsent := ip != nil && ip.emptyAbsent
	av, present, col, err := RenderKey(kp.t, kp.typ, ep.m.Separator, emptyAbsent, values)
	switch {
	case shardErr != nil:
		return nil, false, shardErr
	case ip != nil && errors.Is(err, errNull):
		return nil, false, nil
	case err != nil:
		if col == mapping.ShardPlaceholder {
			col = ""
		}
		return nil, false, ep.rowErr(key, col, fmt.Errorf("%s %q: %w", attr, kp.t.Raw, err))
	case !present:
		if ip == nil {
			// A table key cannot be left out: NULL is a row error.
			return nil, false, ep.rowErr(key, nullColumn(kp, row), fmt.Errorf("%s %q: %w", attr, kp.t.Raw, errNull))
		}
		return nil, false, nil
	}
	return av, true, nil
}

// nullColumn is the first placeholder column of kp that is NULL in row.
func nullColumn(kp keyPlan, row extract.Row) string {
	for i, part := range kp.t.Parts {
		if kp.cols[i] >= 0 && row.Values[kp.cols[i]] == nil {
			return part.Column
		}
	}
	return ""
}

// build turns the child rows into a map or list attribute. More children
// than max is an error: the data would be truncated otherwise.
func (emp *embedPlan) build(v any, al *avAlloc) (types.AttributeValue, string, error) {
	children, _ := v.([]extract.Row)
	if len(children) > emp.em.Max {
		return nil, "", fmt.Errorf("more than %d rows in %s (max %d): raise max or model the children as their own items", emp.em.Max, emp.em.From, emp.em.Max)
	}
	entries := make([]map[string]types.AttributeValue, len(children))
	for i, ch := range children {
		m := make(map[string]types.AttributeValue, len(emp.attrs))
		for _, ap := range emp.attrs {
			c := emp.cols[ap.col]
			av, ok, err := attributeValue(ch.Values[ap.col], c.Type, ap.a.As, ap.a.Null, al)
			if err == nil && ok {
				err = checkNesting(av, 3) // in the child's map, in the embed's list or map
			}
			if err != nil {
				return nil, c.Name, fmt.Errorf("child %d: %w", i+1, err)
			}
			if ok {
				m[ap.a.Name] = av
			}
		}
		entries[i] = m
	}
	if emp.em.As == "list" {
		l := make([]types.AttributeValue, len(entries))
		for i, m := range entries {
			l[i] = &types.AttributeValueMemberM{Value: m}
		}
		return &types.AttributeValueMemberL{Value: l}, "", nil
	}
	out := make(map[string]types.AttributeValue, len(entries))
	by := emp.cols[emp.byIdx]
	for i, ch := range children {
		k, err := KeyText(ch.Values[emp.byIdx], by.Type.Kind, 0, "")
		if err != nil {
			return nil, by.Name, fmt.Errorf("child %d: map key: %w", i+1, err)
		}
		if _, dup := out[k]; dup {
			return nil, by.Name, fmt.Errorf("two rows of %s have map key %q", emp.em.From, k)
		}
		out[k] = &types.AttributeValueMemberM{Value: entries[i]}
	}
	return &types.AttributeValueMemberM{Value: out}, "", nil
}
