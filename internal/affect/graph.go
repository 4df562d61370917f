// Package affect computes which items a change to the source affects,
// from the same compiled mapping (transform.Plan) that builds the items:
// a row's own items (put, or deleted by the keys its old version had), the
// items that embed it as a child, and the items that copy from it as a
// parent, over every hop of a copy chain. It then reads the current state
// of every affected row with the query the migration reads it with, and
// transforms it with the same plan, so that a streamed change and a fresh
// migration produce the same items.
//
// It reaches PostgreSQL through extract (reads by key sets, inside one
// snapshot); it writes nothing.
package affect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Graph says, for every source table, through which relations its
// changes reach items.
type Graph struct {
	plan    *transform.Plan
	byTable map[replicate.Table][]*edge
	tables  []replicate.Table
	// keyCols are, per source, the base columns its rows' item keys and
	// row key are read from, typed as in the catalog; key is its row key
	// (the columns it is read in order of), and own its ownEdge.
	keyCols map[*transform.Source][]mapping.Column
	key     map[*transform.Source][]mapping.Column
	own     map[*transform.Source]*edge
	// rowKey names, per table, the columns that identify a row in
	// messages (its primary key).
	rowKey map[replicate.Table][]string
	// required is what each table's old row versions must carry.
	required map[replicate.Table]Requirement
	// streamed marks the sources whose items are built from their own
	// row alone (no joins, no embeds): their changed rows can be rendered
	// from the stream (streamed.go).
	streamed map[*transform.Source]bool
}

type edgeKind int

const (
	ownEdge   edgeKind = iota // the changed table builds the items
	copyEdge                  // the items copy from the changed table
	embedEdge                 // the items embed rows of the changed table
)

// edge is one way changes of a table reach the items of a source.
type edge struct {
	kind  edgeKind
	src   *transform.Source
	table replicate.Table
	// cols are the columns of the changed table whose values select the
	// affected rows of src: its key for ownEdge, the join columns
	// otherwise.
	cols []string
	// ref and refCols are what those values are matched with in src's
	// query: relation ref (-1 the base table, k join k) and its columns.
	ref     int
	refCols []mapping.Column
	// joins is how many of src's joins a lookup needs to reach ref.
	joins int
	// direct, when refCols are src's own key, maps src's key columns to
	// positions in cols: no lookup is needed.
	direct []int
	// via describes the edge for messages.
	via string
}

