package extract

import (
	"context"
	"fmt"
	"slices"
)

// TableSchema is what a stream's items depend on of one table's
// definition: its columns with their numbers and types, its primary key
// and its replica identity. A sync records it with the items it wrote,
// and compares it with the catalog to see DDL it must follow or stop on.
type TableSchema struct {
	Schema     string         `json:"schema"`
	Name       string         `json:"name"`
	Columns    []ColumnSchema `json:"columns"`
	PrimaryKey []string       `json:"primaryKey,omitempty"`
	// Identity is an Identity* mode; IdentityColumns the columns of the
	// key it sends (none for full and nothing).
	Identity        string   `json:"identity"`
	IdentityColumns []string `json:"identityColumns,omitempty"`
}

// ColumnSchema is one column of a TableSchema. Num is pg_attribute.attnum,
// which a rename keeps and a drop and add never reuse.
type ColumnSchema struct {
	Num  int    `json:"num"`
	Name string `json:"name"`
	Type string `json:"type"` // format_type(), with the type modifier
	// TypeOID and TypeMod are as logical replication's Relation messages
	// carry them.
	TypeOID uint32 `json:"typeOID"`
	TypeMod int32  `json:"typeMod"`
	// Generated columns are not sent by logical replication.
	Generated bool `json:"generated,omitempty"`
	// Default says existing rows may hold a value other than NULL when
	// the column was added: it has a default, or a value stored for rows
	// written before it was added.
	Default bool `json:"-"`
	// Mapped says the plan that rendered the items reads the column: a
	// sync cannot follow its rename, drop or change of type.
	Mapped bool `json:"mapped,omitempty"`
}

// Column returns the column named name, or nil.
func (t *TableSchema) Column(name string) *ColumnSchema {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// ColumnNum returns the column numbered num, or nil.
func (t *TableSchema) ColumnNum(num int) *ColumnSchema {
	for i := range t.Columns {
		if t.Columns[i].Num == num {
			return &t.Columns[i]
		}
	}
	return nil
}

const schemaSQL = `
SELECT n.nspname, c.relname, c.relreplident::text,
       coalesce((SELECT array_agg(a.attname::text ORDER BY k.ord)
                 FROM pg_index i
                 CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                 WHERE i.indrelid = c.oid AND i.indisprimary), '{}'),
       coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum)
                 FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                 WHERE i.indrelid = c.oid
                   AND ((c.relreplident = 'd' AND i.indisprimary)
                     OR (c.relreplident = 'i' AND i.indisreplident))), '{}'),
       a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.atttypid, a.atttypmod,
       a.attgenerated <> '', a.atthasdef OR a.atthasmissing
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN unnest($1::text[], $2::text[]) AS t(nspname, relname) ON t.nspname = n.nspname AND t.relname = c.relname
ORDER BY n.nspname, c.relname, a.attnum`

// ReadSchemas reads the definitions of the named tables ("schema", "name"
// pairs), in the order asked; a table that does not exist is left out.
func ReadSchemas(ctx context.Context, db querier, tables [][2]string) ([]TableSchema, error) {
	var schemas, names []string
	for _, t := range tables {
		schemas, names = append(schemas, t[0]), append(names, t[1])
	}
	rows, err := db.Query(ctx, schemaSQL, schemas, names)
	if err != nil {
		return nil, fmt.Errorf("read table definitions: %w", err)
	}
	defer rows.Close()
	byName := map[[2]string]*TableSchema{}
	for rows.Next() {
		var schema, name, ident string
		var pk, idCols []string
		var c ColumnSchema
		var oid uint32
		if err := rows.Scan(&schema, &name, &ident, &pk, &idCols, &c.Num, &c.Name, &c.Type, &oid, &c.TypeMod, &c.Generated, &c.Default); err != nil {
			return nil, fmt.Errorf("read table definitions: %w", err)
		}
		c.TypeOID = oid
		t := byName[[2]string{schema, name}]
		if t == nil {
			t = &TableSchema{Schema: schema, Name: name, PrimaryKey: pk, Identity: IdentityMode(ident)}
			if t.Identity == IdentityDefault || t.Identity == IdentityIndex {
				t.IdentityColumns = idCols
			}
			byName[[2]string{schema, name}] = t
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read table definitions: %w", err)
	}
	var out []TableSchema
	for _, t := range tables {
		if s := byName[t]; s != nil && !slices.ContainsFunc(out, func(o TableSchema) bool { return o.Schema == t[0] && o.Name == t[1] }) {
			out = append(out, *s)
		}
	}
	return out, nil
}

// IdentityMode is the Identity* mode of a replica identity code, as
// pg_class.relreplident holds it and pgoutput's Relation message sends it
// ("d", "i", "f"; anything else is nothing).
func IdentityMode(relreplident string) string {
	switch relreplident {
	case "d":
		return IdentityDefault
	case "i":
		return IdentityIndex
	case "f":
		return IdentityFull
	}
	return IdentityNothing
}
