package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// ErrSchemaChanged is wrapped when DDL changed a table a sync reads in a
// way it cannot follow (a mapped column renamed, dropped or of another
// type, another primary key, a replica identity that lacks columns, the
// table gone): the items already written were rendered from the old
// definition. The message names each change and how to go on.
var ErrSchemaChanged = errors.New("engine: a mapped table's definition changed")

// ddlChange is one difference between the definition a sync's items were
// rendered with and the catalog's.
type ddlChange struct {
	table replicate.Table
	what  string
	// follow says the stream can go on with a plan compiled anew: a column
	// added, or one no entity reads changed.
	follow bool
}

func (c ddlChange) String() string { return "table " + c.table.String() + ": " + c.what }

// diffSchemas lists what changed from old (recorded, with Mapped columns)
// to cur (the catalog now). g judges replica identities.
func diffSchemas(old, cur []extract.TableSchema, g *affect.Graph) []ddlChange {
	var out []ddlChange
	required := map[replicate.Table]affect.Requirement{}
	if g != nil {
		for _, r := range g.Requirements() {
			required[r.Table] = r
		}
	}
	for _, o := range old {
		t := replicate.Table{Schema: o.Schema, Name: o.Name}
		add := func(follow bool, format string, args ...any) {
			out = append(out, ddlChange{table: t, what: fmt.Sprintf(format, args...), follow: follow})
		}
		i := slices.IndexFunc(cur, func(c extract.TableSchema) bool { return c.Schema == o.Schema && c.Name == o.Name })
		if i < 0 {
			add(false, "the table was dropped or renamed")
			continue
		}
		n := cur[i]
		for _, oc := range o.Columns {
			nc := n.ColumnNum(oc.Num)
			mapped := ""
			if oc.Mapped {
				mapped = ", which the mapping reads"
			}
			switch {
			case nc == nil:
				add(!oc.Mapped, "column %s (%s) was dropped%s", oc.Name, oc.Type, mapped)
			case nc.Name != oc.Name:
				add(!oc.Mapped, "column %s was renamed to %s%s", oc.Name, nc.Name, mapped)
			case nc.Type != oc.Type || nc.TypeOID != oc.TypeOID || nc.TypeMod != oc.TypeMod:
				add(!oc.Mapped, "column %s changed type %s → %s%s", oc.Name, oc.Type, nc.Type, mapped)
			case nc.Generated != oc.Generated:
				add(!oc.Mapped, "column %s is generated: %v → %v%s", oc.Name, oc.Generated, nc.Generated, mapped)
			}
		}
		for _, nc := range n.Columns {
			if o.ColumnNum(nc.Num) == nil {
				def := "NULL in existing rows"
				if nc.Default {
					def = "with a default"
				}
				add(true, "column %s (%s) was added, %s", nc.Name, nc.Type, def)
			}
		}
		if !slices.Equal(o.PrimaryKey, n.PrimaryKey) {
			add(false, "primary key (%s) → (%s)", strings.Join(o.PrimaryKey, ", "), strings.Join(n.PrimaryKey, ", "))
		}
		if o.Identity != n.Identity || !slices.Equal(o.IdentityColumns, n.IdentityColumns) {
			what := fmt.Sprintf("replica identity %s → %s", identityText(o), identityText(n))
			id := extract.Identity{Mode: n.Identity, Columns: n.IdentityColumns}
			if r, ok := required[t]; ok {
				if err := r.Check(id); err != nil {
					add(false, "%s, which lacks %s that deletes and key changes need; changes made since carry no old values of them", what, strings.Join(identityMissing(err), ", "))
					continue
				}
			}
			add(true, "%s, which still carries what deletes and key changes need", what)
		}
	}
	return out
}

func identityText(t extract.TableSchema) string {
	s := strings.ToUpper(t.Identity)
	if len(t.IdentityColumns) > 0 {
		s += " (" + strings.Join(t.IdentityColumns, ", ") + ")"
	}
	return s
}

func identityMissing(err error) []string {
	var ie *affect.IdentityError
	if errors.As(err, &ie) {
		return ie.Missing
	}
	return []string{"columns"}
}

// schemaEqual says whether two definitions of a table are the same for a
// stream (whatever Mapped and Default say).
func schemaEqual(a, b extract.TableSchema) bool {
	return len(diffSchemas([]extract.TableSchema{a}, []extract.TableSchema{b}, nil)) == 0
}

