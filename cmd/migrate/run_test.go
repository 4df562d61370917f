package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// TestRunUsage pins the exit code and message of each misuse of run's
// flags, and of each state-file situation that must stop a run before it
// reads or writes anything. None of them needs a database: the URL given
// points nowhere.
func TestRunUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mappingFile := filepath.Join(dir, "m.yaml")
	mappingText := []byte("table: Tab1\nkeys: { partition: PK, sort: SK }\nentities:\n  A:\n    from: a\n    key: { pk: \"A#{id}\", sk: \"A\" }\n    attributes: { id: id }\n")
	if err := os.WriteFile(mappingFile, mappingText, 0o600); err != nil {
		t.Fatal(err)
	}
	state := func(name string, s *checkpoint.State) string {
		path := filepath.Join(dir, name)
		if s != nil {
			if err := checkpoint.Save(path, s); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	hash := checkpoint.Hash(mappingText)
	unfinished := state("unfinished.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: hash, Table: "Tab1",
		Sources: []checkpoint.Source{{Name: "public.a", After: checkpoint.Position{int64(5)}, Rows: 5}}})
	otherMapping := state("other.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: checkpoint.Hash([]byte("old")), Table: "Tab1"})
	complete := state("complete.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: hash, Table: "Tab1", Complete: true})
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte("{"), 0o600)
	missing := state("missing.json", nil)

	// Nothing listens on port 1: any attempt to connect fails, which the
	// cases below must never reach (or, for the last ones, must reach).
	const pg = "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1"
	base := []string{"run", "--mapping", mappingFile, "--pg", pg}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"on-error value", []string{"--on-error", "skip"}, exitUsage, []string{`--on-error must be "fail" or "reject", not "skip"`}},
		{"on-duplicate value", []string{"--on-duplicate", "keep"}, exitUsage, []string{`--on-duplicate must be "fail" or "skip"`}},
		{"reject file without reject", []string{"--reject-file", "x.jsonl"}, exitUsage, []string{"apply only with --on-error reject"}},
		{"max rejects without reject", []string{"--max-rejects", "3"}, exitUsage, []string{"apply only with --on-error reject"}},
		{"max rejects below -1", []string{"--on-error", "reject", "--max-rejects", "-2"}, exitUsage, []string{"--max-rejects must be -1"}},
		{"negative max-wcu", []string{"--max-wcu", "-5"}, exitUsage, []string{"--max-wcu must not be negative"}},
		{"negative max-batch-elapsed", []string{"--max-batch-elapsed", "-1s"}, exitUsage, []string{"--max-batch-elapsed must not be negative"}},
		{"bad duration", []string{"--max-batch-elapsed", "soon"}, exitUsage, []string{"invalid argument \"soon\""}},
		{"resume and fresh", []string{"--resume", "--fresh"}, exitUsage, []string{"--resume and --fresh exclude each other"}},
		{"resume without state file", []string{"--resume", "--state", missing}, exitUsage, []string{"there is no state file " + missing, "run without --resume"}},
		{"unfinished state without a choice", []string{"--state", unfinished}, exitUsage, []string{unfinished + ` holds an unfinished run into table "Tab1" (5 rows done`, "pass --resume to continue it, or --fresh to start over"}},
		{"unfinished state of another mapping", []string{"--state", otherMapping}, exitUsage, []string{"that --resume could not continue", "the mapping changed", "--resume", "--fresh"}},
		{"resume with a changed mapping", []string{"--resume", "--state", otherMapping}, exitUsage, []string{"cannot continue the run recorded in " + otherMapping, "the mapping changed since the state file was written", "pass --fresh"}},
		{"resume into another table", []string{"--resume", "--state", unfinished, "--table", "Tab2"}, exitUsage, []string{`the state file is for another target table: it records a migration into "Tab1", not "Tab2"`}},
		{"garbage state", []string{"--state", garbage}, exitUsage, []string{"is not a state file", "pass --fresh"}},
		{"resume a complete run", []string{"--resume", "--state", complete}, exitOK, []string{"nothing to resume: the run recorded in " + complete + " completed", "--fresh"}},
		// These pass every check and then fail to connect: exit 1, and the
		// state files are left as they were.
		{"complete state starts a new run", []string{"--state", complete}, exitFailure, []string{"connect to postgres 127.0.0.1:1/db"}},
		{"fresh over garbage", []string{"--fresh", "--state", garbage}, exitFailure, []string{"connect to postgres"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := execute(t.Context(), append(append([]string{}, base...), tt.args...), &out, &errOut)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if strings.Contains(errOut.String()+out.String(), "secret") {
				t.Errorf("the output shows the password:\n%s%s", out.String(), errOut.String())
			}
		})
	}
	if st, err := checkpoint.Load(unfinished); err != nil || st.Rows() != 5 {
		t.Errorf("the unfinished state file changed: %+v, %v", st, err)
	}
}

