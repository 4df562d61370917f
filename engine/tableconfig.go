package engine

import (
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// TableConfig is the loader's configuration of the table a mapping
// describes: its name (table, default the mapping's), keys and their
// types, and indexes with their projections. A Target other than the
// table (an export) checks its items and describes the table to create
// with it, exactly as Run's writer does.
func TableConfig(m *mapping.Mapping, table string) load.Config {
	return tableconf.For(m, table)
}
