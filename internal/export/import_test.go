package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/mapping"
)

// recorder is a DynamoDB endpoint that records ImportTable requests and
// plays an import: DynamoDB Local has no ImportTable.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	body     map[string]any // the ImportTable request
	exists   bool           // DescribeTable finds the table
	imported int64          // ImportedItemCount once completed
	polls    int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	r.calls = append(r.calls, op)
	data, _ := io.ReadAll(req.Body)
	status, resp := 200, ""
	switch op {
	case "DescribeTable":
		if r.exists {
			resp = `{"Table":{"TableName":"Shop","TableStatus":"ACTIVE"}}`
		} else {
			status, resp = 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`
		}
	case "ImportTable":
		_ = json.Unmarshal(data, &r.body)
		resp = `{"ImportTableDescription":{"ImportArn":"arn:aws:dynamodb:us-east-1:1:table/Shop/import/01","ImportStatus":"IN_PROGRESS"}}`
	case "DescribeImport":
		r.polls++
		switch {
		case r.polls < 3:
			resp = fmt.Sprintf(`{"ImportTableDescription":{"ImportArn":"arn:aws:dynamodb:us-east-1:1:table/Shop/import/01","ImportStatus":"IN_PROGRESS","ProcessedItemCount":%d,"ProcessedSizeBytes":%d}}`, 100*r.polls, 1000*r.polls)
		default:
			resp = fmt.Sprintf(`{"ImportTableDescription":{"ImportArn":"arn:aws:dynamodb:us-east-1:1:table/Shop/import/01","ImportStatus":"COMPLETED","ProcessedItemCount":300,"ImportedItemCount":%d,"ErrorCount":%d,"CloudWatchLogGroupArn":"arn:aws:logs:us-east-1:1:log-group:/aws-dynamodb/imports"}}`, r.imported, 300-r.imported)
		}
	default:
		status, resp = 400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"unexpected call"}`
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(resp))), 10))
	w.WriteHeader(status)
	io.WriteString(w, resp)
}

func recordingClient(t *testing.T, r *recorder) *dynamodb.Client {
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")},
		func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
}

// s3Export writes a complete export of 300 items to the in-process S3.
func s3Export(t *testing.T) (*bundle, *Source) {
	b := newS3(t)
	tgt := b.target(t, func(c *TargetConfig) { c.Compression = CompressionZstd })
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Write(t.Context(), feed(items(300, 0, &st))); err != nil {
		t.Fatal(err)
	}
	src, _ := readAll(t, b, tgt)
	return b, src
}

