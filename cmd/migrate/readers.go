package main

import (
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
)

// readerFlags are run's and export's parallel reading flags.
type readerFlags struct {
	readers   int
	rangeRows int64
}

func (o *readerFlags) register(f *pflag.FlagSet) {
	f.IntVar(&o.readers, "readers", 1, "connections reading the source at once, in one snapshot; tables over --range-rows rows are split into key ranges")
	f.Int64Var(&o.rangeRows, "range-rows", engine.DefaultRangeRows, "with --readers: rows per key range of a large table (by the planner's estimate: analyzed tables only)")
}
