package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// editedBookstore writes the bookstore mapping with replacements, given as
// old, new pairs; each replaces the first occurrence of old.
func editedBookstore(t *testing.T, oldnew ...string) string {
	t.Helper()
	src, err := os.ReadFile(bookstoreMapping)
	if err != nil {
		t.Fatal(err)
	}
	if len(oldnew)%2 != 0 {
		t.Fatalf("editedBookstore: %d arguments, want old, new pairs", len(oldnew))
	}
	edited := string(src)
	for i := 0; i < len(oldnew); i += 2 {
		old, new := oldnew[i], oldnew[i+1]
		next := strings.Replace(edited, old, new, 1)
		if next == edited {
			t.Fatalf("%q is not in %s", old, bookstoreMapping)
		}
		edited = next
	}
	path := filepath.Join(t.TempDir(), "bookstore.yaml")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// DynamoDB's naming rules are checked without a database.
func TestValidateNamesOffline(t *testing.T) {
	t.Parallel()
	path := editedBookstore(t, "table: Bookstore", "table: Book store")
	_, stderr, code := runCLI(t, "validate", "--mapping", path)
	want := path + `:13:8: table name "Book store": character ' ' at offset 4 is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')`
	if code != exitUsage || !strings.Contains(stderr, want+"\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and\n%s", code, stderr, want)
	}
}

// A key template that reads a nullable column is a warning: printed with
// its position, and validate still succeeds.
func TestValidateWarnsOnNullableKeyColumn(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	// The profile's sort key reads the nullable phone; the access pattern
	// that reads the profile, a GetItem of sk PROFILE, becomes a query of
	// the prefix, so that the mapping stays valid and only the warning is left.
	path := editedBookstore(t,
		`sk: "PROFILE" }`, `sk: "PROFILE#{phone}" }`,
		`get: { pk: "CUSTOMER#{id}", sk: PROFILE }`, `query: { pk: "CUSTOMER#{id}", sk: { begins_with: "PROFILE#" } }`)
	stdout, stderr, code := runCLI(t, "validate", "--mapping", path, "--pg", pg)
	want := path + `:23:55: warning: Customer key.sk: column "phone" of public.customers is nullable: NULL rows will be rejected (the item's key cannot be built); add NOT NULL to the column, or key on another column`
	if code != exitOK || strings.TrimSpace(stderr) != want || !strings.Contains(stdout, "ok (6 entities checked against the source catalog; 1 warning)") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant exit 0 and the warning\n%s", code, stdout, stderr, want)
	}

	stdout, stderr, code = runCLI(t, "validate", "--mapping", bookstoreMapping, "--pg", pg)
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "; 0 warnings)") {
		t.Errorf("the bookstore: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// posOf is "line:col" of the first occurrence of token in text.
func posOf(t *testing.T, text, token string) string {
	t.Helper()
	i := strings.Index(text, token)
	if i < 0 {
		t.Fatalf("%q is not in the text", token)
	}
	line := strings.Count(text[:i], "\n") + 1
	col := i - strings.LastIndex(text[:i], "\n")
	return fmt.Sprintf("%d:%d", line, col)
}

// validate --pg prepares every access pattern's SQL and params SQL, with
// the mapping's schema first on the search path (unqualified names mean
// hr's tables, as they do for prove), and reports each error at the place
// in the file the database points to, all at once, exit 2.
func TestValidatePatternSQL(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	migratetest.Exec(t, pg, `CREATE SCHEMA hr;
CREATE TABLE hr.employees (emp_id bigint PRIMARY KEY, name text NOT NULL, dept text NOT NULL);
INSERT INTO hr.employees VALUES (1, 'Ann', 'R&D')`)
	text := `table: People
schema: hr
keys: { partition: PK, sort: SK }
entities:
  Employee:
    from: employees
    key: { pk: "EMP#{emp_id}", sk: EMP }
    attributes: "*"
accessPatterns:
  employee:
    params: { id: employees.emp_id }
    get: { pk: "EMP#{id}", sk: EMP }
    sql: SELECT emp_id AS "empId", name FROM employees WHERE emp_id = @id
  misspelled:
    params: { id: employees.emp_id }
    get: { pk: "EMP#{id}", sk: EMP }
    sql: SELECT emp_id AS "empId", nmae FROM employees WHERE emp_id = @id
  blocks:
    params: |
      SELECT emp_id AS id
      FROM employes
    get: { pk: "EMP#{id}", sk: EMP }
    sql: |
      SELECT emp_id AS "empId",
             name
      FROM employees WHERE emp_id = @id AND salary > 0
`
	path := filepath.Join(t.TempDir(), "hr.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "validate", "--mapping", path, "--pg", pg)
	want := []string{
		path + ":" + posOf(t, text, "nmae") + `: access pattern misspelled: sql: column "nmae" does not exist (Perhaps you meant to reference the column "employees.name".)`,
		path + ":" + posOf(t, text, "employes") + `: access pattern blocks: params: relation "employes" does not exist`,
		path + ":" + posOf(t, text, "salary") + `: access pattern blocks: sql: column "salary" does not exist`,
		"migrate: 3 problems in the mapping; nothing was read or written",
	}
	if code != exitUsage || strings.TrimSpace(stderr) != strings.Join(want, "\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and\n%s", code, stderr, strings.Join(want, "\n"))
	}
	if strings.Contains(stderr, "aborted") {
		t.Errorf("one failing pattern poisoned the others:\n%s", stderr)
	}
}