// New builds the graph of a compiled plan; cat is the catalog the plan
// was compiled against.
func New(plan *transform.Plan, cat *mapping.Catalog) (*Graph, error) {
	g := &Graph{plan: plan, byTable: map[replicate.Table][]*edge{}, keyCols: map[*transform.Source][]mapping.Column{},
		key: map[*transform.Source][]mapping.Column{}, own: map[*transform.Source]*edge{}, rowKey: map[replicate.Table][]string{},
		streamed: map[*transform.Source]bool{}}
	add := func(e *edge) {
		g.byTable[e.table] = append(g.byTable[e.table], e)
		g.tables = append(g.tables, e.table)
		if t := cat.Lookup(e.table.Schema, e.table.Name); t != nil {
			g.rowKey[e.table] = t.OrderKey()
		}
	}
	for _, src := range plan.Sources {
		q := src.Query
		base := replicate.Table{Schema: q.Schema, Name: q.Table}
		entities := strings.Join(src.EntityNames(), ", ")
		baseTable := cat.Lookup(q.Schema, q.Table)
		if baseTable == nil {
			return nil, fmt.Errorf("affect: table %s is not in the catalog", base)
		}
		var keyCols []mapping.Column
		for _, name := range append(src.KeyColumns(), q.OrderBy...) {
			if !slices.ContainsFunc(keyCols, func(c mapping.Column) bool { return c.Name == name }) {
				keyCols = append(keyCols, *baseTable.Column(name))
			}
		}
		g.keyCols[src] = keyCols
		g.streamed[src] = len(q.Joins) == 0 && len(q.Embeds) == 0
		own := &edge{kind: ownEdge, src: src, table: base, cols: q.OrderBy, ref: -1, via: entities + " built from " + base.String()}
		for _, k := range q.OrderBy {
			own.refCols = append(own.refCols, *baseTable.Column(k))
		}
		own.direct = directKey(q.OrderBy, q.OrderBy)
		g.key[src], g.own[src] = own.refCols, own
		add(own)
		for i, j := range q.Joins {
			e := &edge{kind: copyEdge, src: src, table: replicate.Table{Schema: j.Schema, Name: j.Table}, ref: j.On[0].Ref}
			refTable := baseTable
			if e.ref >= 0 {
				rj := q.Joins[e.ref]
				refTable = cat.Lookup(rj.Schema, rj.Table)
				e.joins = e.ref + 1
			}
			if refTable == nil {
				return nil, fmt.Errorf("affect: a table joined by %s is not in the catalog", base)
			}
			for _, on := range j.On {
				if on.Ref != e.ref {
					return nil, fmt.Errorf("affect: join %d of %s refers to two relations", i, base)
				}
				c := refTable.Column(on.RefColumn)
				if c == nil {
					return nil, fmt.Errorf("affect: column %s.%s is not in the catalog", refTable.Name, on.RefColumn)
				}
				e.cols = append(e.cols, on.Column)
				e.refCols = append(e.refCols, *c)
			}
			if e.ref == -1 {
				e.direct = directKey(q.OrderBy, e.refNames())
			}
			e.via = fmt.Sprintf("%s copies from %s", src.JoinEntity(i), e.table)
			add(e)
		}
		for i, em := range q.Embeds {
			e := &edge{kind: embedEdge, src: src, table: replicate.Table{Schema: em.Schema, Name: em.Table}, ref: -1}
			for _, on := range em.On {
				c := baseTable.Column(on.RefColumn)
				if c == nil {
					return nil, fmt.Errorf("affect: column %s.%s is not in the catalog", base, on.RefColumn)
				}
				e.cols = append(e.cols, on.Column)
				e.refCols = append(e.refCols, *c)
			}
			e.direct = directKey(q.OrderBy, e.refNames())
			e.via = fmt.Sprintf("%s embeds %s", src.EmbedEntity(i), e.table)
			if em.Aggregate != "" {
				e.via = fmt.Sprintf("%s aggregates %s into %s", src.EmbedEntity(i), e.table, em.Aggregate)
			}
			add(e)
		}
	}
	g.tables = replicate.SortTables(g.tables)
	g.required = map[replicate.Table]Requirement{}
	for _, r := range g.Requirements() {
		g.required[r.Table] = r
	}
	return g, nil
}

func (e *edge) refNames() []string {
	out := make([]string, len(e.refCols))
	for i, c := range e.refCols {
		out[i] = c.Name
	}
	return out
}

// directKey returns, when refs are exactly the key columns in some order,
// the position in refs of each key column; else nil.
func directKey(key, refs []string) []int {
	if len(key) != len(refs) {
		return nil
	}
	pos := make([]int, len(key))
	for i, k := range key {
		pos[i] = slices.Index(refs, k)
		if pos[i] < 0 {
			return nil
		}
	}
	return pos
}

// Tables lists every table whose changes can affect items: what the
// publication must hold.
func (g *Graph) Tables() []replicate.Table { return slices.Clone(g.tables) }

// Unsupported lists what of the mapping a stream cannot keep right: table
// keys built from copied columns. A change of the parent row would move
// the items to other keys, and the stream cannot know the old ones.
func (g *Graph) Unsupported() []error {
	var out []error
	for _, src := range g.plan.Sources {
		for _, d := range src.CopiedKeyColumns() {
			out = append(out, fmt.Errorf("%s, a copied column: a change of that parent row would move the items to other keys, and sync cannot know the old ones; build table keys from the entity's own columns (copied columns may go in index keys), or migrate with run", d))
		}
	}
	return out
}

