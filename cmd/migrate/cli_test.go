package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"run without mapping", []string{"run", "--pg", "postgres://x@127.0.0.1:1/db"}, "--mapping is required"},
		{"run without pg", []string{"run", "--mapping", bookstoreMapping}, "--pg is required"},
		{"unknown flag", []string{"run", "--mapping", bookstoreMapping, "--bogus"}, "unknown flag: --bogus"},
		{"unknown command", []string{"migrat"}, "unknown command"},
		{"validate without mapping", []string{"validate"}, "--mapping is required"},
		{"query without pk", []string{"query", "--table", "Tbl"}, "--pk is required"},
		{"missing mapping file", []string{"validate", "--mapping", "no/such/file.yaml"}, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
	_, stderr, _ := runCLI(t, "run", "--mapping", bookstoreMapping, "--bogus")
	if !strings.Contains(stderr, "Usage:") {
		t.Errorf("a flag error should print usage, got:\n%s", stderr)
	}
}

// An unreachable source fails fast, exit 1, without printing the password.
func TestUnreachablePostgresFailsFast(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, stderr, code := runCLI(t, "run", "--mapping", bookstoreMapping,
		"--pg", "postgres://migrator:s3cr3t-pw@127.0.0.1:1/shop?sslmode=disable", "--endpoint", "http://127.0.0.1:1")
	elapsed := time.Since(start)
	if code != exitFailure || !strings.Contains(stderr, "connect to postgres 127.0.0.1:1/shop") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "s3cr3t-pw") {
		t.Errorf("the password leaked into the error: %s", stderr)
	}
	// Not a performance target: a hang detector for the connect timeout.
	if elapsed > 20*time.Second {
		t.Errorf("took %v to report an unreachable server", elapsed)
	}
	t.Logf("failed after %v: %s", elapsed.Round(time.Millisecond), strings.TrimSpace(stderr))
}

// An unreachable target fails before anything is read, exit 1.
func TestUnreachableDynamoDBFailsFast(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	for _, create := range []bool{false, true} {
		args := []string{"run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", "http://127.0.0.1:1", "--table", "Tbl"}
		if create {
			args = append(args, "--create-table")
		}
		start := time.Now()
		_, stderr, code := runCLI(t, args...)
		elapsed := time.Since(start)
		if code != exitFailure || !strings.Contains(stderr, "127.0.0.1:1") || !strings.Contains(stderr, "connection refused") {
			t.Errorf("create=%v: exit %d, stderr:\n%s", create, code, stderr)
		}
		if elapsed > 20*time.Second { // hang detector, see above
			t.Errorf("create=%v: took %v", create, elapsed)
		}
		t.Logf("create=%v failed after %v", create, elapsed.Round(time.Millisecond))
	}
}

func TestMissingTableWithoutCreate(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", endpoint, "--table", migratetest.TableName(t, "missing"))
	if code != exitFailure || !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "--create-table") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// validate says which entities' keys are proven unique, and why or why not.
func TestValidateKeyProof(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "validate", "--mapping", bookstoreMapping, "--pg", pg)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"keys: proven unique for every entity; a run keeps no record of them",
		"OrderLine     unique:     the key contains the unique key (order_id, book_id) of public.order_items",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("validate output does not say\n  %s\n%s", want, stdout)
		}
	}
	// Placeholders without the separator between them: valid, not proven.
	src, err := os.ReadFile(bookstoreMapping)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), `sk: "BOOK#{book_id:12}" }`, `sk: "BOOK{book_id}{quantity}" }`, 1)
	if edited == string(src) {
		t.Fatal("the test's edit did not apply to the mapping")
	}
	path := filepath.Join(t.TempDir(), "bookstore.yaml")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, "validate", "--mapping", path, "--pg", pg)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `OrderLine     not proven: in "BOOK{book_id}{quantity}" two placeholders meet without the separator "#"`) {
		t.Errorf("validate output:\n%s", stdout)
	}
}

// validate reports every problem of a mapping in one pass, each at its
// position with a suggestion, exits 2, and reads nothing but the catalog:
// two misspelled columns (one in a key) and an entry in an undeclared index
// give exactly three problems, with no knock-on (the key "missing the
// primary key", the pattern on the index "without an entity"); run says
// the same before it reads anything.
func TestValidateMisspelledColumn(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(bookstoreMapping)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "shipCity: city,", "shipCity: ctiy,", 1)
	bad = strings.Replace(bad, `pk: "BOOK#{book_id}", sk: "BOOK" }`, `pk: "BOOK#{bookid}", sk: "BOOK" }`, 1)
	bad = strings.Replace(bad, `GSI1: { pk: "EMAIL#{email}", sk: "CUSTOMER" }`, `GSI3: { pk: "EMAIL#{email}", sk: "CUSTOMER" }`, 1)
	if strings.Count(bad, "ctiy")+strings.Count(bad, "bookid")+strings.Count(bad, "GSI3") != 3 {
		t.Fatal("the test's edits did not apply to the mapping")
	}
	path := filepath.Join(t.TempDir(), "bookstore.yaml")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "validate", "--mapping", path, "--pg", pg)
	if code != exitUsage || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
	}
	want := strings.Join([]string{
		path + `:40:7: index "GSI3" is not declared under indexes (did you mean "GSI1"?)`,
		path + `:53:33: Order copy from addresses attribute "shipCity": column "ctiy" does not exist in table public.addresses (did you mean "city"?)`,
		path + `:87:22: Book key.pk: column "bookid" does not exist in table public.books (did you mean "book_id"?)`,
		`migrate: 3 problems in the mapping; nothing was read or written`,
	}, "\n") + "\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	// run checks the mapping first, and says the same.
	_, stderr, code = runCLI(t, "run", "--mapping", path, "--pg", pg, "--endpoint", "http://127.0.0.1:1", "--table", "Nothing")
	if code != exitUsage || stderr != want {
		t.Errorf("run: exit %d, stderr:\n%s\nwant exit 2 and:\n%s", code, stderr, want)
	}
}

