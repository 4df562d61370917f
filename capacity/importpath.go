package capacity

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/diff"
)

// The import path: the same items written as DYNAMODB_JSON files (migrate
// export) and loaded by DynamoDB's Import from S3 (migrate import), which
// consumes no write capacity and is billed per GB of uncompressed source
// data, for the table and the indexes it creates alike.

// Defaults of the import path's Config fields.
const (
	// DefaultPricePerGBImport is Import from S3's price in USD per GB of
	// uncompressed data (us-east-1).
	DefaultPricePerGBImport = 0.15
	// DefaultImportGBPerHour is an assumed import rate: AWS publishes none
	// (it depends on item sizes, key distribution and the number of
	// files); measure yours with a trial import.
	DefaultImportGBPerHour = 20
	// DefaultImportOverhead is the time an import takes whatever its size
	// (provisioning the new table and the import's workers).
	DefaultImportOverhead = 5 * time.Minute
)

// GB is the unit of the import price: 2^30 bytes.
const GB = 1 << 30

// importLineOverhead is what an export line adds to an item's canonical
// JSON: {"Item": before it, } and a newline after (package export).
const importLineOverhead = len(`{"Item":`) + len("}\n")

// ImportLineBytes is the size of an item's line in an export's
// uncompressed DYNAMODB_JSON, what Import from S3 bills.
func ImportLineBytes(attrs map[string]types.AttributeValue) int {
	c, _ := diff.Canonical(attrs)
	return len(c) + importLineOverhead
}

// ImportEstimate is the import path for the items of an Estimate.
type ImportEstimate struct {
	UncompressedBytes int64 // the export's DYNAMODB_JSON lines
	PricePerGB        float64
	CostUSD           float64
	GBPerHour         float64
	Overhead          time.Duration
	Seconds           float64 // Overhead plus UncompressedBytes at GBPerHour
}

func (e *Estimator) importEstimate() ImportEstimate {
	c := e.cfg
	gb := float64(e.importBytes) / GB
	return ImportEstimate{
		UncompressedBytes: e.importBytes,
		PricePerGB:        c.PricePerGBImport,
		CostUSD:           gb * c.PricePerGBImport,
		GBPerHour:         c.ImportGBPerHour,
		Overhead:          c.ImportOverhead,
		Seconds:           c.ImportOverhead.Seconds() + gb/c.ImportGBPerHour*3600,
	}
}

// Cheaper names the path that costs less for these items: "write"
// (BatchWriteItem, migrate run) or "import" (Import from S3); "write" on a
// tie.
func (est Estimate) Cheaper() string {
	if est.Import.CostUSD < est.CostUSD {
		return "import"
	}
	return "write"
}
