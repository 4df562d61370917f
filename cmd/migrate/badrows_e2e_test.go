package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/migratetest"
)

const badrowsMapping = "../../testdata/badrows.yaml"

// hostile is a source database with the tables of testdata/badrows.yaml.
type hostile struct {
	pg, endpoint string
	conn         *pgx.Conn
}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	h := &hostile{pg: migratetest.PostgresURL(t), endpoint: migratetest.DynamoDBEndpoint(t)}
	conn, err := pgx.Connect(t.Context(), h.pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(t.Context()) })
	h.conn = conn
	h.exec(t, `CREATE TABLE widgets (id int8 PRIMARY KEY, code text, amount numeric, ratio float8, body text, data jsonb);
		CREATE TABLE lefts (id int8 PRIMARY KEY, p text NOT NULL, q text NOT NULL);
		CREATE TABLE rights (id int8 PRIMARY KEY, p text NOT NULL, q text NOT NULL)`)
	return h
}

func (h *hostile) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := h.conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Rows of each class of bad row, by name; the good rows around them are
// added by the tests.
var badRows = map[string]string{
	"null key column":    `INSERT INTO widgets VALUES (2, NULL, 1, 1, 'x')`,
	"key separator":      `INSERT INTO widgets VALUES (3, 'a#b', 1, 1, 'x')`,
	"40-digit numeric":   `INSERT INTO widgets VALUES (4, 'd', 1234567890123456789012345678901234567891, 1, 'x')`,
	"NaN float":          `INSERT INTO widgets VALUES (5, 'e', 1, 'NaN', 'x')`,
	"item over 400 KB":   `INSERT INTO widgets VALUES (6, 'f', 1, 1, repeat('x', 500000))`,
	"sort key too long":  `INSERT INTO widgets VALUES (7, repeat('k', 1100), 1, 1, 'x')`,
	"duplicate item key": `INSERT INTO rights VALUES (1, 'x', 'y-z')`, // the same key as lefts row 1
	"nested too deep":    `INSERT INTO widgets VALUES (9, 'i', 1, 1, 'x', (repeat('[', 40) || '1' || repeat(']', 40))::jsonb)`,
}

const goodRows = `INSERT INTO widgets VALUES (1, 'a', 1.5, 0.5, 'x', '{"a": [1]}'), (8, 'h', 2, 2, 'y', NULL);
	INSERT INTO lefts VALUES (1, 'x+y', 'z'), (2, 'm', 'n');
	INSERT INTO rights VALUES (3, 'o', 'p')`

