package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/s3test"
	"github.com/pgdynamo/migrate/mapping"
)

// fakeImport is a DynamoDB that plays an import (DynamoDB Local has no
// ImportTable): the table is missing unless exists, ImportTable starts
// the import, and the third DescribeImport finds it COMPLETED with
// imported items.
type fakeImport struct {
	mu       sync.Mutex
	exists   bool
	imported int64
	calls    []string
	request  *dynamodb.ImportTableInput
}

const fakeImportARN = "arn:aws:dynamodb:us-east-1:1:table/Shop/import/01"

func (f *fakeImport) call(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op)
	return len(f.calls)
}

func (f *fakeImport) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	f.call("DescribeTable")
	if !f.exists {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}}, nil
}

func (f *fakeImport) ImportTable(_ context.Context, in *dynamodb.ImportTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error) {
	f.call("ImportTable")
	f.request = in
	return &dynamodb.ImportTableOutput{ImportTableDescription: &types.ImportTableDescription{
		ImportArn: aws.String(fakeImportARN), ImportStatus: types.ImportStatusInProgress}}, nil
}

func (f *fakeImport) DescribeImport(_ context.Context, _ *dynamodb.DescribeImportInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error) {
	d := &types.ImportTableDescription{ImportArn: aws.String(fakeImportARN), ImportStatus: types.ImportStatusInProgress, ProcessedItemCount: 7}
	if f.call("DescribeImport") >= 5 { // the third DescribeImport
		d.ImportStatus, d.ProcessedItemCount, d.ImportedItemCount = types.ImportStatusCompleted, f.imported, f.imported
		d.ProcessedSizeBytes = aws.Int64(1234)
	}
	return &dynamodb.DescribeImportOutput{ImportTableDescription: d}, nil
}

// engine.Import, called directly, opens an export in (in-process) S3,
// asks for the table the mapping describes, follows the import to its
// end, and refuses what it cannot do with the right error kinds.
// Not parallel: the S3 client takes its credentials from the environment.
func TestImportVerb(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.KeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.Secret)
	pg, m := exportShop(t, "")
	srv := s3test.New(t, "exports")
	s3 := engine.ExportS3{Endpoint: srv.URL, Region: s3test.Region, PathStyle: true}
	exp, err := engine.Export(t.Context(), engine.ExportConfig{
		Run: engine.RunConfig{Mapping: m, Postgres: pg, StateFile: filepath.Join(t.TempDir(), "export.json")},
		To:  "s3://exports/shop", S3: s3, Compression: "zstd",
	})
	if err != nil || !exp.Complete {
		t.Fatalf("export: %v", err)
	}
	var items int64
	for _, f := range exp.Files {
		items += f.Items
	}

	// A dry run returns the request and calls nothing.
	res, err := engine.Import(t.Context(), engine.ImportConfig{From: "s3://exports/shop", S3: s3, Mapping: m, Table: "ShopImported", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Request; r == nil || aws.ToString(r.S3BucketSource.S3Bucket) != "exports" || aws.ToString(r.S3BucketSource.S3KeyPrefix) != "shop/data/" ||
		r.InputCompressionType != types.InputCompressionTypeZstd || aws.ToString(r.TableCreationParameters.TableName) != "ShopImported" ||
		res.Table != "ShopImported" || res.Expected != items || res.ARN != "" || res.Status != "" {
		t.Errorf("dry run: %+v, request %+v", res, res.Request)
	}

	// A real import, followed to its end.
	ddb := &fakeImport{imported: items}
	var progress []engine.ImportResult
	res, err = engine.Import(t.Context(), engine.ImportConfig{From: "s3://exports/shop", S3: s3, Mapping: m, DynamoDB: ddb, PollEvery: time.Millisecond,
		Progress: func(r engine.ImportResult) { progress = append(progress, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ARN != fakeImportARN || res.Status != "COMPLETED" || res.Imported != items || res.Expected != items || res.Table != "Shop" || res.ProcessedBytes != 1234 {
		t.Errorf("import: %+v", res)
	}
	if got := strings.Join(ddb.calls, " "); got != "DescribeTable ImportTable DescribeImport DescribeImport DescribeImport" {
		t.Errorf("calls: %s", got)
	}
	if len(progress) != 4 || progress[0].Status != "IN_PROGRESS" || progress[1].Processed != 7 || progress[3].Status != "COMPLETED" {
		t.Errorf("progress: %+v", progress)
	}
	if aws.ToString(ddb.request.TableCreationParameters.TableName) != "Shop" {
		t.Errorf("ImportTable asked for table %q", aws.ToString(ddb.request.TableCreationParameters.TableName))
	}

	// Fewer items imported than the export holds.
	short := &fakeImport{imported: items - 1}
	res, err = engine.Import(t.Context(), engine.ImportConfig{From: "s3://exports/shop", S3: s3, Mapping: m, DynamoDB: short, PollEvery: time.Millisecond})
	if !errors.Is(err, engine.ErrImportMismatch) || res == nil || res.Imported != items-1 {
		t.Errorf("short import: %+v, %v", res, err)
	}
	// A table that exists is refused, and nothing is imported.
	exists := &fakeImport{exists: true}
	if _, err := engine.Import(t.Context(), engine.ImportConfig{From: "s3://exports/shop", S3: s3, Mapping: m, DynamoDB: exists}); !errors.Is(err, engine.ErrTable) ||
		!strings.Contains(err.Error(), "creates new tables only") || strings.Join(exists.calls, " ") != "DescribeTable" {
		t.Errorf("existing table: %v after %v", err, exists.calls)
	}
	// No export there.
	if _, err := engine.Import(t.Context(), engine.ImportConfig{From: "s3://exports/nothing", S3: s3, Mapping: m, DryRun: true}); err == nil {
		t.Error("an import from an empty prefix succeeded")
	}
}

// ImportConfig.Validate names the field at fault, as an ErrConfig.
func TestImportConfigValidate(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("shop.yaml", []byte(exportShopMapping))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cfg   engine.ImportConfig
		field string
	}{
		{"no from", engine.ImportConfig{Mapping: m, DryRun: true}, "From"},
		{"no mapping", engine.ImportConfig{From: "s3://b/p", DryRun: true}, "Mapping"},
		{"no client", engine.ImportConfig{From: "s3://b/p", Mapping: m}, "DynamoDB"},
		{"negative poll", engine.ImportConfig{From: "s3://b/p", Mapping: m, DryRun: true, PollEvery: -time.Second}, "PollEvery"},
		{"fine", engine.ImportConfig{From: "s3://b/p", Mapping: m, DynamoDB: &fakeImport{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.cfg.WithDefaults().Validate()
			var fe *engine.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("valid config: %v", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, engine.ErrConfig)):
				t.Errorf("got %v, want a FieldError on %s", err, tc.field)
			}
			if tc.field != "" {
				if _, ierr := engine.Import(t.Context(), tc.cfg); !errors.Is(ierr, engine.ErrConfig) {
					t.Errorf("Import with the config: %v", ierr)
				}
			}
		})
	}
	if got := (engine.ImportConfig{}).WithDefaults().PollEvery; got != engine.DefaultImportPollEvery {
		t.Errorf("default PollEvery %v", got)
	}
}