// The mapping file can be the argument or $MIGRATE_MAPPING instead of
// --mapping; given twice differently, it is a usage error.
func TestMappingArgument(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		code int
		want string
	}{
		{"argument", []string{"validate", bookstoreMapping}, "", exitOK, "syntax ok (6 entities)"},
		{"environment", []string{"validate"}, bookstoreMapping, exitOK, "syntax ok (6 entities)"},
		{"flag wins over the environment", []string{"validate", "--mapping", bookstoreMapping}, "no/such.yaml", exitOK, "syntax ok"},
		{"twice", []string{"validate", "other.yaml", "--mapping", bookstoreMapping}, "", exitUsage, "the mapping is given twice"},
		{"two arguments", []string{"validate", bookstoreMapping, bookstoreMapping}, "", exitUsage, "accepts at most 1 arg"},
		{"none", []string{"validate"}, "", exitUsage, "--mapping is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MIGRATE_MAPPING", tc.env)
			t.Setenv("MIGRATE_PG_URL", "")
			t.Setenv("DATABASE_URL", "")
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// --log-format json writes one JSON object a line.
func TestLogFormatJSON(t *testing.T) {
	dir := t.TempDir()
	m, _ := filepath.Abs(bookstoreMapping)
	data, _ := os.ReadFile(m)
	state := filepath.Join(dir, "s.json")
	if err := os.WriteFile(state, []byte(`{"version":1,"mapping":"x","mappingSHA256":"`+sha256Hex(data)+`","table":"Bookstore","complete":true,"sources":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "--log-format", "json", "run", m, "--state", state, "--pg", "postgres://u@127.0.0.1:1/db?connect_timeout=1")
	if code != exitFailure {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	// Every line is a JSON object, the fatal error included.
	jsonLines := func(errOut string) (errors []string) {
		t.Helper()
		for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil || v["msg"] == nil || v["level"] == nil || v["time"] == nil {
				t.Errorf("not a JSON log line: %s (%v)", line, err)
			}
			if v["level"] == "ERROR" {
				errors = append(errors, v["msg"].(string))
			}
		}
		return errors
	}
	errs := jsonLines(errOut)
	if !strings.Contains(errOut, `"msg":"the run recorded in the state file is complete; starting a new run"`) {
		t.Errorf("no JSON log lines:\n%s", errOut)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "migrate: ") {
		t.Errorf("the fatal error is not one JSON ERROR record: %q\n%s", errs, errOut)
	}
	// A mapping problem (before any command runs) and a flag error, too.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\ntable: T\nentitiez: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI(t, "--log-format", "json", "validate", bad)
	if errs := jsonLines(errOut); code != exitUsage || len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), "bad.yaml:") {
		t.Errorf("bad mapping: exit %d, errors %q\n%s", code, errs, errOut)
	}
	_, errOut, code = runCLI(t, "--log-format", "json", "run", "--no-such-flag")
	if errs := jsonLines(errOut); code != exitUsage || len(errs) == 0 || !strings.Contains(errs[0], "unknown flag: --no-such-flag") {
		t.Errorf("flag error: exit %d, errors %q\n%s", code, errs, errOut)
	}
	if _, errOut, code := runCLI(t, "--log-format", "xml", "validate", m); code != exitUsage || !strings.Contains(errOut, "--log-format must be text or json") {
		t.Errorf("--log-format xml: exit %d\n%s", code, errOut)
	}
}

// Flags are offered only where they work: prune has no --compare.
func TestPruneOffersNoCompare(t *testing.T) {
	t.Parallel()
	_, errOut, code := runCLI(t, "prune", bookstoreMapping, "--compare", "get", "--pg", "postgres://u@127.0.0.1:1/db")
	if code != exitUsage || !strings.Contains(errOut, "unknown flag: --compare") {
		t.Errorf("prune --compare: exit %d\n%s", code, errOut)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A file size that makes files of a few items each is refused, naming the
// minimum, before anything is read.
func TestExportRefusesTinyFiles(t *testing.T) {
	t.Parallel()
	_, errOut, code := runCLI(t, "export", bookstoreMapping, "--pg", "postgres://u@127.0.0.1:1/db", "--to", t.TempDir(), "--file-size", "1KiB")
	if code != exitUsage || !strings.Contains(errOut, "--file-size must be a size of at least 16KiB") || !strings.Contains(errOut, "50000 files") {
		t.Errorf("export --file-size 1KiB: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "plan", bookstoreMapping, "--pg", "postgres://u@127.0.0.1:1/db", "--file-size", "1KiB")
	if code != exitUsage || !strings.Contains(errOut, "plan: --file-size must be a size of at least 16KiB") {
		t.Errorf("plan --file-size 1KiB: exit %d\n%s", code, errOut)
	}
}
