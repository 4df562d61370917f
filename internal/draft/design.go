package draft

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/jinzhu/inflection"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Limits and defaults of a draft.
const (
	// DefaultEmbedMax is the most children per parent, observed in the
	// data, for which an embed is offered.
	DefaultEmbedMax = 20
	// maxIndexes is DynamoDB's default quota of GSIs per table.
	maxIndexes = 20
	// maxEmbed is the largest max the mapping language accepts.
	maxEmbed = 100000
)

// Key attribute names of the drafted table and its indexes.
const (
	partitionKey    = "PK"
	sortKey         = "SK"
	entityAttribute = "_type"
	separator       = mapping.DefaultSeparator
)

func indexName(n int) string { return fmt.Sprintf("GSI%d", n) }

// entity is one table's entity in the design.
type entity struct {
	name, prefix string
	table        *mapping.Table
	key          []string // the columns that identify a row: its primary key

	// Exactly one of parent and edge may be set: a child in its parent's
	// item collection (rule 3), or an edge of an adjacency list (rule 6).
	// Otherwise the entity heads its own partition.
	parent   *entity
	parentFK *ForeignKey
	edge     *[2]side
	children []*entity // entities sharing this one's partition

	pk, sk   string
	indexes  []indexUse
	offers   []offer
	patterns []*accessPattern  // what its key and index entries answer
	renamed  map[string]string // column → attribute, for columns whose name is reserved
}

// side is one end of an adjacency list: the foreign key to it and the key
// prefix of its values.
type side struct {
	fk     *ForeignKey
	ref    *entity
	prefix string
}

// indexUse is an entity's key in one GSI.
type indexUse struct {
	slot    int // the index is GSI<slot>
	pk, sk  string
	comment string
	// pattern is the access pattern the entry serves; its slot is set
	// once the entry has one.
	pattern *accessPattern
}

// offer is an embed offered to a parent (rule 1): the children of one
// foreign key as a map or list attribute.
type offer struct {
	attr     string
	child    *entity
	fk       *ForeignKey
	as, by   string
	observed int64
	max      int64
}

// design is the whole draft before it is written.
type design struct {
	src      *Source
	opt      Options
	entities []*entity
	byTable  map[string]*entity
	skipped  []string // "table: reason"
	nIndexes int
	dropped  []string // index uses beyond maxIndexes
}

func newDesign(src *Source, opt Options) *design {
	d := &design{src: src, opt: opt, byTable: map[string]*entity{}}
	d.addEntities()
	d.findEdges()
	d.findCollections()
	d.order()
	d.assignKeys()
	d.assignIndexes()
	d.offerEmbeds()
	d.reserveNames()
	d.buildPatterns()
	return d
}

func (d *design) addEntities() {
	names, prefixes := map[string]bool{}, map[string]bool{}
	for _, name := range d.src.Tables {
		t := d.src.Catalog.Lookup(d.src.Schema, name)
		if t == nil {
			d.skipped = append(d.skipped, name+": not in the catalog")
			continue
		}
		key := t.OrderKey()
		if key == nil {
			d.skipped = append(d.skipped, name+": no primary key or NOT NULL unique key, so its rows cannot be told apart or read in a stable order; add one and run init again")
			continue
		}
		if bad := unkeyable(t, key); bad != "" {
			d.skipped = append(d.skipped, name+": "+bad)
			continue
		}
		e := &entity{name: entityName(name), table: t, key: key}
		for n := 2; names[e.name]; n++ {
			e.name = fmt.Sprintf("%s%d", entityName(name), n)
		}
		names[e.name] = true
		e.prefix = keyPrefix(e.name)
		for n := 2; prefixes[e.prefix]; n++ {
			e.prefix = fmt.Sprintf("%s%d", keyPrefix(e.name), n)
		}
		prefixes[e.prefix] = true
		d.entities = append(d.entities, e)
		d.byTable[name] = e
	}
}

// unkeyable says why columns cannot appear in a key template, or "".
func unkeyable(t *mapping.Table, cols []string) string {
	for _, name := range cols {
		c := t.Column(name)
		switch {
		case c == nil:
			return fmt.Sprintf("column %q is not in the catalog", name)
		case !placeholderSafe(name):
			return fmt.Sprintf("column %q has characters a key template cannot name", name)
		case !c.Type.Kind.KeyUsable():
			return fmt.Sprintf("key column %q has type %s, which has no sortable text form for a key", name, c.Type.Name)
		}
	}
	return ""
}

