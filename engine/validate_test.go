package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
)

// fieldValidateCase is one bad value: the Validate's error, the field it
// must name and a part of its message.
type fieldValidateCase struct {
	name       string
	err        error
	field, msg string
}

func checkFieldCases(t *testing.T, cases []fieldValidateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, engine.ErrConfig) {
				t.Errorf("not an ErrConfig: %v", tc.err)
			}
			got, ok := fieldErrors(tc.err)[tc.field]
			if !ok || !strings.Contains(got, tc.msg) {
				t.Errorf("problem of %s = %q, want %q; all: %v", tc.field, got, tc.msg, tc.err)
			}
		})
	}
}

func TestValidateTableNames(t *testing.T) {
	t.Parallel()
	checkFieldCases(t, []fieldValidateCase{
		{"run", engine.RunConfig{Table: "a b"}.Validate(), "Table", `run: Table: table name "a b": character ' ' at offset 1 is not allowed`},
		{"sync", engine.SyncConfig{Table: "ab"}.Validate(), "Table", `sync: Table: table name "ab" has 2 characters`},
		{"verify", engine.VerifyConfig{Sample: 1, CompareConfig: engine.CompareConfig{Table: "a/b"}}.Validate(), "Table", "verify: Table: table name"},
		{"plan", engine.PlanConfig{CompareConfig: engine.CompareConfig{Table: "x"}}.Validate(), "Table", "plan: Table: table name"},
		{"query table", engine.QueryInput{Table: "a b", PK: "x"}.Validate(), "Table", "query: Table: table name"},
		{"query index", engine.QueryInput{Table: "abc", Index: "ab", PK: "x"}.Validate(), "Index", `query: Index: index name "ab" has 2 characters`},
	})
	for _, name := range []string{"", "abc", "Orders_2024.v-1"} {
		if _, ok := fieldErrors(engine.RunConfig{Table: name}.Validate())["Table"]; ok {
			t.Errorf("RunConfig.Validate finds a problem with table %q", name)
		}
		if _, ok := fieldErrors(engine.QueryInput{Table: "abc", Index: name, PK: "x"}.Validate())["Index"]; ok {
			t.Errorf("QueryInput.Validate finds a problem with index %q", name)
		}
	}
}

func TestQueryInputValidate(t *testing.T) {
	t.Parallel()
	q := func(f func(*engine.QueryInput)) error {
		in := engine.QueryInput{Table: "orders", PK: "CUSTOMER#1"}
		f(&in)
		return in.Validate()
	}
	checkFieldCases(t, []fieldValidateCase{
		{"limit", q(func(in *engine.QueryInput) { in.Limit = -1 }), "Limit", "query: Limit must not be negative (0 = no limit)"},
		{"attributes", q(func(in *engine.QueryInput) { in.Attributes = []string{"a", "", "b"} }), "Attributes", `query: Attributes has an empty name: "a,,b"`},
		{"prefix and range", q(func(in *engine.QueryInput) { in.SKPrefix, in.SKFrom, in.SKTo = "a", "b", "c" }), "SKPrefix", "query: SKPrefix and SKFrom/SKTo exclude each other"},
		{"from alone", q(func(in *engine.QueryInput) { in.SKFrom = "b" }), "SKFrom", "query: SKFrom and SKTo go together"},
		{"to alone", q(func(in *engine.QueryInput) { in.SKTo = "b" }), "SKFrom", "query: SKFrom and SKTo go together"},
		{"equals and prefix", q(func(in *engine.QueryInput) { in.SKEquals, in.SKPrefix = "a", "b" }), "SKEquals", "excludes SKPrefix"},
	})
	// Every problem at once.
	if fe := fieldErrors(q(func(in *engine.QueryInput) { in.Limit, in.Attributes, in.SKFrom = -1, []string{""}, "x" })); len(fe) != 3 {
		t.Errorf("want 3 problems at once, got %v", fe)
	}
	for _, f := range []func(*engine.QueryInput){
		func(*engine.QueryInput) {},
		func(in *engine.QueryInput) { in.SKPrefix, in.Limit, in.Attributes = "ORDER#", 10, []string{"a"} },
		func(in *engine.QueryInput) { in.SKFrom, in.SKTo = "a", "b" },
		func(in *engine.QueryInput) { in.PK, in.PKs = "", []string{"A#1", "A#2"} },
	} {
		if err := q(f); err != nil {
			t.Errorf("Validate of a good query = %v", err)
		}
	}
	if err := (engine.QueryInput{}).Validate(); !errors.Is(err, engine.ErrConfig) || len(fieldErrors(err)) != 0 {
		t.Errorf("an empty query = %v, want missing table and key as ErrConfig, no FieldError", err)
	}
}

