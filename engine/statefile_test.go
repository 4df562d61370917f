package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/mapping"
)

// stateFixture is the bookstore mapping (Order GSI2 "count: auto") and a
// directory to write state files in.
func stateFixture(t *testing.T) (*mapping.Mapping, string) {
	t.Helper()
	m, err := LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m, t.TempDir()
}

func saveState(t *testing.T, path, table string, shards ...checkpoint.Shard) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(path, &checkpoint.State{Version: checkpoint.Version, Table: table, Shards: shards}); err != nil {
		t.Fatal(err)
	}
}

func TestWrittenShards(t *testing.T) {
	m, dir := stateFixture(t)
	t.Chdir(dir) // the default state file is relative to the working directory
	gsi2 := checkpoint.Shard{Entity: "Order", Index: "GSI2", Count: 7}
	saveState(t, "mine.json", "Bookstore", gsi2)
	saveState(t, "other.json", "another-table", gsi2)
	if err := os.WriteFile("broken.json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		m          *mapping.Mapping
		defaultOK  bool // write the default state file first
		want       []StateShardCount
		wantPath   string
		wantErr    string
		wantIs     []error
	}{
		{name: "no auto, no file named: nothing read", m: &mapping.Mapping{}, defaultOK: true},
		{name: "default file absent", m: m},
		{name: "default file", m: m, defaultOK: true, wantPath: StatePath("Bookstore"),
			want: []StateShardCount{{"Order", "GSI2", 7}}},
		{name: "named file", m: m, path: "mine.json", wantPath: "mine.json", want: []StateShardCount{{"Order", "GSI2", 7}}},
		{name: "named file, mapping without auto", m: &mapping.Mapping{}, path: "mine.json", wantPath: "mine.json",
			want: []StateShardCount{{"Order", "GSI2", 7}}},
		{name: "named file absent", m: m, path: "gone.json", wantErr: "verify: --state: checkpoint: open gone.json",
			wantIs: []error{ErrState, fs.ErrNotExist}},
		{name: "not a state file", m: m, path: "broken.json", wantErr: "verify: --state: checkpoint: broken.json is not a state file",
			wantIs: []error{ErrState}},
		{name: "another table's", m: m, path: "other.json", wantErr: "verify: the state file other.json is for table another-table, not Bookstore",
			wantIs: []error{ErrState}},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(DefaultStateDir)
			if c.defaultOK {
				saveState(t, StatePath("Bookstore"), "Bookstore", gsi2)
			}
			got, err := WrittenShards("verify", c.m, c.path, "Bookstore")
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, c.wantErr)
				}
				for _, is := range c.wantIs {
					if !errors.Is(err, is) {
						t.Errorf("error %v is not %v", err, is)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if got != nil {
					t.Fatalf("got %+v, want nil", got)
				}
				return
			}
			if got.Path != c.wantPath || !slices.Equal(got.Counts, c.want) {
				t.Fatalf("got %+v, want %s %+v", got, c.wantPath, c.want)
			}
			if n := got.Map()[[2]string{"Order", "GSI2"}]; n != 7 {
				t.Errorf("Map: Order GSI2 = %d, want 7", n)
			}
		})
	}
}

func TestMappingShardKeys(t *testing.T) {
	m, dir := stateFixture(t)
	mine, other, none := filepath.Join(dir, "mine.json"), filepath.Join(dir, "other.json"), filepath.Join(dir, "none.json")
	saveState(t, mine, "Bookstore", checkpoint.Shard{Entity: "Order", Index: "GSI2", Count: 3})
	saveState(t, other, "another-table", checkpoint.Shard{Entity: "Order", Index: "GSI2", Count: 3})
	saveState(t, none, "Bookstore")
	for _, c := range []struct {
		name, index, pk, state string
		want                   []string
		wantErr                string
		wantIs                 error
	}{
		{name: "the table", pk: "CUSTOMER#1", state: mine},
		{name: "unsharded index", index: "GSI1", pk: "EMAIL#a@b", state: mine},
		{name: "every shard", index: "GSI2", pk: "STATUS#OPEN", state: mine,
			want: []string{"STATUS#OPEN#0", "STATUS#OPEN#1", "STATUS#OPEN#2"}},
		{name: "unknown index", index: "GSI9", pk: "X", wantIs: ErrConfig,
			wantErr: "query: the mapping has no index GSI9 (its indexes: GSI1, GSI2)"},
		{name: "no state file", index: "GSI2", pk: "STATUS#OPEN", state: filepath.Join(dir, "gone.json"), wantIs: ErrState,
			wantErr: `query: Order GSI2 has "count: auto" shards, and there is no state file ` + filepath.Join(dir, "gone.json")},
		{name: "another table's", index: "GSI2", pk: "STATUS#OPEN", state: other, wantIs: ErrState,
			wantErr: "query: the state file " + other + " is for table another-table, not Bookstore: name this table's with --state"},
		{name: "no count recorded", index: "GSI2", pk: "STATUS#OPEN", state: none, wantIs: ErrState,
			wantErr: "query: the state file " + none + " has no shard count for Order GSI2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := MappingShardKeys(m, "Bookstore", c.index, c.pk, c.state)
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) || !errors.Is(err, c.wantIs) {
					t.Fatalf("error %v, want a %v starting %q", err, c.wantIs, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// A sharded pattern reads the count the mapping declares, or for "count:
// auto" the one the state file recorded; a pattern on no sharded index
// has none.
func TestPatternShards(t *testing.T) {
	m, dir := stateFixture(t)
	t.Chdir(dir)
	if n, err := PatternShards(m, "customerProfile", "", "Bookstore"); n != 0 || err != nil {
		t.Errorf("unsharded pattern: %d, %v", n, err)
	}
	_, err := PatternShards(m, "openOrdersInMonth", "", "Bookstore")
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `query: Order GSI2 has "count: auto" shards, and no state file (--state, default .migrate/Bookstore.state.json) has the count the run computed`) {
		t.Errorf("auto without a state file: %v", err)
	}
	saveState(t, "mine.json", "Bookstore", checkpoint.Shard{Entity: "Order", Index: "GSI2", Count: 9})
	if n, err := PatternShards(m, "openOrdersInMonth", "mine.json", "Bookstore"); n != 9 || err != nil {
		t.Errorf("auto with a state file: %d, %v; want 9", n, err)
	}
	for _, e := range m.Entities {
		for _, ei := range e.Indexes {
			if ei.Shard != nil {
				ei.Shard.Count = 4 // declared
			}
		}
	}
	if n, err := PatternShards(m, "openOrdersInMonth", "", "Bookstore"); n != 4 || err != nil {
		t.Errorf("declared count: %d, %v; want 4", n, err)
	}
	// Another entity sharding the same index with more shards: the reader
	// queries them all, as prove does, or it misses that entity's items.
	var sharded *mapping.EntityIndex
	for _, e := range m.Entities {
		for _, ei := range e.Indexes {
			if ei.Index == "GSI2" && ei.Shard != nil {
				sharded = ei
			}
		}
	}
	other := *sharded
	other.Shard = &mapping.Shard{Count: 8}
	// The last entity: a reader that took the first entity's count would
	// take 4.
	last := m.Entities[len(m.Entities)-1]
	if slices.Contains(last.Indexes, sharded) {
		t.Fatal("the fixture's last entity shards GSI2 already")
	}
	last.Indexes = append(last.Indexes, &other)
	if n, err := PatternShards(m, "openOrdersInMonth", "", "Bookstore"); n != 8 || err != nil {
		t.Errorf("two entities with 4 and 8 shards: %d, %v; want 8", n, err)
	}
}
