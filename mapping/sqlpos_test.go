package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

// PositionalSQL numbers parameters as pgx's named arguments do and maps
// offsets of its result back, so that the database's error positions land
// on the mapping's text.
func TestPositionalSQL(t *testing.T) {
	t.Parallel()
	sql := "SELECT a FROM t WHERE id = @id AND x > @longer_name AND y = @id AND z = '@no' AND w = ww"
	out, back := mapping.PositionalSQL(sql)
	want := "SELECT a FROM t WHERE id = $1 AND x > $2 AND y = $1 AND z = '@no' AND w = ww"
	if out != want {
		t.Fatalf("PositionalSQL:\n got %s\nwant %s", out, want)
	}
	for _, tok := range []string{"SELECT", "$2", "AND y", "'@no'", "ww"} {
		orig := map[string]string{"$2": "@longer_name"}[tok]
		if orig == "" {
			orig = tok
		}
		if got := back(strings.Index(out, tok)); got != strings.Index(sql, orig) {
			t.Errorf("%s at %d maps to %d, want %d", tok, strings.Index(out, tok), got, strings.Index(sql, orig))
		}
	}
}

// An offset of a pattern's SQL is placed in the file: on the line of a
// plain scalar, and on its own line of a literal block.
func TestSQLOffsetPos(t *testing.T) {
	t.Parallel()
	text := `table: People
keys: { partition: PK, sort: SK }
entities:
  Employee:
    from: employees
    key: { pk: "EMP#{emp_id}", sk: EMP }
accessPatterns:
  one:
    get: { pk: "EMP#1", sk: EMP }
    sql: SELECT name FROM employees WHERE emp_id = 1
  block:
    get: { pk: "EMP#1", sk: EMP }
    sql: |
      SELECT name
        FROM employees
`
	m, err := mapping.Parse("m.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	one, block := m.AccessPatterns[0], m.AccessPatterns[1]
	if got := one.SQLOffsetPos(strings.Index(one.SQL, "employees")); got != (mapping.Pos{Line: 10, Col: 27}) {
		t.Errorf("plain scalar: %+v, want 10:27", got)
	}
	if got := block.SQLOffsetPos(strings.Index(block.SQL, "employees")); got != (mapping.Pos{Line: 15, Col: 14}) {
		t.Errorf("literal block: %+v, want 15:14", got)
	}
}
