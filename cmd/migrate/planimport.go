package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/internal/capacity"
)

// importPlanFlags price and time the import path in plan.
type importPlanFlags struct {
	importPrice    float64
	importRate     float64
	importOverhead time.Duration
	fileSize       string
}

func (o *importPlanFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&o.importPrice, "price-per-gb-import", capacity.DefaultPricePerGBImport, "Import from S3's price in USD per GB of uncompressed data")
	f.Float64Var(&o.importRate, "import-rate", capacity.DefaultImportGBPerHour, "GB per hour assumed for an import (AWS publishes no rate: measure one)")
	f.DurationVar(&o.importOverhead, "import-overhead", capacity.DefaultImportOverhead, "time an import takes whatever its size")
	f.StringVar(&o.fileSize, "file-size", "64MiB", "export --file-size the import path counts files at (Import from S3 takes at most 50,000)")
}

func (o *importPlanFlags) validate() error {
	// The prices, rate and overhead are the engine's to check (plan.go).
	if parseFileSize(o.fileSize) < capacity.MinExportFileSize {
		return usagef("plan: --file-size must be a size of at least %dKiB, as export takes it, such as 64MiB, not %q", capacity.MinExportFileSize>>10, o.fileSize)
	}
	return nil
}
