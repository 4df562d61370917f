package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// contacts stands in for every service a command could call and counts
// what reaches it: TCP connections to a Postgres URL and HTTP requests to
// an endpoint (DynamoDB and S3 alike).
type contacts struct {
	pg, http atomic.Int32
	pgURL    string // with a password, which no message may print
	endpoint string
}

const contactsPassword = "s3cr3t-pw"

func newContacts(t *testing.T) *contacts {
	t.Helper()
	c := &contacts{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.pg.Add(1)
			conn.Close()
		}
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c.http.Add(1)
		http.Error(w, "recorded", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	c.pgURL = "postgres://migrator:" + contactsPassword + "@" + ln.Addr().String() + "/shop?sslmode=disable"
	c.endpoint = srv.URL
	return c
}

// args replaces {pg}, {endpoint} and {dir} in args.
func (c *contacts) args(dir string, args []string) []string {
	out := make([]string, len(args))
	r := strings.NewReplacer("{pg}", c.pgURL, "{endpoint}", c.endpoint, "{dir}", dir)
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// Bad command-line values exit 2 with a message naming the flag, before
// any call: the Postgres URL and the endpoints point at listeners that
// count what reaches them, and nothing may. No message prints the
// password of the URL.
func TestUsageErrorsComeFirst(t *testing.T) {
	t.Parallel()
	m := bookstoreMapping
	run := func(extra ...string) []string {
		return append([]string{"run", m, "--pg", "{pg}", "--endpoint", "{endpoint}", "--state", "{dir}/.migrate/s.json"}, extra...)
	}
	cmp := func(cmd string, extra ...string) []string {
		return append([]string{cmd, m, "--pg", "{pg}", "--endpoint", "{endpoint}"}, extra...)
	}
	sync := func(extra ...string) []string {
		return append([]string{"sync", m, "--pg", "{pg}", "--endpoint", "{endpoint}", "--state", "{dir}/.migrate/s.json"}, extra...)
	}
	export := func(extra ...string) []string {
		return append([]string{"export", m, "--pg", "{pg}", "--to", "{dir}/out", "--s3-endpoint", "{endpoint}", "--state", "{dir}/.migrate/e.json"}, extra...)
	}
	imp := func(extra ...string) []string {
		return append([]string{"import", m, "--from", "s3://exports/x", "--endpoint", "{endpoint}", "--s3-endpoint", "{endpoint}"}, extra...)
	}
	query := func(extra ...string) []string {
		return append([]string{"query", "--table", "Bookstore", "--pk", "CUSTOMER#1", "--endpoint", "{endpoint}"}, extra...)
	}
	prove := func(extra ...string) []string {
		return append([]string{"prove", m, "--pg", "{pg}", "--endpoint", "{endpoint}"}, extra...)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run bad table", run("--table", "bad name!"), `run: --table: table name "bad name!": character ' ' at offset 3 is not allowed`},
		{"run short table", run("--table", "T"), `run: --table: table name "T" has 1 characters; DynamoDB needs 3 to 255`},
		{"run endpoint not a URL", run("--endpoint", "notaurl"), `run: --endpoint must be an absolute http:// or https:// URL, such as http://localhost:8000, not "notaurl"`},
		{"run endpoint without scheme", run("--endpoint", "localhost:8000"), "run: --endpoint must be an absolute http:// or https:// URL"},
		{"run endpoint ftp", run("--endpoint", "ftp://host/"), "run: --endpoint must be an absolute http:// or https:// URL"},
		{"run endpoint without host", run("--endpoint", "http://:8000"), "run: --endpoint must be an absolute"},
		{"run endpoint password", run("--endpoint", "http://u:"+contactsPassword+"@host:bad"), "run: --endpoint must be an absolute http:// or https:// URL, such as http://localhost:8000, not the value given (not shown"},
		{"run region", run("--region", "us east 1"), `run: --region must be a region name such as eu-west-1, not "us east 1"`},
		{"run region slash", run("--region", "eu-west-1/x"), "run: --region must be a region name"},
		{"run pg port", run("--pg", "postgres://migrator:"+contactsPassword+"@127.0.0.1:port/shop"), "run: --pg is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) or key=value string: invalid port (the value is not shown"},
		{"run pg not a URL", run("--pg", "notaurl"), "run: --pg is not a PostgreSQL URL"},
		{"run pg bad sslmode", run("--pg", "postgres://migrator:"+contactsPassword+"@127.0.0.1/shop?sslmode=sometimes"), "sslmode is invalid"},
		{"run max-wcu NaN", run("--max-wcu", "NaN"), "run: --max-wcu must be a finite number, not NaN"},
		{"run min-wcu Inf", run("--min-wcu", "Inf"), "run: --min-wcu must be a finite number, not +Inf"},
		{"run min above max", run("--max-wcu", "100", "--min-wcu", "200"), "run: --min-wcu must be between 0 and --max-wcu"},
		{"run negative max-batch-elapsed", run("--max-batch-elapsed", "-1s"), "run: --max-batch-elapsed must not be negative"},
		{"run bad duration", run("--max-batch-elapsed", "10"), `invalid argument "10" for "--max-batch-elapsed"`},
		{"run concurrency", run("--concurrency", "0"), "run: --concurrency must be at least 1"},
		{"run on-error", run("--on-error", "ignore"), `run: --on-error must be "fail" or "reject", not "ignore"`},
		{"run on-duplicate", run("--on-duplicate", "merge"), `run: --on-duplicate must be "fail" or "skip", not "merge"`},
		{"run readers", run("--readers", "0"), "run: --readers and --range-rows must be at least 1"},
		{"run files", run("--from-export", "{dir}/exp", "--files", "3/2"), `run: --files wants k/N with 1 <= k <= N, such as 2/8, not "3/2"`},
		{"run files without export", run("--files", "1/2"), "run: --files applies only with --from-export"},
		{"run export bucket", run("--from-export", "s3://Bad_Bucket/x"), `run: --from-export: bucket name "Bad_Bucket" is not one S3 allows`},
		{"run export scheme", run("--from-export", "gs://bucket/x"), "only local directories and s3://bucket/prefix are supported"},
		{"run s3 endpoint", run("--from-export", "s3://exports/x", "--s3-endpoint", "minio:9000"), "run: --s3-endpoint must be an absolute http:// or https:// URL"},
		{"run temp-dir", run("--temp-dir", "{dir}/no/such/dir"), "run: --temp-dir \"" + "{dir}/no/such/dir\" is not an existing directory"},
		{"run summary-json", run("--summary-json", "{dir}/no/such/s.json"), "run: --summary-json \"{dir}/no/such/s.json\": directory \"{dir}/no/such\" does not exist"},
		{"run reject-file", run("--on-error", "reject", "--reject-file", "{dir}/no/r.jsonl"), "run: --reject-file"},
		{"run resume and fresh", run("--resume", "--fresh"), "run: --resume and --fresh exclude each other"},

		{"plan table", cmp("plan", "--table", "bad name!"), "plan: --table: table name"},
		{"plan endpoint", cmp("plan", "--endpoint", "notaurl"), "plan: --endpoint must be an absolute"},
		{"plan compare", cmp("plan", "--compare", "both"), `plan: --compare must be scan or get, not "both"`},
		{"plan segments", cmp("plan", "--segments", "0"), "plan: --segments must be between 1 and 1000000"},
		{"plan write-rate NaN", cmp("plan", "--write-rate", "NaN"), "plan: --write-rate must be a finite number"},
		{"plan import-rate Inf", cmp("plan", "--import-rate", "+Inf"), "plan: --import-rate must be a finite number"},
		{"plan import-overhead", cmp("plan", "--import-overhead", "-1m"), "plan: --import-overhead must not be negative"},
		{"plan format", cmp("plan", "--format", "yaml"), `plan: --format must be text, markdown or json, not "yaml"`},
		{"plan color", cmp("plan", "--color", "sometimes"), "plan: --color must be auto, always or never"},
		{"plan html dir", cmp("plan", "--html", "{dir}/no/p.html"), "plan: --html"},
		{"plan sort-memory", cmp("plan", "--sort-memory", "0"), "plan: --sort-memory must be at least 1"},
		{"verify sample NaN", cmp("verify", "--sample", "NaN"), "verify: --sample must be in (0, 1]"},
		{"verify sample", cmp("verify", "--sample", "1.5"), "verify: --sample must be in (0, 1]"},
		{"verify region", cmp("verify", "--region", "-x"), "verify: --region must be a region name"},
		{"verify max-details", cmp("verify", "--max-details", "-1"), "verify: --max-details must not be negative"},
		{"prune endpoint", cmp("prune", "--endpoint", "notaurl"), "prune: --endpoint must be an absolute"},
		{"prune table", cmp("prune", "--table", "x/y"), "prune: --table: table name"},

		{"sync table", sync("--table", "bad name!"), "sync: --table: table name"},
		{"sync endpoint", sync("--endpoint", "notaurl"), "sync: --endpoint must be an absolute"},
		{"sync max-batch-elapsed", sync("--max-batch-elapsed", "-5s"), "sync: --max-batch-elapsed must not be negative"},
		{"sync min above max", sync("--max-wcu", "10", "--min-wcu", "20"), "sync: --min-wcu must be between 0 and --max-wcu (0 = the default, 25)"},
		{"sync max-wcu NaN", sync("--max-wcu", "NaN"), "sync: --max-wcu must be a finite number"},
		{"sync slot", sync("--slot", "Bad-Slot"), "--slot"},
		{"sync on-truncate", sync("--on-truncate", "ignore"), "sync: --on-truncate must be"},
		{"sync status-every", sync("--status-every", "0s"), "sync: --status-every must be positive"},
		{"sync max-batch", sync("--max-batch", "0"), "sync: --max-batch must be at least 1 (the default is 20000)"},

		{"export bucket", export("--to", "s3://B/x"), `export: --to: bucket name "B" is not one S3 allows`},
		{"export no bucket", export("--to", "s3:///x"), "has no bucket"},
		{"export part-size", export("--part-size", "6000"), "export: --part-size must be from 5 to 5120"},
		{"export file-size", export("--file-size", "64XB"), "export: --file-size must be a size"},
		{"export compression", export("--compression", "lz4"), "export: --compression must be gzip, zstd or none"},
		{"export s3 endpoint", export("--to", "s3://exports/x", "--s3-endpoint", "notaurl"), "export: --s3-endpoint must be an absolute"},
		{"export region", export("--region", "a b"), "export: --region must be a region name"},
		{"export table", export("--table", "bad name!"), "export: --table: table name"},

		{"import local dir", imp("--from", "{dir}/exp"), `import: --from must be s3://bucket/prefix, not "{dir}/exp"`},
		{"import bucket", imp("--from", "s3://a_b/x"), "import: --from: bucket name"},
		{"import endpoint", imp("--endpoint", "notaurl"), "import: --endpoint must be an absolute"},
		{"import s3 endpoint", imp("--s3-endpoint", "notaurl"), "import: --s3-endpoint must be an absolute"},
		{"import poll", imp("--poll", "0s"), "import: --poll must be positive"},
		{"import table", imp("--table", "bad name!"), "import: --table: table name"},

		{"query table", query("--table", "bad name!"), "query: --table: table name"},
		{"query index", query("--index", "G"), `query: --index: index name "G" has 1 characters`},
		{"query limit", query("--limit", "-1"), "query: --limit must not be negative"},
		{"query endpoint", query("--endpoint", "notaurl"), "query: --endpoint must be an absolute"},
		{"query output", query("--output", "csv"), "query: --output must be json or dynamodb-json"},
		{"query attributes", query("--attributes", "PK,,SK"), `query: --attributes has an empty name: "PK,,SK"`},

		{"prove samples", prove("--samples", "0"), "prove: --samples must be at least 1"},
		{"prove missing", prove("--missing", "-1"), "prove: --missing must not be negative"},
		{"prove shards", prove("--shards", "GSI2=0"), "prove: --shards wants INDEX=N"},
		{"prove endpoint", prove("--endpoint", "notaurl"), "prove: --endpoint must be an absolute"},
		{"prove table", prove("--table", "bad name!"), "prove: --table: table name"},
		{"prove pg", prove("--pg", "postgres://u:"+contactsPassword+"@h:x/db"), "prove: --pg is not a PostgreSQL URL"},

		{"validate pg", []string{"validate", m, "--pg", "postgres://u:" + contactsPassword + "@h:x/db"}, "validate: --pg is not a PostgreSQL URL"},
		{"docs output", []string{"docs", m, "--output", "{dir}/no/d.md"}, "docs: --output"},
		{"init table", []string{"init", "--pg", "{pg}", "--table", "bad name!", "-o", "{dir}/m.yaml"}, "init: --table: table name"},
		{"init schema", []string{"init", "--pg", "{pg}", "--schema", "", "-o", "{dir}/m.yaml"}, "init: --schema must name a schema"},
		{"init tables", []string{"init", "--pg", "{pg}", "--tables", "orders,", "-o", "{dir}/m.yaml"}, "init: --tables has an empty name"},
		{"init pg", []string{"init", "--pg", "host=h password=" + contactsPassword + " port=x", "-o", "{dir}/m.yaml"}, "init: the source URL (--pg, $MIGRATE_PG_URL or $DATABASE_URL) is not a PostgreSQL URL"},
		{"seed scale", []string{"sample", "seed", "--pg", "{pg}", "--scale", "0"}, "scale"},
		{"seed pg", []string{"sample", "seed", "--pg", "notaurl"}, "sample seed: the source URL"},
		{"log format", []string{"--log-format", "xml", "run", m, "--pg", "{pg}"}, "--log-format must be text or json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newContacts(t)
			dir := t.TempDir()
			start := time.Now()
			_, stderr, code := runCLI(t, c.args(dir, tc.args)...)
			want := strings.ReplaceAll(tc.want, "{dir}", dir)
			if code != exitUsage || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
			}
			if n, h := c.pg.Load(), c.http.Load(); n+h > 0 {
				t.Errorf("%d Postgres connections and %d HTTP requests before the usage error; want none", n, h)
			}
			if strings.Contains(stderr, contactsPassword) {
				t.Errorf("the password leaked into the message:\n%s", stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, ".migrate")); err == nil {
				t.Errorf("a refused command left %s", filepath.Join(dir, ".migrate"))
			}
			// Not a performance target: nothing was waited for.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v to refuse", d)
			}
		})
	}
}