// Not parallel: it sets the SDK's S3 endpoint variables.
func TestExportConfigValidate(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "")
	x := func(f func(*engine.ExportConfig)) error {
		c := engine.ExportConfig{To: "s3://my-bucket/exports"}
		f(&c)
		return c.Validate()
	}
	checkFieldCases(t, []fieldValidateCase{
		{"compression", x(func(c *engine.ExportConfig) { c.Compression = "lz4" }), "Compression", `export: Compression must be gzip, zstd or none, not "lz4"`},
		{"file size", x(func(c *engine.ExportConfig) { c.FileSize = 1 << 10 }), "FileSize", `export: FileSize must be a size of at least 16KiB (smaller files hold a few items each and only bring the export nearer Import from S3's limit of 50000 files), such as 64MiB, not "1KiB"`},
		{"file size bytes", x(func(c *engine.ExportConfig) { c.FileSize = 1000 }), "FileSize", `not "1000 bytes"`},
		{"part size", x(func(c *engine.ExportConfig) { c.S3.PartSize = 4 << 20 }), "S3.PartSize", "export: S3.PartSize must be from 5 to 5120 (MiB, S3's limits of a part)"},
		{"part size big", x(func(c *engine.ExportConfig) { c.S3.PartSize = 6 << 30 }), "S3.PartSize", "must be from 5 to 5120"},
		{"upload concurrency", x(func(c *engine.ExportConfig) { c.S3.Concurrency = -1 }), "S3.Concurrency", "export: S3.Concurrency must be at least 1"},
		{"on duplicate", x(func(c *engine.ExportConfig) { c.OnDuplicate = "merge" }), "OnDuplicate", `export: OnDuplicate must be "fail" or "skip", not "merge"`},
		{"bucket", x(func(c *engine.ExportConfig) { c.To = "s3://Bad_Bucket/p" }), "To", `export: To: bucket name "Bad_Bucket" is not one S3 allows`},
		{"no bucket", x(func(c *engine.ExportConfig) { c.To = "s3://" }), "To", `export: To: export: "s3://" has no bucket`},
		{"scheme", x(func(c *engine.ExportConfig) { c.To = "ftp://x/y" }), "To", "only local directories and s3://bucket/prefix are supported"},
		{"endpoint", x(func(c *engine.ExportConfig) { c.S3.Endpoint = "ftp://x" }), "S3.Endpoint", `export: S3.Endpoint must be an absolute http:// or https:// URL, such as http://localhost:8000, not "ftp://x"`},
		{"region", x(func(c *engine.ExportConfig) { c.S3.Region = "a b" }), "S3.Region", `export: S3.Region must be a region name such as eu-west-1, not "a b"`},
		{"s3 only", engine.CheckExportPlace("import", "/tmp/dir", engine.ExportS3{}, true), "To", `import: To must be s3://bucket/prefix, not "/tmp/dir"`},
	})
	// Every problem at once.
	if fe := fieldErrors(x(func(c *engine.ExportConfig) { c.Compression, c.FileSize, c.OnDuplicate, c.To = "x", 1, "x", "s3://AB" })); len(fe) != 4 {
		t.Errorf("want 4 problems at once, got %v", fe)
	}
	if err := (engine.ExportConfig{}).Validate(); !errors.Is(err, engine.ErrConfig) || len(fieldErrors(err)) != 0 {
		t.Errorf("an export without To = %v, want ErrConfig and no FieldError", err)
	}
	for _, f := range []func(*engine.ExportConfig){
		func(*engine.ExportConfig) {},
		func(c *engine.ExportConfig) {
			c.To, c.Compression, c.FileSize, c.OnDuplicate = "/tmp/out", "zstd", 16<<10, "skip"
			c.S3 = engine.ExportS3{Endpoint: "http://localhost:9000", Region: "eu-west-1", PartSize: 5 << 20, Concurrency: 1}
		},
	} {
		if err := x(f); err != nil {
			t.Errorf("Validate of a good export = %v", err)
		}
	}
	t.Run("environment endpoint", func(t *testing.T) {
		const secret = "hunter2secret"
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://u:"+secret+"@%zz")
		err := x(func(*engine.ExportConfig) {})
		var fe *engine.FieldError
		if !errors.As(err, &fe) || fe.Field != "S3.Endpoint" || fe.Env != "AWS_ENDPOINT_URL_S3" || strings.Contains(err.Error(), secret) {
			t.Errorf("a bad $AWS_ENDPOINT_URL_S3 = %v, want a FieldError of S3.Endpoint from it, without the password", err)
		}
		// A directory does not use S3: the environment is not checked.
		if err := x(func(c *engine.ExportConfig) { c.To = "/tmp/out" }); err != nil {
			t.Errorf("an export to a directory checks the S3 endpoint variable: %v", err)
		}
	})
}

