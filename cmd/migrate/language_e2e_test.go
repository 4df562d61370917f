package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/migratetest"
)

var languageSchema = readTestdata("../../testdata/language/schema.sql")

// languageMapping uses the language's newer parts at once: a number sort
// key, a local index, projections, a quoted column, copies into maps, keys
// over copied columns, template functions and encodings, where clauses on
// an entity and an index, empty: absent and as: string for NaN.
var languageMapping = readTestdata("../../testdata/language/mapping.yaml")

// TestLanguageEndToEnd runs the CLI on a source unlike the bookstore with a
// mapping that uses the language's newer parts: run --create-table exits 0,
// plan prints what the projections save, docs describes the design. What
// run and prove do with the mapping is the engine's to test
// (engine/language_test.go).
func TestLanguageEndToEnd(t *testing.T) {
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "lang")
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, languageSchema); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "lang.yaml")
	if err := os.WriteFile(file, []byte(languageMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--mapping", file, "--pg", pg, "--endpoint", endpoint, "--table", table}

	out, errOut, code := runCLI(t, append([]string{"run", "--create-table"}, common...)...)
	if code != 0 {
		t.Fatalf("run exited %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("migrate run:\n%s", out)

	out, errOut, code = runCLI(t, append([]string{"plan"}, common...)...)
	if code != 0 || !strings.Contains(out, "projection KEYS_ONLY saves") || !strings.Contains(out, "projection INCLUDE saves") {
		t.Errorf("plan exited %d; want the projections' savings:\n%s\n%s", code, out, errOut)
	}

	out, _, code = runCLI(t, "docs", file)
	for _, want := range []string{"| LSI1 | local | `PK` (S) | `LSI1SK` (S) | INCLUDE `amount` | Txn |", "`TAG#{tag\\|nfkc\\|lower}`", "absent when a value is empty", "only where `amount <> 0`"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("docs (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

// readTestdata reads a file of the shared test data (the engine's and the
// CLI's scenario tests run the same schema and mapping).
func readTestdata(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(data)
}