// Without a region, and without an endpoint (a local engine needs none),
// the error names the flag and the variable, exit 2, before any call.
// Not parallel: it clears the AWS environment of the process.
func TestNoRegionNamesFlag(t *testing.T) {
	for _, env := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"} {
		t.Setenv(env, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	c := newContacts(t)
	for _, args := range [][]string{
		{"run", bookstoreMapping, "--pg", c.pgURL, "--state", filepath.Join(t.TempDir(), "s.json")},
		{"plan", bookstoreMapping, "--pg", c.pgURL},
		{"query", "--table", "Bookstore", "--pk", "X"},
		{"import", bookstoreMapping, "--from", "s3://exports/x"},
	} {
		_, stderr, code := runCLI(t, args...)
		want := "migrate: no AWS region for DynamoDB: pass --region, or set AWS_REGION"
		if args[0] == "import" {
			want = "migrate: no AWS region for S3: pass --region, or set AWS_REGION"
		}
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and %q", args[0], code, stderr, want)
		}
	}
	if n, h := c.pg.Load(), c.http.Load(); n+h > 0 {
		t.Errorf("%d Postgres connections and %d HTTP requests before the region error; want none", n, h)
	}
}

// A run that is refused, or fails, leaves no lock file beside its state
// file, and no state directory it created for nothing.
func TestRefusedRunLeavesNoLockFile(t *testing.T) {
	t.Parallel()
	c := newContacts(t)
	unfinished := func(t *testing.T, state string) {
		data, err := os.ReadFile(bookstoreMapping)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
			t.Fatal(err)
		}
		st := `{"version":1,"mapping":"x","mappingSHA256":"` + sha256Hex(data) + `","table":"Bookstore","complete":false,"sources":[]}`
		if err := os.WriteFile(state, []byte(st), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		setup    func(t *testing.T, state string)
		pg       func(t *testing.T) string
		mapping  func(t *testing.T) string
		extra    []string
		code     int
		want     string
		keepsDir bool // the state directory existed before
	}{
		{name: "nothing to resume", extra: []string{"--resume"}, code: exitUsage, want: "nothing to resume"},
		{name: "unfinished state file", setup: unfinished, code: exitUsage, want: "--resume", keepsDir: true},
		{name: "unreachable source", code: exitFailure, want: "connect to postgres"},
		{name: "mapping refused by the catalog", code: exitUsage, want: `column "ctiy" does not exist`,
			pg: func(t *testing.T) string {
				pg := migratetest.PostgresURL(t)
				if err := sqlschema.Up(t.Context(), pg); err != nil {
					t.Fatal(err)
				}
				return pg
			},
			mapping: func(t *testing.T) string {
				src, err := os.ReadFile(bookstoreMapping)
				if err != nil {
					t.Fatal(err)
				}
				bad := strings.Replace(string(src), "shipCity: city,", "shipCity: ctiy,", 1)
				path := filepath.Join(t.TempDir(), "bookstore.yaml")
				if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
					t.Fatal(err)
				}
				return path
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), ".migrate")
			state := filepath.Join(dir, "Bookstore.state.json")
			if tc.setup != nil {
				tc.setup(t, state)
			}
			pg, m := c.pgURL, bookstoreMapping
			if tc.pg != nil {
				pg = tc.pg(t)
			}
			if tc.mapping != nil {
				m = tc.mapping(t)
			}
			args := append([]string{"run", m, "--pg", pg, "--endpoint", c.endpoint, "--state", state}, tc.extra...)
			_, stderr, code := runCLI(t, args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(state + ".lock"); !os.IsNotExist(err) {
				t.Errorf("the run left its lock file %s.lock (%v)", state, err)
			}
			if _, err := os.Stat(dir); tc.keepsDir == os.IsNotExist(err) {
				t.Errorf("state directory after the run: %v; want it kept: %v", err, tc.keepsDir)
			}
		})
	}
}

