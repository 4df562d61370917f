package engine

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
	line := func(e, key string) []RejectLine {
		return []RejectLine{{Entity: e, SourceTable: "s.a", SourceKey: key, Reason: "bad", Row: json.RawMessage("null")}}
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
	if n := RejectLines(t, rf); n != 0 {
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
	if n := RejectLines(t, rf); n != 2 || m.rejectBytes == 0 {
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

func RejectLines(t *testing.T, rf *rejectFile) int {
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
	rf.write(RejectLine{Entity: "A", SourceKey: "id=1"})
	n, err := rf.sync()
	if err != nil {
		t.Fatal(err)
	}
	rf.write(RejectLine{Entity: "A", SourceKey: "id=2"}) // after the checkpoint
	rf.close()
	rf, err = openRejectFile(path, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	rf.write(RejectLine{Entity: "A", SourceKey: "id=3"})
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