func TestProveAndCutoverConfigValidate(t *testing.T) {
	t.Parallel()
	pc := func(f func(*engine.ProveConfig)) error {
		var c engine.ProveConfig
		f(&c)
		return c.Validate()
	}
	cc := func(f func(*engine.CutoverConfig)) error {
		var c engine.CutoverConfig
		f(&c)
		return c.Validate()
	}
	checkFieldCases(t, []fieldValidateCase{
		{"samples", pc(func(c *engine.ProveConfig) { c.Samples = -1 }), "Samples", "prove: Samples must be at least 1"},
		{"missing", pc(func(c *engine.ProveConfig) { c.Missing = -2 }), "Missing", "prove: Missing must be -1 (none), 0 (the default, 3) or more"},
		{"max details", pc(func(c *engine.ProveConfig) { c.MaxDetails = -1 }), "MaxDetails", "prove: MaxDetails must not be negative"},
		{"shards", pc(func(c *engine.ProveConfig) { c.Shards = map[string]int{"GSI1": 0} }), "Shards", "prove: Shards of GSI1 must be at least 1, not 0"},
		{"prove table", pc(func(c *engine.ProveConfig) { c.Table = "a b" }), "Table", "prove: Table: table name"},
		{"prove source", pc(func(c *engine.ProveConfig) { c.Postgres = "postgres://u:p@h:x/db" }), "Postgres", "prove: Postgres is not a PostgreSQL URL"},
		{"quiet", cc(func(c *engine.CutoverConfig) { c.Quiet = -1 }), "Quiet", "cutover: Quiet must be positive"},
		{"sample", cc(func(c *engine.CutoverConfig) { c.Sample = 1.5 }), "Sample", "cutover: Sample must be in (0, 1], e.g. 0.01 for 1%"},
		{"sample negative", cc(func(c *engine.CutoverConfig) { c.Sample = -1 }), "Sample", "must be in (0, 1]"},
		{"wait", cc(func(c *engine.CutoverConfig) { c.WaitInactive = -1 }), "WaitInactive", "cutover: WaitInactive must be positive"},
		{"cutover table", cc(func(c *engine.CutoverConfig) { c.Sync.Table = "x" }), "Table", "cutover: Table: table name"},
		{"cutover source", cc(func(c *engine.CutoverConfig) { c.Sync.Postgres = "postgres://u:p@h:x/db" }), "Postgres", "cutover: Postgres"},
	})
	if fe := fieldErrors(pc(func(c *engine.ProveConfig) { c.Samples, c.Missing, c.MaxDetails = -1, -2, -1 })); len(fe) != 3 {
		t.Errorf("want 3 problems at once, got %v", fe)
	}
	if fe := fieldErrors(pc(func(c *engine.ProveConfig) { c.Samples, c.Missing, c.MaxDetails, c.Table = 10, -1, 5, "orders" })); len(fe) != 0 {
		t.Errorf("good prove values have problems: %v", fe)
	}
	if err := cc(func(*engine.CutoverConfig) {}); err != nil {
		t.Errorf("a default cutover = %v", err)
	}
	if err := cc(func(c *engine.CutoverConfig) { c.Quiet, c.Sample, c.WaitInactive = 1, 0.01, 1 }); err != nil {
		t.Errorf("a good cutover = %v", err)
	}
}