// An endpoint from the environment, which the SDK uses when --endpoint is
// not given, is checked as the flag is, and named in the message; the flag
// wins over it. Not parallel: it sets the AWS environment of the process.
func TestEndpointFromEnvironment(t *testing.T) {
	for _, env := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"} {
		t.Setenv(env, "")
	}
	t.Setenv("AWS_REGION", "us-east-1")
	c := newContacts(t)
	dir := t.TempDir()
	cases := []struct {
		env, value string
		args       []string
		want       string
	}{
		{"AWS_ENDPOINT_URL_DYNAMODB", "notaurl", []string{"run", bookstoreMapping, "--pg", c.pgURL, "--state", filepath.Join(dir, "s.json")},
			`run: $AWS_ENDPOINT_URL_DYNAMODB must be an absolute http:// or https:// URL, such as http://localhost:8000, not "notaurl"`},
		{"AWS_ENDPOINT_URL", "ftp://host", []string{"plan", bookstoreMapping, "--pg", c.pgURL},
			`plan: $AWS_ENDPOINT_URL must be an absolute http:// or https:// URL`},
		{"AWS_ENDPOINT_URL_S3", "minio:9000", []string{"export", bookstoreMapping, "--pg", c.pgURL, "--to", "s3://exports/x", "--state", filepath.Join(dir, "e.json")},
			`export: $AWS_ENDPOINT_URL_S3 must be an absolute http:// or https:// URL`},
	}
	for _, tc := range cases {
		t.Setenv(tc.env, tc.value)
		_, stderr, code := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s=%s %s: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.env, tc.value, tc.args[0], code, stderr, tc.want)
		}
		t.Setenv(tc.env, "")
	}
	if n, h := c.pg.Load(), c.http.Load(); n+h > 0 {
		t.Errorf("%d Postgres connections and %d HTTP requests before the usage errors; want none", n, h)
	}

	// --endpoint wins: the variable is not used, so not checked.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "notaurl")
	// The listener answers no request: give up retrying soon.
	_, stderr, code := runCLI(t, "query", "--table", "Bookstore", "--pk", "X", "--endpoint", c.endpoint, "--max-batch-elapsed", "2s", "--call-timeout", "1s")
	if code == exitUsage || strings.Contains(stderr, "AWS_ENDPOINT_URL") || c.http.Load() == 0 {
		t.Errorf("query --endpoint with a bad $AWS_ENDPOINT_URL_DYNAMODB: exit %d, %d requests to --endpoint, stderr:\n%s", code, c.http.Load(), stderr)
	}
}