func TestResumeCommand(t *testing.T) {
	t.Parallel()
	cmd := newRunCmd(&globals{})
	if err := cmd.ParseFlags([]string{"--mapping", "my map.yaml", "--pg", "postgres://u:pw@h/db", "--endpoint", "http://127.0.0.1:8000",
		"--create-table", "--on-error", "reject", "--max-wcu", "500", "--quiet", "--fresh", "--concurrency", "4"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ from, want string }{
		{"flag", `migrate run --mapping 'my map.yaml' --endpoint http://127.0.0.1:8000 --pg '<your --pg URL>' --concurrency 4 --max-wcu 500 --on-error reject --quiet --state .migrate/T.state.json --resume`},
		{"MIGRATE_PG_URL", `migrate run --mapping 'my map.yaml' --endpoint http://127.0.0.1:8000 --pg "$MIGRATE_PG_URL" --concurrency 4 --max-wcu 500 --on-error reject --quiet --state .migrate/T.state.json --resume`},
	} {
		if got := resumeCommand(cmd.Flags(), tt.from, ".migrate/T.state.json"); got != tt.want {
			t.Errorf("from %s:\n got %s\nwant %s", tt.from, got, tt.want)
		}
	}
	if got := shellQuote("it's"); got != `'it'\''s'` {
		t.Errorf("shellQuote = %s", got)
	}
}

// TestWatermark acknowledges items out of order and checks that the
// position only moves over rows whose items are all acknowledged, that rows
// without items count at once, and that reject lines reach the file in
// read order, only once their row is done.
func TestWatermark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rf, err := openRejectFile(filepath.Join(dir, "r.jsonl"), -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWatermark([]string{"s.a", "s.b"}, rf)
	line := func(e, key string) []rejectLine {
		return []rejectLine{{Entity: e, SourceTable: "s.a", SourceKey: key, Reason: "bad", Row: json.RawMessage("null")}}
	}
	r1 := w.add("s.a", []any{int64(1)}, "id=1", nil, []string{"X", "Y"}, nil)
	r2 := w.add("s.a", []any{int64(2)}, "id=2", nil, nil, line("X", "id=2")) // all rejected: done at once, but behind r1
	r3 := w.add("s.a", []any{int64(3)}, "id=3", nil, []string{"X"}, line("Y", "id=3"))
	_ = r2
	pos := func() []any { return w.snapshot().sources[0].After }
	if p := pos(); p != nil {
		t.Fatalf("position %v before any ack", p)
	}
	w.ack(r3)
	w.ack(r1)
	if p := pos(); p != nil {
		t.Fatalf("position %v with row 1 half acknowledged", p)
	}
	if n := rejectLines(t, rf); n != 0 {
		t.Fatalf("%d reject lines written before their rows were done", n)
	}
	w.ack(r1)
	m := w.snapshot()
	if p := m.sources[0].After; len(p) != 1 || p[0] != int64(3) {
		t.Fatalf("position %v, want [3]", p)
	}
	s := m.sources[0]
	if s.Rows != 3 || s.Done || m.complete {
		t.Errorf("rows %d done %v complete %v; want 3, false, false", s.Rows, s.Done, m.complete)
	}
	want := []checkpoint.Counts{{Entity: "X", Items: 2, Rejects: 1}, {Entity: "Y", Items: 1, Rejects: 1}}
	if !jsonEqual(s.Entities, want) {
		t.Errorf("counts %+v, want %+v", s.Entities, want)
	}
	if n := rejectLines(t, rf); n != 2 || m.rejectBytes == 0 {
		t.Errorf("%d reject lines, %d bytes recorded; want 2 lines", n, m.rejectBytes)
	}

	// The next source starts: the first is read entirely, and done.
	r4 := w.add("s.b", []any{"k"}, "k=k", &extract.Row{Values: []any{"k"}}, []string{"Z"}, nil)
	if m := w.snapshot(); !m.sources[0].Done || m.sources[1].Done {
		t.Errorf("done = %v, %v; want true, false", m.sources[0].Done, m.sources[1].Done)
	}
	// An item the writer refused (its Fail callback) becomes a reject line.
	w.reject(r4, "Z", line("Z", "k=k")[0])
	w.finishReading()
	if m := w.snapshot(); !m.complete || m.sources[1].Rows != 1 || m.sources[1].Entities[0].Rejects != 1 || m.sources[1].Entities[0].Items != 0 {
		t.Errorf("after the late reject: %+v", m)
	}
	if w.rejectTotal() != 3 {
		t.Errorf("rejectTotal = %d, want 3", w.rejectTotal())
	}
}

// TestWatermarkConcurrentAcks acknowledges many rows' items from several
// goroutines in random order: the watermark ends on the last row.
func TestWatermarkConcurrentAcks(t *testing.T) {
	t.Parallel()
	w := newWatermark([]string{"s.a"}, nil)
	const rows = 5000
	var marks []*rowMark
	for i := range rows {
		marks = append(marks, w.add("s.a", []any{int64(i)}, "", nil, []string{"A", "B", "C"}[:1+i%3], nil))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := len(marks) - 1 - g; i >= 0; i -= 4 {
				for range 1 + i%3 {
					w.ack(marks[i])
				}
			}
		})
	}
	wg.Wait()
	w.finishReading()
	m := w.snapshot()
	if !m.complete || m.sources[0].Rows != rows || m.sources[0].After[0] != int64(rows-1) {
		t.Errorf("after all acks: complete %v rows %d after %v", m.complete, m.sources[0].Rows, m.sources[0].After)
	}
}