// Requirement is what the old version of a table's rows must carry
// (its replica identity) for deletes and key changes to be applied.
type Requirement struct {
	Table   replicate.Table
	Columns []string // the columns the old version must hold
	Why     []string // one line per reason
}

// Requirements lists, per table, the columns an old row version must
// carry: the columns its own items' keys are built from (to delete the
// items a deleted or re-keyed row had), and the columns items embed or
// copy it by (to re-render the items it belonged to before it moved).
func (g *Graph) Requirements() []Requirement {
	var out []Requirement
	for _, t := range g.tables {
		r := Requirement{Table: t}
		for _, e := range g.byTable[t] {
			var cols []string
			var why string
			switch e.kind {
			case ownEdge:
				for _, c := range g.keyCols[e.src] {
					cols = append(cols, c.Name)
				}
				why = fmt.Sprintf("the keys of %s items are built from %s", strings.Join(e.src.EntityNames(), ", "), strings.Join(cols, ", "))
			default:
				cols = e.cols
				why = fmt.Sprintf("%s by %s", e.via, strings.Join(cols, ", "))
			}
			for _, c := range cols {
				if !slices.Contains(r.Columns, c) {
					r.Columns = append(r.Columns, c)
				}
			}
			r.Why = append(r.Why, why)
		}
		out = append(out, r)
	}
	return out
}

// Check compares a table's replica identity with what it must carry; the
// error says why and prints the statement that fixes it.
func (r Requirement) Check(id extract.Identity) error {
	if id.Full() {
		return nil
	}
	var missing []string
	for _, c := range r.Columns {
		if !slices.Contains(id.Columns, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	has := "no columns"
	if len(id.Columns) > 0 {
		has = strings.Join(id.Columns, ", ")
	}
	return &IdentityError{Table: r.Table, Mode: id.Mode, Has: has, Missing: missing, Why: r.Why}
}

// IdentityError is a table whose replica identity lacks columns a stream
// needs in old row versions.
type IdentityError struct {
	Table   replicate.Table
	Mode    string // extract.Identity* or "" when unknown
	Has     string
	Missing []string
	Why     []string
}

// Fix is the statement that gives the table the identity it needs.
func (e *IdentityError) Fix() string {
	return "ALTER TABLE " + pgx.Identifier{e.Table.Schema, e.Table.Name}.Sanitize() + " REPLICA IDENTITY FULL;"
}

func (e *IdentityError) Error() string {
	mode := ""
	if e.Mode != "" {
		mode = strings.ToUpper(e.Mode) + " "
	}
	return fmt.Sprintf("table %s: REPLICA IDENTITY %s(%s) lacks %s, which deletes and key changes need (%s); run: %s",
		e.Table, mode, e.Has, strings.Join(e.Missing, ", "), strings.Join(e.Why, "; "), e.Fix())
}

// keyText is the text type key values are read back as, to match them
// again with the text PostgreSQL sends.
var keyText = pgkind.Type{Name: "text", Kind: pgkind.Text}

// Truncated says what a TRUNCATE of tables affects: the entities whose
// items it removed (those built from a truncated table), and the sources
// whose every row must be rendered again (built from, embedding or copying
// from a truncated table), in plan order. Both are empty when no mapped
// table was truncated.
func (g *Graph) Truncated(tables []replicate.Table) (entities []string, sources []*transform.Source) {
	hit := map[*transform.Source]bool{}
	for _, t := range tables {
		for _, e := range g.byTable[t] {
			hit[e.src] = true
			if e.kind == ownEdge {
				entities = append(entities, e.src.EntityNames()...)
			}
		}
	}
	for _, src := range g.plan.Sources {
		if hit[src] {
			sources = append(sources, src)
		}
	}
	slices.Sort(entities)
	return slices.Compact(entities), sources
}
