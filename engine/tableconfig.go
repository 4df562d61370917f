package engine

import (
	"cmp"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// TableConfig is the loader's configuration of the table a mapping
// describes: its name (table, default the mapping's), keys and their
// types, and indexes with their projections. A Target other than the
// table (an export) checks its items and describes the table to create
// with it, exactly as Run's writer does.
func TableConfig(m *mapping.Mapping, table string) load.Config {
	pk, sk := keyTypesOf(m)
	return load.Config{
		Table:        cmp.Or(table, m.Table),
		PartitionKey: m.PartitionKey, SortKey: m.SortKey,
		PartitionKeyType: pk, SortKeyType: sk,
		Indexes: indexesOf(m),
	}
}
