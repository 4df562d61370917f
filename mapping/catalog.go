package mapping

import (
	"sort"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// Catalog describes the source tables a mapping may read. The extract
// package fills it from the live database; tests build it by hand.
type Catalog struct {
	Tables map[string]*Table // by "schema.table"
}

// Table is one source table (or view) and its columns in ordinal order.
type Table struct {
	Schema, Name string
	Columns      []Column
	// Unique lists the primary key (first, when there is one) and every
	// other unique constraint, as column-name lists.
	Unique     [][]string
	PrimaryKey []string
	// UniqueIndexes lists the unique indexes over plain columns, partial
	// ones with their predicate: they prove a singleton entity (a key
	// without the primary key, one row per parent under a where filter).
	UniqueIndexes []UniqueIndex
}

// UniqueIndex is a unique index over plain columns (no expressions).
type UniqueIndex struct {
	Name    string
	Columns []string // key columns, INCLUDE columns left out
	// Predicate is a partial index's WHERE as Postgres prints it
	// (pg_get_expr); "" for a full index.
	Predicate string
}

// Column is one column of a source table.
type Column struct {
	Name    string
	Type    pgkind.Type
	NotNull bool
}

// Lookup finds a table by schema and name.
func (c *Catalog) Lookup(schema, name string) *Table {
	if c == nil {
		return nil
	}
	return c.Tables[schema+"."+name]
}

// Column finds a column by name.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// OrderKey is the key rows are read, checkpointed and resumed in: the
// primary key, or else the first unique key whose columns are all NOT NULL
// (a NULL would make the keyset comparison (a, b) > ($1, $2) unknown and
// skip rows on resume). nil when the table has neither.
func (t *Table) OrderKey() []string {
	if len(t.PrimaryKey) > 0 {
		return t.PrimaryKey
	}
next:
	for _, u := range t.Unique {
		for _, name := range u {
			if c := t.Column(name); c == nil || !c.NotNull {
				continue next
			}
		}
		return u
	}
	return nil
}

func (t *Table) columnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

func (c *Catalog) tableNames(schema string) []string {
	var names []string
	for _, t := range c.Tables {
		if t.Schema == schema {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	return names
}
