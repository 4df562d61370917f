// Package tableconf describes the DynamoDB table a mapping needs in the
// loader's terms (load.Config: name, keys and their types, indexes with
// their projections). It is the one place that translation is made, so
// that the engine's writer, the table check, table creation and the
// export's item checks and import request agree.
package tableconf

import (
	"cmp"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// For is the loader's configuration of the table a mapping describes: its
// name (table, default the mapping's), keys and their types, and indexes
// with their projections.
func For(m *mapping.Mapping, table string) load.Config {
	pk, sk := KeyTypes(m)
	return load.Config{
		Table:        cmp.Or(table, m.Table),
		PartitionKey: m.PartitionKey, SortKey: m.SortKey,
		PartitionKeyType: pk, SortKeyType: sk,
		Indexes: Indexes(m),
	}
}

// Indexes gives the loader every index with its kind (global or local),
// key types and projection, for table creation, the table check and write
// units.
func Indexes(m *mapping.Mapping) []load.Index {
	var out []load.Index
	for _, ix := range m.Indexes {
		li := load.Index{Name: ix.Name, PartitionKey: ix.PartitionKey, SortKey: ix.SortKey, Local: ix.Local,
			PartitionKeyType: types.ScalarAttributeType(ix.PartitionKeyType), SortKeyType: types.ScalarAttributeType(ix.SortKeyType),
			Projection: types.ProjectionType(ix.Projection.Type)}
		for _, a := range ix.Projection.NonKeyAttributes {
			li.NonKeyAttributes = append(li.NonKeyAttributes, a.Name)
		}
		out = append(out, li)
	}
	return out
}

// KeyTypes is the table's key types in the loader's terms.
func KeyTypes(m *mapping.Mapping) (pk, sk types.ScalarAttributeType) {
	return types.ScalarAttributeType(m.PartitionKeyType), types.ScalarAttributeType(m.SortKeyType)
}