// relationDiffers says whether a Relation message describes a table other
// than as recorded: a hint to read the catalog.
func relationDiffers(rel *replicate.Relation, rec extract.TableSchema) bool {
	var cols []extract.ColumnSchema
	for _, c := range rec.Columns {
		if !c.Generated {
			cols = append(cols, c)
		}
	}
	if len(cols) != len(rel.Columns) || extract.IdentityMode(string(rel.Identity)) != rec.Identity {
		return true
	}
	for i, c := range rel.Columns {
		if c.Name != cols[i].Name || c.TypeOID != cols[i].TypeOID || c.TypeMod != cols[i].TypeMod {
			return true
		}
	}
	return false
}

// ddlError is the error that stops a sync on changes it cannot follow.
func ddlError(changes []ddlChange, confirmed LSN, during string) error {
	var stop, follow []string
	for _, c := range changes {
		if c.follow {
			follow = append(follow, c.String())
		} else {
			stop = append(stop, c.String())
		}
	}
	msg := fmt.Sprintf("sync: the source's schema changed %s in a way sync cannot follow:\n  %s", during, strings.Join(stop, "\n  "))
	if len(follow) > 0 {
		msg += fmt.Sprintf("\n(and changes it could follow: %s)", strings.Join(follow, "; "))
	}
	msg += fmt.Sprintf("\nThe items in the table were rendered from the old definition; the slot stays at %s, and sync stops on this again until it is loaded anew. "+
		"To go on: make the mapping fit the new definition if it names what changed (migrate validate --pg), drop the slot and publication (migrate sync --drop), "+
		"then sync again into a new or emptied table (a new initial load; or load over this table, then migrate prune removes the items of rows deleted meanwhile)", confirmed)
	return kinded(ErrSchemaChanged, errors.New(msg))
}

// stopOn returns the error for the changes sync cannot follow, or nil.
func stopOn(changes []ddlChange, confirmed LSN, during string) error {
	if slices.ContainsFunc(changes, func(c ddlChange) bool { return !c.follow }) {
		return ddlError(changes, confirmed, during)
	}
	return nil
}

// markMapped sets Mapped on every column the plan reads.
func markMapped(schemas []extract.TableSchema, plan *transform.Plan) {
	read := map[replicate.Table]map[string]bool{}
	mark := func(schema, table string, cols ...string) {
		t := replicate.Table{Schema: schema, Name: table}
		if read[t] == nil {
			read[t] = map[string]bool{}
		}
		for _, c := range cols {
			read[t][c] = true
		}
	}
	for _, src := range plan.Sources {
		q := src.Query
		rel := func(ref int) (string, string) {
			if ref < 0 {
				return q.Schema, q.Table
			}
			return q.Joins[ref].Schema, q.Joins[ref].Table
		}
		for _, c := range q.Columns {
			mark(q.Schema, q.Table, c.Name)
		}
		mark(q.Schema, q.Table, q.OrderBy...)
		for _, j := range q.Joins {
			for _, c := range j.Columns {
				mark(j.Schema, j.Table, c.Name)
			}
			for _, on := range j.On {
				mark(j.Schema, j.Table, on.Column)
				s, t := rel(on.Ref)
				mark(s, t, on.RefColumn)
			}
		}
		for _, e := range q.Embeds {
			mark(e.Schema, e.Table, e.Reads()...) // columns, order, filter, aggregated column
			for _, on := range e.On {
				mark(e.Schema, e.Table, on.Column)
				mark(q.Schema, q.Table, on.RefColumn)
			}
		}
	}
	for i := range schemas {
		r := read[replicate.Table{Schema: schemas[i].Schema, Name: schemas[i].Name}]
		for j := range schemas[i].Columns {
			schemas[i].Columns[j].Mapped = r[schemas[i].Columns[j].Name]
		}
	}
}

// readSchemas reads the current definitions of the recorded tables.
func readSchemas(ctx context.Context, q *pgx.Conn, rec []extract.TableSchema) ([]extract.TableSchema, error) {
	var names [][2]string
	for _, t := range rec {
		names = append(names, [2]string{t.Schema, t.Name})
	}
	return extract.ReadSchemas(ctx, q, names)
}