func rejectLines(t *testing.T, rf *rejectFile) int {
	t.Helper()
	data, err := os.ReadFile(rf.path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestRejectFileResume: a resumed run keeps the lines of the rows done and
// drops the lines written after the checkpoint.
func TestRejectFileResume(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	rf, err := openRejectFile(path, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rf.write(rejectLine{Entity: "A", SourceKey: "id=1"})
	n, err := rf.sync()
	if err != nil {
		t.Fatal(err)
	}
	rf.write(rejectLine{Entity: "A", SourceKey: "id=2"}) // after the checkpoint
	rf.close()
	rf, err = openRejectFile(path, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	rf.write(rejectLine{Entity: "A", SourceKey: "id=3"})
	rf.close()
	data, _ := os.ReadFile(path)
	if got := string(data); !strings.Contains(got, `"id=1"`) || strings.Contains(got, `"id=2"`) || !strings.Contains(got, `"id=3"`) || strings.Count(got, "\n") != 2 {
		t.Errorf("reject file after resume:\n%s", got)
	}
}

// TestRowJSON: the row of a reject line keeps every value exactly.
func TestRowJSON(t *testing.T) {
	t.Parallel()
	col := func(name string, k pgkind.Kind) mapping.Column {
		return mapping.Column{Name: name, Type: pgkind.Type{Kind: k}}
	}
	src := &transform.Source{Name: "public.t", Query: extract.Query{
		Schema: "public", Table: "t",
		Columns: []mapping.Column{col("id", pgkind.Int), col("n", pgkind.Numeric), col("f", pgkind.Float), col("b", pgkind.Bytea),
			col("ts", pgkind.Timestamptz), col("j", pgkind.JSON), col("inf", pgkind.Date), col("nul", pgkind.Text), col("arr", pgkind.Array)},
		Joins:  []extract.Join{{Schema: "public", Table: "p", Columns: []mapping.Column{col("name", pgkind.Text)}}},
		Embeds: []extract.Embed{{Schema: "public", Table: "c", Columns: []mapping.Column{col("x", pgkind.Int)}}},
	}}
	row := extract.Row{Values: []any{
		int64(math.MaxInt64), extract.Decimal("1234567890123456789012345678901234567890.10"), math.NaN(), []byte{0, 0xff},
		time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC), extract.JSON(`{"a":[1,2.50]}`), extract.Infinity{Sign: -1}, nil, []any{int64(1), nil},
		"parent",
		[]extract.Row{{Values: []any{int64(7)}}},
	}}
	got := string(rowJSON(src, row))
	want := `{"values":{"arr":[1,null],"b":"AP8=","f":"NaN","id":9223372036854775807,"inf":"-infinity","j":{"a":[1,2.50]},"n":"1234567890123456789012345678901234567890.10","nul":null,"ts":"2024-01-02T03:04:05.0000006Z"},` +
		`"joined":[{"table":"public.p","values":{"name":"parent"}}],"embedded":[{"table":"public.c","rows":[{"x":7}]}]}`
	if got != want {
		t.Errorf("rowJSON:\n got %s\nwant %s", got, want)
	}
}
