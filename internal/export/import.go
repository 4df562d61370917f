package export

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// ImportAPI is what Import calls on a DynamoDB client: *dynamodb.Client
// fits.
type ImportAPI interface {
	tableread.Describer
	ImportTable(ctx context.Context, params *dynamodb.ImportTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error)
	DescribeImport(ctx context.Context, params *dynamodb.DescribeImportInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error)
}

var _ ImportAPI = (*dynamodb.Client)(nil)

// DefaultPollEvery is how often Import asks DynamoDB how the import goes.
const DefaultPollEvery = 30 * time.Second

// ImportConfig configures Import.
type ImportConfig struct {
	// Source is a complete export in S3 (Open). Required.
	Source *Source
	// Mapping must be the mapping the export was made with: the table's
	// keys and indexes come from it. Required.
	Mapping *mapping.Mapping
	// DynamoDB is the client; required unless DryRun.
	DynamoDB ImportAPI
	// Table is the table to create. Default: the mapping's table.
	Table string
	// DryRun builds the request and returns it without calling DynamoDB.
	DryRun bool
	// PollEvery is how often DescribeImport is called. Default 30s.
	PollEvery time.Duration
	// Progress, if set, is called after each DescribeImport.
	Progress func(ImportResult)
	// Logger receives the import's start (Info). Default: discard.
	Logger *slog.Logger
}

// ImportResult is what an import did, as DynamoDB reports it.
type ImportResult struct {
	// Request is the ImportTable request, as sent (or, with DryRun, as
	// it would be).
	Request *dynamodb.ImportTableInput `json:"-"`
	// ARN is the import's ARN; empty for a dry run.
	ARN   string `json:"importArn,omitempty"`
	Table string `json:"table"`
	// Status is ImportTable's status: IN_PROGRESS, COMPLETED, CANCELLING,
	// CANCELLED or FAILED; empty for a dry run.
	Status         string `json:"status,omitempty"`
	Processed      int64  `json:"processedItems"`
	ProcessedBytes int64  `json:"processedBytes"`
	Imported       int64  `json:"importedItems"`
	Errors         int64  `json:"errors"`
	// Expected is the number of items the manifest lists.
	Expected       int64   `json:"expectedItems"`
	FailureCode    string  `json:"failureCode,omitempty"`
	FailureMessage string  `json:"failureMessage,omitempty"`
	LogGroup       string  `json:"cloudWatchLogGroup,omitempty"`
	Seconds        float64 `json:"seconds"`
}

// ErrImportMismatch is wrapped when an import ended with another number
// of items than the export holds (or failed).
var ErrImportMismatch = errors.New("export: the import did not load every item of the export")

// ImportRequest is the ImportTable request for an export: DYNAMODB_JSON
// files under the export's data/ prefix, and a new table with the
// mapping's keys and indexes, on demand, as `run --create-table` creates
// it. Its ClientToken derives from the manifest and the table, so that
// the same import asked for twice within DynamoDB's 8 hours is started
// once.
func ImportRequest(src *Source, m *mapping.Mapping, table string) (*dynamodb.ImportTableInput, error) {
	w := src.st.where()
	if !w.IsS3() {
		return nil, kindedConfig(fmt.Errorf("%s is not in S3: ImportTable reads from S3 only; copy the export there (for example aws s3 sync %s s3://BUCKET/PREFIX) and import from that", w, w))
	}
	if src.Manifest.MappingSHA256 != m.Digest {
		return nil, kindedConfig(fmt.Errorf("the export was made with another mapping (sha256 %.12s…, and %s has %.12s…): import it with the mapping it was made with", src.Manifest.MappingSHA256, m.File, m.Digest))
	}
	if n := len(src.Manifest.Files); n > capacity.MaxImportFiles {
		return nil, kindedConfig(fmt.Errorf("the export has %d data files, and Import from S3 takes at most %d per import: export again with --file-size %dMiB or more (--fresh), or load this one with run --from-export",
			n, capacity.MaxImportFiles, capacity.FileSizeForImport(src.Manifest.UncompressedBytes)>>20))
	}
	table = cmp.Or(table, m.Table)
	params, err := load.TableCreationParameters(tableconf.For(m, table))
	if err != nil {
		return nil, kindedConfig(fmt.Errorf("%w; create the table with run --create-table and load the export with run --from-export", err))
	}
	token := sha256.Sum256([]byte(src.sha + "\x00" + table))
	return &dynamodb.ImportTableInput{
		ClientToken:          aws.String(hex.EncodeToString(token[:16])),
		InputFormat:          types.InputFormatDynamodbJson,
		InputCompressionType: types.InputCompressionType(src.Manifest.Compression),
		S3BucketSource: &types.S3BucketSource{
			S3Bucket:    aws.String(w.Bucket),
			S3KeyPrefix: aws.String(w.key(dataDir) + "/"),
		},
		TableCreationParameters: params,
	}, nil
}

