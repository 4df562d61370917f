package capacity

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/diff"
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

// Import from S3's file limit, and the export's file sizes.
const (
	// MaxImportFiles is the most files one Import from S3 takes
	// (documented); an export of more cannot be imported at all.
	MaxImportFiles = 50_000
	// DefaultExportFileSize is migrate export's default uncompressed size
	// of a data file.
	DefaultExportFileSize = 64 << 20
	// MinExportFileSize is the smallest file size export accepts: files
	// that hold a few items each only multiply requests and bring an
	// export nearer MaxImportFiles.
	MinExportFileSize = 16 << 10
)

// ImportFiles is how many data files of fileSize uncompressed bytes an
// export of bytes needs: at least this many, since files end between
// source rows, a little over fileSize.
func ImportFiles(bytes, fileSize int64) int64 {
	if bytes <= 0 || fileSize <= 0 {
		return 0
	}
	return (bytes + fileSize - 1) / fileSize
}

// FileSizeForImport is the smallest whole number of MiB per file with
// which bytes fit in MaxImportFiles files, with room for files running
// over (a tenth).
func FileSizeForImport(bytes int64) int64 {
	per := bytes/MaxImportFiles + 1
	per += per / 10
	return (per + 1<<20 - 1) >> 20 << 20
}

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
	// Files is how many data files of FileSize (Config.ExportFileSize)
	// hold the lines; over MaxImportFiles, FileLimit says what file size
	// fits.
	Files     int64
	FileSize  int64
	FileLimit string
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
		Files:             ImportFiles(e.importBytes, c.ExportFileSize),
		FileSize:          c.ExportFileSize,
		FileLimit:         FileLimit(e.importBytes, c.ExportFileSize),
	}
}

// FileLimit says why an export of bytes in files of fileSize cannot be
// imported (more than MaxImportFiles files) and what file size would do;
// "" when it can.
func FileLimit(bytes, fileSize int64) string {
	n := ImportFiles(bytes, fileSize)
	if n <= MaxImportFiles {
		return ""
	}
	return fmt.Sprintf("%d files of %s, and Import from S3 takes at most %d files per import: export with --file-size %dMiB or more",
		n, sizeText(fileSize), MaxImportFiles, FileSizeForImport(bytes)>>20)
}

// sizeText writes a file size as --file-size takes it.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
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