func TestImportRequestAndProgress(t *testing.T) {
	t.Parallel()
	b, src := s3Export(t)
	rec := &recorder{imported: 300}
	var progress []ImportResult
	res, err := Import(t.Context(), ImportConfig{
		Source: src, Mapping: b.m, DynamoDB: recordingClient(t, rec), PollEvery: time.Millisecond,
		Progress: func(r ImportResult) { progress = append(progress, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "COMPLETED" || res.Imported != 300 || res.Expected != 300 || len(progress) != 4 || progress[1].Processed != 100 {
		t.Errorf("result %+v after %d progress calls", res, len(progress))
	}
	if got := strings.Join(rec.calls, " "); got != "DescribeTable ImportTable DescribeImport DescribeImport DescribeImport" {
		t.Errorf("calls: %s", got)
	}
	// The request as DynamoDB received it, in its wire form.
	got, _ := json.MarshalIndent(rec.body, "", "  ")
	want := `{
  "ClientToken": "` + aws.ToString(res.Request.ClientToken) + `",
  "InputCompressionType": "ZSTD",
  "InputFormat": "DYNAMODB_JSON",
  "S3BucketSource": {
    "S3Bucket": "bucket",
    "S3KeyPrefix": "exports/shop/data/"
  },
  "TableCreationParameters": {
    "AttributeDefinitions": [
      {
        "AttributeName": "PK",
        "AttributeType": "S"
      },
      {
        "AttributeName": "SK",
        "AttributeType": "S"
      },
      {
        "AttributeName": "GSI1PK",
        "AttributeType": "S"
      },
      {
        "AttributeName": "GSI1SK",
        "AttributeType": "S"
      }
    ],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [
      {
        "IndexName": "GSI1",
        "KeySchema": [
          {
            "AttributeName": "GSI1PK",
            "KeyType": "HASH"
          },
          {
            "AttributeName": "GSI1SK",
            "KeyType": "RANGE"
          }
        ],
        "Projection": {
          "ProjectionType": "ALL"
        }
      }
    ],
    "KeySchema": [
      {
        "AttributeName": "PK",
        "KeyType": "HASH"
      },
      {
        "AttributeName": "SK",
        "KeyType": "RANGE"
      }
    ],
    "TableName": "Shop"
  }
}`
	if string(got) != want {
		t.Errorf("ImportTable request:\n%s\nwant:\n%s", got, want)
	}
	if len(aws.ToString(res.Request.ClientToken)) != 32 {
		t.Errorf("client token %q", aws.ToString(res.Request.ClientToken))
	}
	// The S3 key prefix holds the data files and nothing else.
	for _, k := range b.s3.Keys(t, "bucket", "exports/shop/data/") {
		if !strings.HasSuffix(k, ".json.zst") {
			t.Errorf("%s is under the import prefix", k)
		}
	}
}

func TestImportCountsDifferOrTableExists(t *testing.T) {
	t.Parallel()
	b, src := s3Export(t)
	rec := &recorder{imported: 298}
	res, err := Import(t.Context(), ImportConfig{Source: src, Mapping: b.m, DynamoDB: recordingClient(t, rec), PollEvery: time.Millisecond})
	if !errors.Is(err, ErrImportMismatch) || !strings.Contains(err.Error(), "298 items imported of 300") || !strings.Contains(err.Error(), "log-group") {
		t.Errorf("import of 298: %v", err)
	}
	if res == nil || res.Errors != 2 {
		t.Errorf("result %+v", res)
	}

	rec = &recorder{exists: true}
	_, err = Import(t.Context(), ImportConfig{Source: src, Mapping: b.m, DynamoDB: recordingClient(t, rec)})
	if !errors.Is(err, contract.ErrTable) || !strings.Contains(err.Error(), "migrate run --from-export s3://bucket/exports/shop") || !strings.Contains(err.Error(), "--files") {
		t.Errorf("import into an existing table: %v", err)
	}
	if strings.Join(rec.calls, " ") != "DescribeTable" {
		t.Errorf("calls: %v", rec.calls)
	}

	// A dry run calls nothing.
	rec = &recorder{}
	res, err = Import(t.Context(), ImportConfig{Source: src, Mapping: b.m, DynamoDB: recordingClient(t, rec), DryRun: true, Table: "Other"})
	if err != nil || len(rec.calls) != 0 || aws.ToString(res.Request.TableCreationParameters.TableName) != "Other" {
		t.Errorf("dry run: %v, calls %v", err, rec.calls)
	}

	// A local export cannot be imported.
	lb := newLocal(t)
	tgt := lb.target(t, nil)
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Write(t.Context(), feed(items(3, 0, &st))); err != nil {
		t.Fatal(err)
	}
	lsrc, _ := readAll(t, lb, tgt)
	if _, err := Import(t.Context(), ImportConfig{Source: lsrc, Mapping: lb.m, DryRun: true}); !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), "S3 only") {
		t.Errorf("import of a local export: %v", err)
	}
}

// The table an import creates has the mapping's key types and
// projections; a mapping with a local index cannot be imported.
func TestImportRequestKeyTypesAndLocalIndexes(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../testdata/transform/key_types_lsi_projection/mapping.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml, wantErr string
	}{
		{"with LSI1", string(data), "LSI1"},
		{"without it", strings.NewReplacer("  LSI1: { local: true, sort: LSI1SK, projection: KEYS_ONLY }\n", "",
			"      LSI1: { sk: \"AT#{taken_at}\" }\n", "").Replace(string(data)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("metrics.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			src := &Source{st: &s3Store{w: Where{Bucket: "b", Prefix: "p"}}, Manifest: &Manifest{MappingSHA256: m.Digest, Compression: "GZIP"}, sha: "0"}
			req, err := ImportRequest(src, m, "")
			if tc.wantErr != "" {
				if !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "run --from-export") {
					t.Errorf("ImportRequest: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			types := map[string]string{}
			for _, d := range req.TableCreationParameters.AttributeDefinitions {
				types[aws.ToString(d.AttributeName)] = string(d.AttributeType)
			}
			if types["SK"] != "N" || types["GSI1PK"] != "B" || types["GSI1SK"] != "N" || types["PK"] != "S" {
				t.Errorf("attribute types %v", types)
			}
			for _, ix := range req.TableCreationParameters.GlobalSecondaryIndexes {
				if aws.ToString(ix.IndexName) == "GSI1" && ix.Projection.ProjectionType != "KEYS_ONLY" {
					t.Errorf("GSI1 projection %v", ix.Projection.ProjectionType)
				}
			}
		})
	}
}

// Import from S3 takes at most 50,000 files: an export of more is refused
// before any request (import and import --dry-run alike), naming a
// --file-size that fits; export stops instead of writing file 50,001.
func TestImportFileLimit(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../testdata/transform/basic_entity/mapping.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("shop.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{capacity.MaxImportFiles, capacity.MaxImportFiles + 1} {
		src := &Source{st: &s3Store{w: Where{Bucket: "b", Prefix: "p"}}, sha: "0",
			Manifest: &Manifest{MappingSHA256: m.Digest, Compression: "GZIP", Files: make([]File, n), UncompressedBytes: int64(n) * (16 << 10)}}
		_, err := ImportRequest(src, m, "")
		if n <= capacity.MaxImportFiles {
			if err != nil {
				t.Errorf("%d files: %v", n, err)
			}
			continue
		}
		if !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), "the export has 50001 data files, and Import from S3 takes at most 50000 per import: export again with --file-size 1MiB or more") {
			t.Errorf("%d files: %v", n, err)
		}
		res, err := Import(t.Context(), ImportConfig{Source: src, Mapping: m, DryRun: true})
		if err == nil || res != nil {
			t.Errorf("import --dry-run of %d files: %v", n, err)
		}
	}
	w := &writeState{t: &Target{files: make([]File, capacity.MaxImportFiles), cfg: TargetConfig{FileSize: 16 << 10}}}
	if err := w.open(); err == nil || !strings.Contains(err.Error(), "Import from S3 takes at most 50000 files per import") {
		t.Errorf("opening file 50,001: %v", err)
	}
}