// Import creates a table from an export with ImportTable and waits for it
// to end, reporting progress. It refuses a table that exists (Import from
// S3 creates new tables only) and says what to do instead. It returns an
// error wrapping ErrImportMismatch when the import ended with another
// number of imported items than the manifest lists, and ErrInterrupted
// (with the import's ARN; the import goes on in DynamoDB) when ctx ends.
func Import(ctx context.Context, cfg ImportConfig) (*ImportResult, error) {
	start := time.Now()
	if cfg.Source == nil || cfg.Mapping == nil || (cfg.DynamoDB == nil && !cfg.DryRun) {
		return nil, kindedConfig(errors.New("import: an export, its mapping and a DynamoDB client are required"))
	}
	cfg.PollEvery = cmp.Or(cfg.PollEvery, DefaultPollEvery)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	req, err := ImportRequest(cfg.Source, cfg.Mapping, cfg.Table)
	if err != nil {
		return nil, err
	}
	table := aws.ToString(req.TableCreationParameters.TableName)
	res := &ImportResult{Request: req, Table: table, Expected: cfg.Source.Manifest.Items}
	if cfg.DryRun {
		return res, nil
	}
	desc, err := tableread.Describe(ctx, cfg.DynamoDB, table)
	switch {
	case err != nil:
		return nil, fmt.Errorf("import: check table %q: %w", table, err)
	case desc != nil:
		return nil, kinded(contract.ErrTable, fmt.Errorf("table %q exists, and Import from S3 creates new tables only. To load the export into it, use the write path:\n  migrate run --from-export %s --mapping %s --table %s\n(on several machines, give each a share: --files 1/N ... --files N/N); or import into a new table with --table NAME",
			table, cfg.Source.st.where(), cfg.Mapping.File, table))
	}
	out, err := cfg.DynamoDB.ImportTable(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("import: ImportTable: %w", err)
	}
	d := out.ImportTableDescription
	res.ARN = aws.ToString(d.ImportArn)
	cfg.Logger.Info("import: started", "import", res.ARN, "table", table, "items", res.Expected)
	for {
		res.fill(d)
		res.Seconds = time.Since(start).Seconds()
		if cfg.Progress != nil {
			cfg.Progress(*res)
		}
		if d.ImportStatus != types.ImportStatusInProgress && d.ImportStatus != types.ImportStatusCancelling {
			break
		}
		select {
		case <-ctx.Done():
			return res, kinded(contract.ErrInterrupted, fmt.Errorf("import: stopped waiting; the import goes on in DynamoDB. Follow it with:\n  aws dynamodb describe-import --import-arn %s", res.ARN))
		case <-time.After(cfg.PollEvery):
		}
		di, err := cfg.DynamoDB.DescribeImport(ctx, &dynamodb.DescribeImportInput{ImportArn: aws.String(res.ARN)})
		if err != nil {
			if ctx.Err() != nil {
				continue // reported at the top of the loop
			}
			return res, fmt.Errorf("import: DescribeImport %s: %w", res.ARN, err)
		}
		d = di.ImportTableDescription
	}
	if res.Status != string(types.ImportStatusCompleted) || res.Imported != res.Expected || res.Errors > 0 {
		logs := ""
		if res.LogGroup != "" {
			logs = "; the items that failed are logged in CloudWatch log group " + res.LogGroup
		}
		failure := ""
		if res.FailureCode != "" || res.FailureMessage != "" {
			failure = fmt.Sprintf(" (%s: %s)", res.FailureCode, res.FailureMessage)
		}
		return res, fmt.Errorf("%w: import %s %s%s: %d items imported of %d in the export, %d processed, %d errors%s",
			ErrImportMismatch, res.ARN, res.Status, failure, res.Imported, res.Expected, res.Processed, res.Errors, logs)
	}
	return res, nil
}

func (r *ImportResult) fill(d *types.ImportTableDescription) {
	if d == nil {
		return
	}
	r.Status = string(d.ImportStatus)
	r.Processed = d.ProcessedItemCount
	r.ProcessedBytes = aws.ToInt64(d.ProcessedSizeBytes)
	r.Imported = d.ImportedItemCount
	r.Errors = d.ErrorCount
	r.FailureCode, r.FailureMessage = aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage)
	r.LogGroup = aws.ToString(d.CloudWatchLogGroupArn)
}