// TestBadRowsReject puts one row of every class into the source and runs
// with --on-error reject: each becomes exactly one line in the reject file,
// naming entity, table, key and column; the good rows are written; the
// exit code follows --max-rejects.
func TestBadRowsReject(t *testing.T) {
	h := newHostile(t)
	h.exec(t, goodRows)
	for _, sql := range badRows {
		h.exec(t, sql)
	}
	dir := t.TempDir()
	table := migratetest.TableName(t, "hostile")
	rejects := filepath.Join(dir, "rejects.jsonl")
	args := []string{"run", "--mapping", badrowsMapping, "--pg", h.pg, "--endpoint", h.endpoint, "--table", table,
		"--quiet", "--state", filepath.Join(dir, "state.json"), "--on-error", "reject", "--reject-file", rejects}

	// Too many rejects: the run goes to the end, then exits 1.
	out, errOut, code := runCLI(t, append(args, "--create-table", "--max-rejects", "7")...)
	if code != exitFailure || !strings.Contains(errOut, "8 rejects, more than --max-rejects 7 allows; see "+rejects) {
		t.Errorf("with --max-rejects 7: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if st, err := checkpoint.Load(filepath.Join(dir, "state.json")); err != nil || !st.Complete {
		t.Errorf("state after a run with too many rejects: %+v, %v; want complete", st, err)
	}

	type line struct {
		Entity, SourceTable, SourceKey, Column, Reason, Stage, Kind, ItemKey string
		Row                                                                  struct{ Values map[string]any }
	}
	want := []struct {
		entity, key, column, stage, kind, reason string
	}{
		{"Widget", "id=2", "code", "transform", "", `SK "CODE#{code}": value is NULL`},
		{"Widget", "id=3", "code", "transform", "", `contains the key separator "#"`},
		{"Widget", "id=4", "amount", "transform", "", "has 40 significant digits; DynamoDB numbers hold at most 38"},
		{"Widget", "id=5", "ratio", "transform", "", "NaN cannot be stored in DynamoDB"},
		{"Widget", "id=6", "", "load", "item-too-large", "over DynamoDB's 400 KB (409600-byte) item limit"},
		{"Widget", "id=7", "", "load", "key-too-long", `sort key attribute "SK" is 1105 bytes, over DynamoDB's 1024-byte limit`},
		{"Right", "id=1", "", "load", "duplicate-key", "duplicate key: public.lefts row id=1 (entity Left) has the same key"},
		{"Widget", "id=9", "data", "transform", "", "the value nests 40 levels of lists and maps, 41 with the item around it; DynamoDB allows 32"},
	}
	check := func(t *testing.T) {
		t.Helper()
		f, err := os.Open(rejects)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got := map[string]line{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 4<<20)
		n := 0
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("reject line %d is not JSON: %v", n+1, err)
			}
			got[l.Entity+" "+l.SourceKey] = l
			n++
		}
		if n != len(want) || len(got) != len(want) {
			t.Errorf("%d reject lines (%d distinct), want %d: %v", n, len(got), len(want), slices.Collect(mapsKeys(got)))
		}
		for _, w := range want {
			l, ok := got[w.entity+" "+w.key]
			if !ok {
				t.Errorf("no reject line for %s %s", w.entity, w.key)
				continue
			}
			wantTable := "public.widgets"
			if w.entity == "Right" {
				wantTable = "public.rights"
			}
			if l.SourceTable != wantTable || l.Column != w.column || l.Stage != w.stage || l.Kind != w.kind || !strings.Contains(l.Reason, w.reason) {
				t.Errorf("reject line for %s %s: %+v\nwant table %s column %q stage %s kind %q reason ~ %q", w.entity, w.key, l, wantTable, w.column, w.stage, w.kind, w.reason)
			}
			if l.Row.Values["id"] == nil {
				t.Errorf("reject line for %s %s has no row values", w.entity, w.key)
			}
		}
		if l := got["Widget id=4"]; l.Row.Values["amount"] != "1234567890123456789012345678901234567891" {
			t.Errorf("the 40-digit numeric is not kept exactly: %v", l.Row.Values["amount"])
		}
		if l := got["Widget id=6"]; len(l.Row.Values["body"].(string)) != 500000 {
			t.Errorf("the big body is not in the reject line whole")
		}
		if l := got["Widget id=2"]; l.Row.Values["code"] != nil {
			t.Errorf("NULL came out as %v", l.Row.Values["code"])
		}
		ddb := migratetest.DynamoDBClient(t, h.endpoint)
		if items := scanCanonical(t, ddb, table); len(items) != 5 {
			t.Errorf("%d items written, want the 5 good ones:\n%s", len(items), strings.Join(items, "\n"))
		}
	}
	check(t)

	// plan and verify describe the rows run cannot write the same way: as
	// problems with their reason, never as items to create or missing.
	for _, verb := range []string{"plan", "verify"} {
		out, errOut, _ := runCLI(t, verb, "--mapping", badrowsMapping, "--pg", h.pg, "--endpoint", h.endpoint, "--table", table, "--format", "json")
		var doc struct {
			Summary  struct{ Create, Missing int64 }
			Problems []struct{ Kind, Origin, Message string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s --format json: %v\n%s\n%s", verb, err, out, errOut)
		}
		kinds := map[string]string{}
		for _, p := range doc.Problems {
			kinds[p.Origin] = p.Kind
		}
		if kinds["public.widgets id=6"] != "item-too-large" || kinds["public.widgets id=7"] != "key-too-long" {
			t.Errorf("%s problems: %+v; want id=6 item-too-large and id=7 key-too-long", verb, doc.Problems)
		}
		if doc.Summary.Create != 0 || doc.Summary.Missing != 0 {
			t.Errorf("%s counts the unwritable rows as items: %+v", verb, doc.Summary)
		}
	}

	// Enough rejects allowed: exit 0, and the same lines (the file is
	// rewritten by a fresh run, not appended to).
	out, errOut, code = runCLI(t, append(args, "--fresh", "--max-rejects", "8")...)
	if code != exitOK || !strings.Contains(errOut, "8 rejects (no more than --max-rejects allows), see "+rejects) {
		t.Errorf("with --max-rejects 8: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "TOTAL") || !hasRow(out, "Widget", "public.widgets", "9", "2", "7") {
		t.Errorf("summary table:\n%s", out)
	}
	check(t)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestBadRowsFail runs each class of bad row alone with the default
// --on-error fail: exit 1, a message naming entity, table, source key and
// column, and a checkpoint that covers the good rows before the bad one.
func TestBadRowsFail(t *testing.T) {
	h := newHostile(t)
	want := map[string][]string{
		"null key column":   {"bad row: entity Widget, table public.widgets, row id=2 column code:", "value is NULL"},
		"key separator":     {"entity Widget, table public.widgets, row id=3 column code:", `contains the key separator "#"`},
		"40-digit numeric":  {"entity Widget, table public.widgets, row id=4 column amount:", "40 significant digits"},
		"NaN float":         {"entity Widget, table public.widgets, row id=5 column ratio:", "NaN cannot be stored"},
		"item over 400 KB":  {`bad row: entity Widget, table public.widgets, row id=6 (item PK="WIDGET#6" SK="CODE#f"): item is 500`, "over DynamoDB's 400 KB"},
		"sort key too long": {"entity Widget, table public.widgets, row id=7 (item ", "over DynamoDB's 1024-byte limit"},
		"nested too deep":   {"bad row: entity Widget, table public.widgets, row id=9 column data:", "nests 40 levels of lists and maps"},
		// Duplicate-key detection: the second item names both source rows.
		"duplicate item key": {`bad row: entity Right, table public.rights, row id=1 (item PK="PAIR#1" SK="T#x+y-z"): duplicate key: public.lefts row id=1 (entity Left) has the same key`},
	}
	table := migratetest.TableName(t, "hostile")
	for name, sql := range badRows {
		t.Run(name, func(t *testing.T) {
			h.exec(t, "TRUNCATE widgets, lefts, rights")
			h.exec(t, goodRows)
			h.exec(t, sql)
			state := filepath.Join(t.TempDir(), "state.json")
			out, errOut, code := runCLI(t, "run", "--mapping", badrowsMapping, "--pg", h.pg, "--endpoint", h.endpoint, "--table", table,
				"--create-table", "--quiet", "--state", state)
			if code != exitFailure {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errOut)
			}
			for _, w := range append(want[name], "--on-error reject", "resume with:\n  migrate run --mapping "+badrowsMapping) {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			defer func() {
				// The hint is one complete command: following it once
				// finishes the run, the bad row in the reject file.
				lines := strings.Split(strings.TrimSpace(errOut), "\n")
				hint := shellWords(t, strings.TrimSpace(lines[len(lines)-1]))
				if len(hint) < 2 || hint[0] != "migrate" || !slices.Contains(hint, "--on-error") || !slices.Contains(hint, "--resume") && !slices.Contains(hint, "--fresh") {
					t.Fatalf("the last line is not the reject command: %q", lines[len(lines)-1])
				}
				for i := range hint {
					if hint[i] == "<your --pg URL>" {
						hint[i] = h.pg
					}
				}
				rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
				out, errOut, code := runCLI(t, append(hint[1:], "--reject-file", rejects)...)
				if code != exitOK {
					t.Errorf("following the hint exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				if data, _ := os.ReadFile(rejects); len(data) == 0 {
					t.Errorf("following the hint wrote no reject line")
				}
			}()
			if strings.Contains(errOut, h.pg) {
				t.Errorf("stderr shows the database URL:\n%s", errOut)
			}
			st, err := checkpoint.Load(state)
			if err != nil {
				t.Fatal(err)
			}
			// The rows before the bad one were written and acknowledged:
			// the checkpoint is on them.
			wantAfter := map[string]int64{"public.widgets": 1}
			if name == "duplicate item key" {
				wantAfter = map[string]int64{"public.widgets": 8, "public.lefts": 2}
			}
			if name == "nested too deep" {
				wantAfter = map[string]int64{"public.widgets": 8}
			}
			// A bad item found by the loader stops reading some time after
			// the reader passed it: rows of later tables read meanwhile may
			// be written and checkpointed, which is right. Only the bad
			// row's table is pinned then.
			loadStage := name == "item over 400 KB" || name == "sort key too long"
			for _, s := range st.Sources {
				var got int64
				if len(s.After) == 1 {
					got, _ = s.After[0].(int64)
				}
				if loadStage && s.Name != "public.widgets" {
					continue
				}
				if got != wantAfter[s.Name] || st.Complete {
					t.Errorf("checkpoint of %s: after %v (complete %v), want %d", s.Name, s.After, st.Complete, wantAfter[s.Name])
				}
			}
		})
	}
}

// shellWords splits a command line printed for a POSIX shell: words
// separated by spaces, single-quoted words as they are.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '"':
			t.Fatalf("double quotes in %q: the test only follows single-quoted commands", line)
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// hasRow reports whether a line of a rendered table starts with these cells.
func hasRow(table string, cells ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return true
		}
	}
	return false
}