func TestSyncConfigValidateNames(t *testing.T) {
	t.Parallel()
	checkFieldCases(t, []fieldValidateCase{
		{"slot", engine.SyncConfig{Slot: "Bad-Slot", Publication: "p"}.Validate(), "Slot", `sync: Slot name "Bad-Slot": use 1 to 63 lower-case letters, digits and underscores`},
		{"publication", engine.SyncConfig{Slot: "s", Publication: "bad pub"}.Validate(), "Publication", `sync: Publication name "bad pub"`},
		{"status every", engine.SyncConfig{StatusEvery: -1}.Validate(), "StatusEvery", "sync: StatusEvery must be positive"},
	})
	// Unset names are defaulted from the table: not a value's problem.
	fe := fieldErrors(engine.SyncConfig{}.Validate())
	for _, f := range []string{"Slot", "Publication", "StatusEvery"} {
		if _, ok := fe[f]; ok {
			t.Errorf("an unset %s is a FieldError: %v", f, fe[f])
		}
	}
	if fe := fieldErrors(engine.SyncConfig{Slot: "migrate_orders", Publication: "pub_1", StatusEvery: 1}.Validate()); fe["Slot"] != "" || fe["Publication"] != "" || fe["StatusEvery"] != "" {
		t.Errorf("good names have problems: %v", fe)
	}
}

func TestDraftConfigValidate(t *testing.T) {
	t.Parallel()
	d := func(f func(*engine.DraftConfig)) error {
		var c engine.DraftConfig
		f(&c)
		return c.Validate()
	}
	checkFieldCases(t, []fieldValidateCase{
		{"embed max", d(func(c *engine.DraftConfig) { c.EmbedMax = -1 }), "EmbedMax", "init: EmbedMax must be at least 1"},
		{"tables", d(func(c *engine.DraftConfig) { c.Tables = []string{"a", ""} }), "Tables", `init: Tables has an empty name: "a,"`},
		{"table", d(func(c *engine.DraftConfig) { c.Table = "ab" }), "Table", `init: Table: table name "ab" has 2 characters`},
		{"source", d(func(c *engine.DraftConfig) { c.Postgres = "postgres://u:p@h:x/db" }), "Postgres", "init: Postgres is not a PostgreSQL URL"},
	})
	if fe := fieldErrors(d(func(c *engine.DraftConfig) { c.EmbedMax, c.Tables, c.Table = -1, []string{""}, "x" })); len(fe) != 3 {
		t.Errorf("want 3 problems at once, got %v", fe)
	}
	for _, f := range []func(*engine.DraftConfig){
		func(*engine.DraftConfig) {},
		func(c *engine.DraftConfig) {
			c.Postgres, c.Table, c.EmbedMax, c.Tables = "postgres://u:p@localhost/db", "shop", 3, []string{"orders"}
		},
	} {
		if err := d(f); err != nil {
			t.Errorf("Validate of a good draft config = %v", err)
		}
	}
}

func TestWriterConcurrencyValidate(t *testing.T) {
	t.Parallel()
	checkFieldCases(t, []fieldValidateCase{
		{"run", engine.RunConfig{Writer: load.Config{Concurrency: -1}}.Validate(), "Writer.Concurrency", "run: Writer.Concurrency must be at least 1"},
		{"sync", engine.SyncConfig{Writer: load.Config{Concurrency: -1}}.Validate(), "Writer.Concurrency", "sync: Writer.Concurrency must be at least 1"},
	})
	for _, n := range []int{0, 1, 64} {
		if _, ok := fieldErrors(engine.RunConfig{Writer: load.Config{Concurrency: n}}.Validate())["Writer.Concurrency"]; ok {
			t.Errorf("concurrency %d is a problem", n)
		}
	}
}
