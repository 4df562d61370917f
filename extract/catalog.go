package extract

import (
	"context"
	"fmt"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Catalog is the source schema as mapping validation consumes it.
type Catalog = mapping.Catalog

// columnsSQL resolves domains to their base type, through domains over
// domains, for columns and for array elements alike: a domain converts as
// the type it is based on.
const columnsSQL = `
WITH RECURSIVE base(oid, base) AS (
  SELECT oid, oid FROM pg_type WHERE typtype <> 'd'
  UNION ALL
  SELECT d.oid, b.base FROM pg_type d JOIN base b ON b.oid = d.typbasetype WHERE d.typtype = 'd'
)
SELECT n.nspname, c.relname, a.attname, a.attnotnull,
       format_type(a.atttypid, a.atttypmod),
       bt.typname, bt.typcategory::text,
       coalesce(et.typname, ''), coalesce(et.typcategory::text, '')
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN base tb ON tb.oid = a.atttypid
JOIN pg_type bt ON bt.oid = tb.base
LEFT JOIN base eb ON eb.oid = bt.typelem AND bt.typcategory = 'A'
LEFT JOIN pg_type et ON et.oid = eb.base
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND a.attnum > 0 AND NOT a.attisdropped
  AND n.nspname = ANY($1)
ORDER BY n.nspname, c.relname, a.attnum`

const uniqueSQL = `
SELECT n.nspname, c.relname, con.contype::text,
       array_agg(a.attname::text ORDER BY k.ord)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE con.contype IN ('p', 'u') AND n.nspname = ANY($1)
GROUP BY n.nspname, c.relname, con.oid, con.contype
ORDER BY n.nspname, c.relname, con.contype, con.oid`

// uniqueIndexSQL lists unique indexes over plain columns (an expression
// index says nothing about a column's values), key columns only, with a
// partial index's predicate as Postgres prints it.
const uniqueIndexSQL = `
SELECT n.nspname, c.relname, ic.relname,
       (SELECT array_agg(a.attname::text ORDER BY k.ord)
          FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
         WHERE k.ord <= i.indnkeyatts),
       coalesce(pg_get_expr(i.indpred, i.indrelid), '')
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE i.indisunique AND i.indisvalid AND i.indexprs IS NULL AND n.nspname = ANY($1)
ORDER BY n.nspname, c.relname, ic.relname`

// ReadCatalog reads tables, columns, unique keys and unique indexes of the
// given schemas.
func ReadCatalog(ctx context.Context, q querier, schemas []string) (*Catalog, error) {
	cat := &Catalog{Tables: map[string]*mapping.Table{}}
	rows, err := q.Query(ctx, columnsSQL, schemas)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	for rows.Next() {
		var schema, table, col, typeName, base, baseCat, elem, elemCat string
		var notNull bool
		if err := rows.Scan(&schema, &table, &col, &notNull, &typeName, &base, &baseCat, &elem, &elemCat); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read catalog: %w", err)
		}
		key := schema + "." + table
		t := cat.Tables[key]
		if t == nil {
			t = &mapping.Table{Schema: schema, Name: table}
			cat.Tables[key] = t
		}
		typ := pgkind.Type{Name: typeName}
		if baseCat == "A" {
			typ.Kind = pgkind.Array
			typ.Elem = pgkind.Classify(elem, firstByte(elemCat))
			typ.Float4 = typ.Elem == pgkind.Float && pgkind.IsFloat4(elem)
		} else {
			typ.Kind = pgkind.Classify(base, firstByte(baseCat))
			typ.Float4 = typ.Kind == pgkind.Float && pgkind.IsFloat4(base)
		}
		t.Columns = append(t.Columns, mapping.Column{Name: col, Type: typ, NotNull: notNull})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	rows, err = q.Query(ctx, uniqueSQL, schemas)
	if err != nil {
		return nil, fmt.Errorf("read catalog constraints: %w", err)
	}
	for rows.Next() {
		var schema, table, kind string
		var cols []string
		if err := rows.Scan(&schema, &table, &kind, &cols); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read catalog constraints: %w", err)
		}
		t := cat.Tables[schema+"."+table]
		if t == nil {
			continue
		}
		if kind == "p" {
			t.PrimaryKey = cols
			t.Unique = append([][]string{cols}, t.Unique...)
		} else {
			t.Unique = append(t.Unique, cols)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog constraints: %w", err)
	}
	rows, err = q.Query(ctx, uniqueIndexSQL, schemas)
	if err != nil {
		return nil, fmt.Errorf("read catalog indexes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var schema, table string
		var ix mapping.UniqueIndex
		if err := rows.Scan(&schema, &table, &ix.Name, &ix.Columns, &ix.Predicate); err != nil {
			return nil, fmt.Errorf("read catalog indexes: %w", err)
		}
		if t := cat.Tables[schema+"."+table]; t != nil {
			t.UniqueIndexes = append(t.UniqueIndexes, ix)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog indexes: %w", err)
	}
	return cat, nil
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}