// foreignKeys lists the foreign keys from e's table to other entities.
func (d *design) foreignKeys(e *entity) []*ForeignKey {
	var out []*ForeignKey
	for i := range d.src.ForeignKeys {
		fk := &d.src.ForeignKeys[i]
		if fk.Table == e.table.Name && d.byTable[fk.RefTable] != nil {
			out = append(out, fk)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func (e *entity) notNull(cols []string) bool {
	for _, name := range cols {
		if c := e.table.Column(name); c == nil || !c.NotNull {
			return false
		}
	}
	return true
}

// findEdges marks pure join tables: a primary key made of the columns of
// two foreign keys (which may share some, such as a tenant id). They
// become adjacency lists (rule 6).
func (d *design) findEdges() {
	for _, e := range d.entities {
		fks := d.foreignKeys(e)
		var found *[2]side
		for i, a := range fks {
			for _, b := range fks[i+1:] {
				if found != nil || subset(a.Columns, b.Columns) || subset(b.Columns, a.Columns) ||
					!sameSet(union(a.Columns, b.Columns), e.key) {
					continue
				}
				// The side whose own columns come first in the key is the
				// partition: order_items (order_id, book_id) lives under
				// the order.
				first, second := a, b
				if firstIndex(e.key, minus(b.Columns, a.Columns)) < firstIndex(e.key, minus(a.Columns, b.Columns)) {
					first, second = b, a
				}
				found = &[2]side{{fk: first, ref: d.byTable[first.RefTable]}, {fk: second, ref: d.byTable[second.RefTable]}}
			}
		}
		if found != nil {
			for i := range found {
				found[i].prefix = d.refPrefix(e, found[i].fk)
			}
			e.edge = found
		}
	}
}

// firstIndex is the smallest position in key of any of cols.
func firstIndex(key, cols []string) int {
	best := len(key)
	for _, c := range cols {
		if i := slices.Index(key, c); i >= 0 {
			best = min(best, i)
		}
	}
	return best
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// refPrefix is the key prefix for values of a foreign key: the referenced
// entity's prefix, or one named after the columns that differ from the
// referenced ones, which say more (shipping_address_id → SHIPPING_ADDRESS,
// a self-reference manager_id → MANAGER). Two foreign keys to one table
// cannot both match the referenced names, so their prefixes differ.
func (d *design) refPrefix(e *entity, fk *ForeignKey) string {
	ref := d.byTable[fk.RefTable]
	var own []string
	for i, c := range fk.Columns {
		if c != fk.RefColumns[i] {
			own = append(own, c)
		}
	}
	if len(own) > 0 {
		if p := keyPrefix(strings.Join(own, "_")); p != "" {
			return p
		}
	}
	return ref.prefix
}

// findCollections puts children into their parent's partition (rule 3):
// each foreign key that is NOT NULL and references the parent's key is a
// candidate; identifying ones (part of the child's own key) come first,
// then parents with more candidate children. A partition is one level
// deep: a parent never is a child, so every key can be built from the
// row alone.
func (d *design) findCollections() {
	type candidate struct {
		child, parent *entity
		fk            *ForeignKey
		identifying   bool
	}
	var cands []candidate
	incoming := map[*entity]int{}
	for _, e := range d.entities {
		if e.edge != nil {
			continue
		}
		for _, fk := range d.foreignKeys(e) {
			p := d.byTable[fk.RefTable]
			if p == e || p.edge != nil || !e.notNull(fk.Columns) || !sameSet(fk.RefColumns, p.key) || unkeyable(e.table, fk.Columns) != "" {
				continue
			}
			cands = append(cands, candidate{e, p, fk, subset(fk.Columns, e.key)})
			incoming[p]++
		}
	}
	// More columns first: in a multi-tenant schema every table references
	// the tenant, and the more specific parent (a project, by tenant and
	// project id) makes the better collection.
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if n := len(b.fk.Columns) - len(a.fk.Columns); n != 0 {
			return n
		}
		if a.identifying != b.identifying {
			if a.identifying {
				return -1
			}
			return 1
		}
		return cmp.Or(incoming[b.parent]-incoming[a.parent], strings.Compare(a.child.name, b.child.name), strings.Compare(a.fk.Name, b.fk.Name))
	})
	for _, c := range cands {
		if c.child.parent != nil || len(c.child.children) > 0 || c.parent.parent != nil {
			continue
		}
		c.child.parent, c.child.parentFK = c.parent, c.fk
		c.parent.children = append(c.parent.children, c.child)
	}
}

// order lists each partition's head before its children, and adjacency
// lists last, so that the file reads partition by partition.
func (d *design) order() {
	var out []*entity
	for _, e := range d.entities {
		if e.parent == nil && e.edge == nil {
			out = append(out, e)
			out = append(out, e.children...)
		}
	}
	for _, e := range d.entities {
		if e.edge != nil {
			out = append(out, e)
		}
	}
	d.entities = out
}

// placeholders writes "{a}#{b}", padding integers when pad is set.
func placeholders(t *mapping.Table, cols []string, pad bool) string {
	return placeholdersNamed(t, cols, pad, identity)
}

// placeholdersNamed writes the placeholders of columns under other names
// (an access pattern's parameters), padded by the columns' types.
func placeholdersNamed(t *mapping.Table, cols []string, pad bool, name func(string) string) string {
	parts := make([]string, len(cols))
	for i, col := range cols {
		parts[i] = "{" + name(col) + "}"
		if c := t.Column(col); pad && c != nil && c.Type.Kind == pgkind.Int {
			parts[i] = fmt.Sprintf("{%s:%d}", name(col), intWidth(c.Type.Name))
		}
	}
	return strings.Join(parts, separator)
}

// intWidth is the number of digits the largest value of an integer type
// has, so that zero-padded sort keys order numerically and never overflow
// (a negative number is still a row error).
func intWidth(typeName string) int {
	switch {
	case strings.HasPrefix(typeName, "smallint"):
		return 5
	case strings.HasPrefix(typeName, "integer"):
		return 10
	}
	return 19
}

// mapped returns the child's columns that reference the parent's key,
// in the order of the parent's key.
func mapped(fk *ForeignKey, parentKey []string) []string {
	out := make([]string, len(parentKey))
	for i, pc := range parentKey {
		out[i] = fk.Columns[slices.Index(fk.RefColumns, pc)]
	}
	return out
}

func (d *design) assignKeys() {
	for _, e := range d.entities {
		switch {
		case e.edge != nil:
			a, b := e.edge[0], e.edge[1]
			acols := a.fk.Columns
			if sameSet(a.fk.RefColumns, a.ref.key) {
				acols = mapped(a.fk, a.ref.key)
			}
			e.pk = a.prefix + separator + placeholders(e.table, acols, false)
			e.sk = b.prefix + separator + placeholders(e.table, minus(b.fk.Columns, a.fk.Columns), true)
		case e.parent != nil:
			// The sort key holds what the partition key does not: with it,
			// they identify the row.
			pkCols := mapped(e.parentFK, e.parent.key)
			e.pk = e.parent.prefix + separator + placeholders(e.table, pkCols, false)
			e.sk = e.prefix
			if rest := minus(e.key, pkCols); len(rest) > 0 {
				e.sk += separator + placeholders(e.table, rest, true)
			}
		default:
			e.pk = e.prefix + separator + placeholders(e.table, e.key, false)
		}
	}
	// A partition's head gets its own name as sort key, or name# when a
	// child's prefix begins with that name (CUSTOMER, CUSTOMER_NOTE#...),
	// which validate would take for a possible collision.
	for _, e := range d.entities {
		if e.sk != "" {
			continue
		}
		e.sk = e.prefix
		for _, other := range d.entities {
			if other != e && strings.HasPrefix(other.pk, e.prefix+separator) && strings.HasPrefix(other.sk, e.prefix) {
				e.sk = e.prefix + separator
			}
		}
	}
}

// identity is an entity's key in an index sort key: its prefix and key.
func (e *entity) identity() string {
	return e.prefix + separator + placeholders(e.table, e.key, true)
}

func (d *design) assignIndexes() {
	for _, e := range d.entities {
		var uses []indexUse
		used := map[*ForeignKey]bool{e.parentFK: true}
		if e.parent != nil && !subset(mapped(e.parentFK, e.parent.key), e.key) {
			// The partition key is the parent's, and the parent's key is
			// not part of this entity's: without the parent's id a GetItem
			// cannot name the item. An entry under its own key in an
			// overloaded index reads it by its key alone.
			uses = append(uses, indexUse{
				pk: e.prefix + separator + placeholders(e.table, e.key, false),
				sk: e.prefix,
				comment: fmt.Sprintf("the item lives in its %s's partition, named by %s, which the key of %s does not hold; this entry in an overloaded index reads it by %s alone",
					e.parent.single(), strings.Join(mapped(e.parentFK, e.parent.key), ", "), article(e.single()), strings.Join(e.key, ", ")),
				pattern: d.byKeyPattern(e),
			})
		}
		if e.edge != nil {
			a, b := e.edge[0], e.edge[1]
			used[a.fk], used[b.fk] = true, true
			uses = append(uses, indexUse{
				pk:      b.prefix + separator + placeholders(e.table, b.fk.Columns, false),
				sk:      a.prefix + separator + placeholders(e.table, minus(a.fk.Columns, b.fk.Columns), true),
				comment: "rule 6: the inverted adjacency list",
				pattern: d.edgePattern(e, b, a),
			})
		}
		uniqueRefs := map[string]bool{}
		for _, fk := range d.foreignKeys(e) {
			if used[fk] || unkeyable(e.table, fk.Columns) != "" {
				continue
			}
			prefix := d.refPrefix(e, fk)
			what := fmt.Sprintf("the %s of %s", human(e.table.Name, false), article(human(prefix, false)))
			comment := "rule 4: by the foreign key " + fk.Name
			if !e.notNull(fk.Columns) {
				comment += "; sparse: rows without one stay out"
			}
			for _, u := range e.table.Unique {
				if sameSet(u, fk.Columns) {
					what = fmt.Sprintf("the %s of %s", human(e.table.Name, true), article(human(prefix, false)))
					uniqueRefs[strings.Join(u, ",")] = true
				}
			}
			uses = append(uses, indexUse{
				pk:      prefix + separator + placeholders(e.table, fk.Columns, false),
				sk:      e.identity(),
				comment: comment,
				pattern: d.foreignKeyPattern(e, fk, prefix, what),
			})
		}
		for _, u := range e.table.Unique {
			if sameSet(u, e.key) || subset(e.key, u) || uniqueRefs[strings.Join(u, ",")] || unkeyable(e.table, u) != "" {
				continue
			}
			prefix := e.prefix + "_" + keyPrefix(strings.Join(u, "_"))
			comment := "a lookup: unique key " + strings.Join(u, ", ")
			if !e.notNull(u) {
				comment += "; sparse: rows without one stay out"
			}
			uses = append(uses, indexUse{
				pk:      prefix + separator + placeholders(e.table, u, false),
				sk:      e.prefix,
				comment: comment,
				pattern: d.lookupPattern(e, u, prefix),
			})
		}
		e.indexes = d.allocate(e, uses)
	}
}

// allocate gives each of an entity's index entries the first GSI the
// entity does not use yet and where no other entity's entry could answer
// the entry's pattern (or the other way round): one GSI serves many
// entities (overloading), and the sort key conditions of the patterns keep
// them apart. Entries beyond DynamoDB's 20 GSIs are dropped and listed.
func (d *design) allocate(e *entity, uses []indexUse) []indexUse {
	var out []indexUse
	mine := map[int]bool{}
next:
	for _, u := range uses {
		for slot := 1; slot <= maxIndexes; slot++ {
			if mine[slot] || d.slotConflict(slot, u) {
				continue
			}
			u.slot = slot
			u.pattern.slot = slot
			mine[slot] = true
			d.nIndexes = max(d.nIndexes, slot)
			out = append(out, u)
			continue next
		}
		d.dropped = append(d.dropped, fmt.Sprintf("%s: %s (pk %q)", e.name, u.pattern.what, u.pk))
	}
	return out
}

// slotConflict reports whether another entity's entry in GSI<slot> could
// be read by u's pattern, or u's entry by another's.
func (d *design) slotConflict(slot int, u indexUse) bool {
	for _, o := range d.entities {
		for _, ou := range o.indexes {
			if ou.slot == slot && (u.pattern.reads(ou.pk, ou.sk) || ou.pattern.reads(u.pk, u.sk)) {
				return true
			}
		}
	}
	return false
}

// columnsPhrase names columns for people: [customer_id label] → "customer
// id and label".
func columnsPhrase(cols []string) string {
	ws := make([]string, len(cols))
	for i, c := range cols {
		ws[i] = strings.Join(words(c), " ")
	}
	return andList(ws)
}

// plural and singularOf name a side of an adjacency list for people: by
// its table, or by its own columns when they say more (friend, user).
func plural(s side) string {
	if s.prefix != s.ref.prefix {
		return pluralize(human(s.prefix, false))
	}
	return human(s.ref.table.Name, false)
}

func singularOf(s side) string {
	if s.prefix != s.ref.prefix {
		return human(s.prefix, false)
	}
	return human(s.ref.table.Name, true)
}

// pluralize makes an English noun phrase plural by its last word.
func pluralize(p string) string {
	i := strings.LastIndexByte(p, ' ') + 1
	return p[:i] + inflection.Plural(p[i:])
}

func (e *entity) single() string { return human(e.table.Name, true) }

// offerEmbeds offers each parent the children of a foreign key whose
// observed maximum per parent is small (rule 1), with max from the data.
func (d *design) offerEmbeds() {
	limit := cmp.Or(d.opt.EmbedMax, DefaultEmbedMax)
	for i := range d.src.ForeignKeys {
		fk := &d.src.ForeignKeys[i]
		child, parent := d.byTable[fk.Table], d.byTable[fk.RefTable]
		// An optional parent (a nullable foreign key) is a reference, not
		// ownership: its children are not offered.
		if !fk.Measured || child == nil || parent == nil || child == parent || child.edge != nil || !child.notNull(fk.Columns) ||
			fk.MaxChildren < 1 || fk.MaxChildren > limit {
			continue
		}
		o := offer{attr: lowerCamel(fk.Table), child: child, fk: fk, as: "list", observed: fk.MaxChildren, max: headroom(fk.MaxChildren)}
		for _, u := range child.table.Unique {
			if len(u) != len(fk.Columns)+1 || !subset(fk.Columns, u) {
				continue
			}
			for _, c := range u {
				if !slices.Contains(fk.Columns, c) && child.notNull([]string{c}) && unkeyable(child.table, []string{c}) == "" {
					o.as, o.by = "map", c
				}
			}
		}
		if len(parentOffers(d, parent, fk.Table)) > 0 {
			o.attr += strings.Join(words(strings.Join(fk.Columns, "_")), "")
		}
		parent.offers = append(parent.offers, o)
	}
}

// headroom is the max offered for an observed maximum: twice as many,
// rounded up to a multiple of 5, so that the data can grow a little before
// a parent becomes a row error.
func headroom(observed int64) int64 {
	return min((2*observed+4)/5*5, maxEmbed)
}

func parentOffers(d *design, parent *entity, table string) []offer {
	var out []offer
	for _, o := range parent.offers {
		if o.fk.Table == table {
			out = append(out, o)
		}
	}
	return out
}

// reserveNames keeps columns from overwriting the attributes the tool
// writes itself (keys, index keys, entity attribute) and embeds from
// clashing with columns.
func (d *design) reserveNames() {
	reserved := map[string]bool{partitionKey: true, sortKey: true, entityAttribute: true}
	for n := 1; n <= d.nIndexes; n++ {
		reserved[indexName(n)+"PK"], reserved[indexName(n)+"SK"] = true, true
	}
	for _, e := range d.entities {
		taken := map[string]bool{}
		for _, c := range e.table.Columns {
			name := c.Name
			if reserved[name] {
				if e.renamed == nil {
					e.renamed = map[string]string{}
				}
				name = "src_" + name
				e.renamed[c.Name] = name
			}
			taken[name] = true
		}
		for i := range e.offers {
			o := &e.offers[i]
			for base, n := o.attr, 2; taken[o.attr] || reserved[o.attr]; n++ {
				o.attr = fmt.Sprintf("%s%d", base, n)
			}
			taken[o.attr] = true
		}
	}
}
