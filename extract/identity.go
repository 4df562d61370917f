package extract

import (
	"context"
	"fmt"
)

// Replica identity settings (pg_class.relreplident): what logical
// replication sends of a row's old version on UPDATE and DELETE.
const (
	IdentityDefault = "default" // the primary key's columns
	IdentityIndex   = "index"   // the columns of a chosen unique index
	IdentityFull    = "full"    // every column
	IdentityNothing = "nothing" // nothing
)

// Identity is a table's replica identity.
type Identity struct {
	Mode string
	// Columns are the columns the old version carries: the key's for
	// IdentityDefault and IdentityIndex (none when a default table has no
	// primary key), every column for IdentityFull.
	Columns []string
}

// Full reports whether the old version carries every column.
func (id Identity) Full() bool { return id.Mode == IdentityFull }

const identitySQL = `
SELECT c.relreplident::text,
       coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum)
                 FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                 WHERE i.indrelid = c.oid
                   AND ((c.relreplident = 'd' AND i.indisprimary)
                     OR (c.relreplident = 'i' AND i.indisreplident))), '{}'),
       (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`

// ReplicaIdentity reads the replica identity of a table.
func ReplicaIdentity(ctx context.Context, db querier, schema, table string) (Identity, error) {
	rows, err := db.Query(ctx, identitySQL, schema, table)
	if err != nil {
		return Identity{}, fmt.Errorf("replica identity of %s.%s: %w", schema, table, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Identity{}, fmt.Errorf("replica identity of %s.%s: %w", schema, table, err)
		}
		return Identity{}, fmt.Errorf("replica identity of %s.%s: no such table", schema, table)
	}
	var mode string
	var key, all []string
	if err := rows.Scan(&mode, &key, &all); err != nil {
		return Identity{}, fmt.Errorf("replica identity of %s.%s: %w", schema, table, err)
	}
	id := Identity{Mode: IdentityMode(mode), Columns: key}
	switch id.Mode {
	case IdentityFull:
		id.Columns = all
	case IdentityNothing:
		id.Columns = nil
	}
	return id, rows.Err()
}
