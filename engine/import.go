package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/mapping"
)

// ImportAPI is what Import calls on a DynamoDB client: *dynamodb.Client
// fits.
type ImportAPI interface {
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	ImportTable(ctx context.Context, params *dynamodb.ImportTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error)
	DescribeImport(ctx context.Context, params *dynamodb.DescribeImportInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error)
}

var _ ImportAPI = (*dynamodb.Client)(nil)

// DefaultImportPollEvery is ImportConfig.PollEvery's default.
const DefaultImportPollEvery = export.DefaultPollEvery

// ErrImportMismatch is wrapped when an import ended with another number
// of items than the export holds, or failed.
var ErrImportMismatch = export.ErrImportMismatch

// ImportConfig configures Import.
type ImportConfig struct {
	// From is a complete export in S3: s3://bucket/prefix. Required.
	From string
	// S3 says how to reach S3: Endpoint, Region and PathStyle apply;
	// PartSize and Concurrency (uploads) do not.
	S3 ExportS3
	// Mapping must be the mapping the export was made with: the table's
	// keys and indexes come from it. Required.
	Mapping *mapping.Mapping
	// DynamoDB is the client; required unless DryRun.
	DynamoDB ImportAPI
	// Table is the table to create. Default: the mapping's table.
	Table string
	// DryRun builds the ImportTable request (ImportResult.Request) and
	// calls nothing on DynamoDB.
	DryRun bool
	// PollEvery is how often DescribeImport is called. Default
	// DefaultImportPollEvery.
	PollEvery time.Duration
	// Progress, if set, is called after each DescribeImport (and after
	// ImportTable) with the import as DynamoDB reports it.
	Progress func(ImportResult)
	// Logger receives the import's start (Info) and the S3 client's debug
	// lines. Default: discard.
	Logger *slog.Logger
}

// WithDefaults returns c with every unset field set to its default.
func (c ImportConfig) WithDefaults() ImportConfig {
	if c.PollEvery == 0 {
		c.PollEvery = DefaultImportPollEvery
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first problem with c, wrapping ErrConfig. Call it
// on WithDefaults().
func (c ImportConfig) Validate() error {
	switch {
	case c.From == "":
		return fieldf("import", "From", "is required: the export's s3://bucket/prefix")
	case c.Mapping == nil:
		return fieldf("import", "Mapping", "is required: the mapping the export was made with")
	case c.DynamoDB == nil && !c.DryRun:
		return fieldf("import", "DynamoDB", "is required unless DryRun")
	case c.PollEvery <= 0:
		return fieldf("import", "PollEvery", "must be positive")
	}
	return checkName("import", "Table", "table", c.Table)
}

// ImportResult is what an import did, as DynamoDB reports it: the
// ImportTable request, the import's ARN and status, and its counts
// against the export's.
type ImportResult = export.ImportResult

// Import creates a table from a complete export in S3 (see Export) with
// DynamoDB's Import from S3, and waits for the import to end, reporting
// progress. The table gets the mapping's keys, global indexes and
// on-demand billing, as RunConfig.CreateTable makes it. Import from S3
// creates new tables only: Import refuses a table that exists (ErrTable)
// and says how to load the export into it instead (Run with
// RunConfig.Export, see OpenExport). It returns an error wrapping
// ErrImportMismatch when the import ended with another number of items
// than the export holds, and ErrInterrupted when ctx ends: the import goes
// on in DynamoDB, and the result (with its ARN) is returned.
func Import(ctx context.Context, cfg ImportConfig) (*ImportResult, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := openExportStore(ctx, cfg.From, cfg.S3, cfg.Logger, export.UploadOptions{})
	if err != nil {
		return nil, err
	}
	src, err := export.Open(ctx, st)
	if err != nil {
		return nil, err
	}
	return export.Import(ctx, export.ImportConfig{Source: src, Mapping: cfg.Mapping, DynamoDB: cfg.DynamoDB, Table: cfg.Table,
		DryRun: cfg.DryRun, PollEvery: cfg.PollEvery, Progress: cfg.Progress, Logger: cfg.Logger})
}
