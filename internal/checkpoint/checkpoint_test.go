package checkpoint

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/extract"
)

func TestPositionRoundTrip(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.UTC)
	tests := []struct {
		name string
		v    any
	}{
		{"null", nil},
		{"int8", int64(42)},
		{"int8 min", int64(math.MinInt64)},
		{"int8 max", int64(math.MaxInt64)},
		{"text", "héllo, \"world\"\x00#|"},
		{"empty text", ""},
		{"float8", 0.1},
		{"float8 tiny", math.SmallestNonzeroFloat64},
		{"float8 negative zero", math.Copysign(0, -1)},
		{"float8 +inf", math.Inf(1)},
		{"float8 -inf", math.Inf(-1)},
		{"bool", true},
		{"timestamp with nanoseconds", ts},
		{"timestamp before 1970", time.Date(1066, 10, 14, 9, 0, 0, 1000, time.UTC)},
		{"bytea", []byte{0, 1, 2, 0xff, '#'}},
		{"empty bytea", []byte{}},
		{"numeric with scale", extract.Decimal("19.90")},
		{"numeric 40 digits", extract.Decimal("1234567890123456789012345678901234567890.5")},
		{"numeric NaN", extract.Decimal("NaN")},
		{"json", extract.JSON(`{"a": [1, 2.50]}`)},
		{"infinity", extract.Infinity{Sign: 1}},
		{"-infinity", extract.Infinity{Sign: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Position{tt.v, int64(7)}
			data, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var out Position
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatalf("unmarshal %s: %v", data, err)
			}
			if len(out) != 2 || out[1] != int64(7) {
				t.Fatalf("round trip of %s = %#v", data, out)
			}
			if !same(tt.v, out[0]) {
				t.Errorf("round trip of %#v through %s = %#v (%T)", tt.v, data, out[0], out[0])
			}
		})
	}
	t.Run("NaN float", func(t *testing.T) {
		t.Parallel()
		data, err := json.Marshal(Position{math.NaN()})
		if err != nil {
			t.Fatal(err)
		}
		var out Position
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		if f, ok := out[0].(float64); !ok || !math.IsNaN(f) {
			t.Errorf("NaN came back as %#v", out[0])
		}
	})
}

// same compares decoded values exactly: times by instant (and UTC), floats
// by bits, the rest by type and value.
func same(a, b any) bool {
	switch a := a.(type) {
	case time.Time:
		bt, ok := b.(time.Time)
		return ok && a.Equal(bt) && bt.Location() == time.UTC
	case float64:
		bf, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(bf)
	}
	return reflect.DeepEqual(a, b)
}

func TestPositionRefusesUnknownTypes(t *testing.T) {
	t.Parallel()
	if _, err := json.Marshal(Position{int32(1)}); err == nil || !strings.Contains(err.Error(), "int32 cannot be recorded") {
		t.Errorf("marshal int32: %v", err)
	}
	var p Position
	for _, bad := range []string{`[{"type":"money","value":"1"}]`, `[{"type":"int8","value":"x"}]`, `[{"type":"infinity","value":"2"}]`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("unmarshal %s: no error", bad)
		}
	}
}

func sample() *State {
	return &State{
		Version:       Version,
		Mapping:       "testdata/bookstore.yaml",
		MappingSHA256: Hash([]byte("table: Bookstore\n")),
		Table:         "Bookstore",
		StartedAt:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		UpdatedAt:     time.Date(2025, 1, 2, 3, 5, 5, 0, time.UTC),
		Shards:        []Shard{{Entity: "Order", Index: "GSI2", Count: 15}},
		Sources: []Source{
			{Name: "public.customers", Done: true, After: Position{int64(200)}, Rows: 200, Entities: []Counts{{Entity: "Customer", Items: 199, Rejects: 1}}},
			{Name: "public.order_items", After: Position{int64(981), int64(17)}, Rows: 1500, Entities: []Counts{{Entity: "OrderLine", Items: 1500}}},
			{Name: "public.books"},
		},
		RejectFile:  "Bookstore.rejects.jsonl",
		RejectBytes: 321,
	}
}

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "dir", "Bookstore.state.json")
	want := sample()
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(Save(s)):\n got %+v\nwant %+v", got, want)
	}
	if got.Rows() != 1700 {
		t.Errorf("Rows() = %d, want 1700", got.Rows())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after Save, want only the state file: %v", len(entries), entries)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte("{not json"), 0o600)
	if _, err := Load(garbage); err == nil || !strings.Contains(err.Error(), "is not a state file") {
		t.Errorf("garbage: %v", err)
	}
	future := filepath.Join(dir, "future.json")
	os.WriteFile(future, []byte(`{"version": 99}`), 0o600)
	if _, err := Load(future); err == nil || !strings.Contains(err.Error(), "format version 99") {
		t.Errorf("future version: %v", err)
	}
}

// TestSaveIsAtomic rewrites a state file while readers keep loading it:
// every read sees a whole state, old or new.
func TestSaveIsAtomic(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.json")
	s := sample()
	// Make the file big enough that a torn write would be visible.
	for i := range 500 {
		s.Sources = append(s.Sources, Source{Name: strings.Repeat("x", 50), Rows: int64(i)})
	}
	if err := Save(path, s); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var torn error
	var mu sync.Mutex
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := Load(path); err != nil {
					mu.Lock()
					torn = err
					mu.Unlock()
					return
				}
			}
		})
	}
	for i := range 20 {
		s.Sources[0].Rows = int64(i)
		if err := Save(path, s); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if torn != nil {
		t.Fatalf("a reader saw a partial state file: %v", torn)
	}
}

func TestSaveFailureKeepsOldState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := Save(path, sample()); err != nil {
		t.Fatal(err)
	}
	bad := sample()
	bad.Sources[1].After = Position{struct{}{}} // cannot be encoded
	if err := Save(path, bad); err == nil {
		t.Fatal("Save of an unencodable position succeeded")
	}
	got, err := Load(path)
	if err != nil || !reflect.DeepEqual(got, sample()) {
		t.Errorf("after a failed Save the file holds %+v, %v; want the old state", got, err)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	s := sample()
	if err := s.Check(s.MappingSHA256, "Bookstore"); err != nil {
		t.Errorf("same mapping and table: %v", err)
	}
	err := s.Check(Hash([]byte("table: Bookstore\n# edited\n")), "Bookstore")
	if !errors.Is(err, ErrMappingChanged) || !strings.Contains(err.Error(), "testdata/bookstore.yaml") {
		t.Errorf("changed mapping: %v", err)
	}
	err = s.Check(s.MappingSHA256, "Other")
	if !errors.Is(err, ErrTableChanged) || !strings.Contains(err.Error(), `into "Bookstore", not "Other"`) {
		t.Errorf("other table: %v", err)
	}
}