// checkRecordedSchema compares the definitions a previous sync recorded
// in the state file with the catalog, before anything is compiled: a
// column the mapping names may be gone, and the mapping would be blamed.
// It returns the error for changes sync cannot follow; the others are
// followed once streaming starts.
func checkRecordedSchema(ctx context.Context, q *pgx.Conn, st *checkpoint.State, g *affect.Graph, confirmed LSN) error {
	cur, err := readSchemas(ctx, q, st.Schema)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return stopOn(diffSchemas(st.Schema, cur, g), confirmed, "since the last sync")
}

// checkSchema compares the recorded definitions with the catalog. Changes
// it can follow are followed: the batch so far is applied with the old
// plan, the mapping is compiled anew against the catalog, the items whose
// rendering gains a column that existing rows may hold a value of are
// rendered again, and the new definitions are recorded in the state file.
// Any other change stops the sync.
func (a *applier) checkSchema(ctx context.Context, why string) error {
	if a.following {
		return nil
	}
	cur, err := readSchemas(ctx, a.conn, a.schema)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	changes := diffSchemas(a.schema, cur, a.ss.graph)
	if len(changes) == 0 {
		return nil
	}
	if err := stopOn(changes, a.confirmed, why); err != nil {
		return err
	}
	a.following = true
	defer func() { a.following = false }()
	// What was received goes first, with the plan it was received under:
	// the old plan's queries still run (only columns nobody reads changed,
	// or columns were added).
	if err := a.apply(ctx); err != nil {
		return err
	}
	ss, err := compileForStream(ctx, a.conn, a.cfg.Mapping)
	if err != nil {
		var names []string
		for _, c := range changes {
			names = append(names, c.String())
		}
		return kinded(ErrSchemaChanged, fmt.Errorf("sync: the source's schema changed (%s) and the mapping no longer fits it: %w; the slot stays at %s. "+
			"Fix the mapping or the schema; a changed mapping needs a new load (migrate sync --drop, then sync)", strings.Join(names, "; "), err, a.confirmed))
	}
	st, err := checkpoint.Load(a.cfg.StateFile)
	if err != nil {
		return kinded(ErrState, fmt.Errorf("sync: read the initial load's state file: %w", err))
	}
	for _, s := range st.Shards {
		ss.plan.SetShardCount(s.Entity, s.Index, s.Count)
	}
	var again []*transform.Source
	for _, src := range ss.plan.Sources {
		if readsAddedValues(src, a.schema, ss.schema) {
			again = append(again, src)
		}
	}
	for _, c := range changes {
		a.log.Info("sync follows a schema change", "change", c.String())
	}
	a.ss, a.batch = ss, ss.graph.NewBatch()
	if len(again) > 0 {
		var names []string
		for _, src := range again {
			names = append(names, src.Name+" ("+strings.Join(src.EntityNames(), ", ")+")")
		}
		a.log.Info("rendering the items of every row again: they gain a column that existing rows may hold a value of", "sources", strings.Join(names, ", "))
		if err := a.render(ctx, nil, again); err != nil {
			return err
		}
	}
	// Recorded only now: a sync that stops before renders again.
	st.Schema = ss.schema
	if err := checkpoint.Save(a.cfg.StateFile, st); err != nil {
		return kinded(ErrState, fmt.Errorf("sync: record the new table definitions: %w", err))
	}
	a.schema = ss.schema
	return nil
}

// readsAddedValues says whether the source's query reads a column added
// since old that existing rows may hold a value of (a default): their
// items, rendered before, lack it.
func readsAddedValues(src *transform.Source, old, cur []extract.TableSchema) bool {
	for _, t := range cur {
		i := slices.IndexFunc(old, func(o extract.TableSchema) bool { return o.Schema == t.Schema && o.Name == t.Name })
		for _, c := range t.Columns {
			if !c.Mapped || !c.Default || (i >= 0 && old[i].ColumnNum(c.Num) != nil) {
				continue
			}
			if queryReads(src.Query, t.Schema, t.Name, c.Name) {
				return true
			}
		}
	}
	return false
}

func queryReads(q extract.Query, schema, table, col string) bool {
	has := func(cols []mapping.Column, name string) bool {
		return slices.ContainsFunc(cols, func(c mapping.Column) bool { return c.Name == name })
	}
	if q.Schema == schema && q.Table == table && has(q.Columns, col) {
		return true
	}
	for _, j := range q.Joins {
		if j.Schema == schema && j.Table == table && has(j.Columns, col) {
			return true
		}
	}
	for _, e := range q.Embeds {
		if e.Schema == schema && e.Table == table && slices.Contains(e.Reads(), col) {
			return true
		}
	}
	return false
}
