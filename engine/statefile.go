package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/mapping"
)

// StatePath is the state file a run or sync into table keeps unless told
// otherwise: DefaultStateDir/<table>.state.json, in the working directory.
func StatePath(table string) string {
	return filepath.Join(DefaultStateDir, table+".state.json")
}

// StateShards are the "count: auto" shard counts a run or sync recorded in
// its state file: the counts the table's items were written with. Reads
// must use them: a sync keeps its initial load's counts while the data
// changes, so counts computed from the source later may differ, and an item
// looked for in another shard is not found.
type StateShards struct {
	Path   string // the state file they were read from
	Counts []StateShardCount
}

// StateShardCount is one "count: auto" setting's recorded count.
type StateShardCount struct {
	Entity, Index string
	Count         int
}

// Map returns the counts by entity and index, as CompareConfig.Shards and
// ProveConfig.AutoShards take them; nil when there are none.
func (s *StateShards) Map() map[[2]string]int {
	if s == nil || len(s.Counts) == 0 {
		return nil
	}
	out := make(map[[2]string]int, len(s.Counts))
	for _, c := range s.Counts {
		out[[2]string{c.Entity, c.Index}] = c.Count
	}
	return out
}

// Count returns the recorded count of entity's index, if there is one.
func (s *StateShards) Count(entity, index string) (int, bool) {
	if s == nil {
		return 0, false
	}
	for _, c := range s.Counts {
		if c.Entity == entity && c.Index == index {
			return c.Count, true
		}
	}
	return 0, false
}

// StateTableError is returned for a state file of another table: its
// counts would send reads to shards the items were never written to.
type StateTableError struct {
	Path, Recorded, Table string
}

// Error names the file and both tables.
func (e *StateTableError) Error() string {
	return fmt.Sprintf("the state file %s is for table %s, not %s", e.Path, e.Recorded, e.Table)
}

// Unwrap makes a StateTableError an ErrState.
func (e *StateTableError) Unwrap() error { return ErrState }

// ReadStateShards reads the "count: auto" shard counts recorded in the
// state file at path, which must be table's (a *StateTableError if not).
// The error of a file that cannot be read wraps the cause (fs.ErrNotExist
// for a missing one).
func ReadStateShards(path, table string) (*StateShards, error) {
	st, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	if st.Table != table {
		return nil, &StateTableError{Path: path, Recorded: st.Table, Table: table}
	}
	out := &StateShards{Path: path}
	for _, s := range st.Shards {
		out.Counts = append(out.Counts, StateShardCount{Entity: s.Entity, Index: s.Index, Count: s.Count})
	}
	return out, nil
}

// WrittenShards reads the shard counts table was written with, for a verb
// (named in messages) that reads the table with m: from the state file at
// path, or, when path is "", from StatePath(table) if it exists. It
// returns nil, without reading anything, when path is "" and m has no
// "count: auto" setting, and nil when the default file does not exist.
// Errors are ErrState errors: a named file that cannot be read, or a state
// file of another table.
func WrittenShards(verb string, m *mapping.Mapping, path, table string) (*StateShards, error) {
	if path == "" && !HasAutoShards(m) {
		return nil, nil
	}
	named := path != ""
	if !named {
		path = StatePath(table)
	}
	s, err := ReadStateShards(path, table)
	var te *StateTableError
	switch {
	case errors.As(err, &te):
		return nil, stateErrorf("%s: %w", verb, err)
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil, nil
	case err != nil:
		return nil, stateErrorf("%s: --state: %w", verb, err)
	}
	return s, nil
}

// HasAutoShards reports whether m has a "count: auto" shard setting.
func HasAutoShards(m *mapping.Mapping) bool {
	if m == nil {
		return false
	}
	for _, e := range m.Entities {
		for _, ei := range e.Indexes {
			if ei.Shard != nil && ei.Shard.Count == 0 {
				return true
			}
		}
	}
	return false
}

// MappingShardKeys expands the partition key value pk of index in table,
// by mapping m, into the key of every shard when the index key pk belongs
// to is sharded (see ShardKeys); nil when it is not, or index is "" (the
// table's own key is never sharded). A "count: auto" count is the one the
// run recorded in the state file at stateFile (default StatePath(table)).
// The mapping must have the index, and pk must tell the entity apart.
func MappingShardKeys(m *mapping.Mapping, table, index, pk, stateFile string) ([]string, error) {
	if index == "" {
		return nil, nil
	}
	var names []string
	for _, ix := range m.Indexes {
		names = append(names, ix.Name)
	}
	if !slices.Contains(names, index) {
		return nil, configErrorf("query: the mapping has no index %s (its indexes: %s)", index, strings.Join(names, ", "))
	}
	type sharded struct {
		entity string
		ei     *mapping.EntityIndex
	}
	var matches []sharded
	for _, e := range m.Entities {
		for _, ei := range e.Indexes {
			if ei.Index != index || ei.Shard == nil || ei.PK == nil {
				continue
			}
			if len(ei.PK.Parts) > 0 && ei.PK.Parts[0].Column == "" && !strings.HasPrefix(pk, ei.PK.Parts[0].Literal) {
				continue // another entity's key in the same index
			}
			matches = append(matches, sharded{e.Name, ei})
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	if len(matches) > 1 && matches[0].ei.PK.Raw != matches[1].ei.PK.Raw {
		return nil, configErrorf("query: --pk %q could be a key of %s (%q) or %s (%q) in %s: give one shard's full key without a mapping",
			pk, matches[0].entity, matches[0].ei.PK.Raw, matches[1].entity, matches[1].ei.PK.Raw, index)
	}
	n := matches[0].ei.Shard.Count
	if n == 0 { // count: auto, as the run computed it
		var err error
		if n, err = recordedShardCount(stateFile, table, matches[0].entity, index); err != nil {
			return nil, err
		}
	}
	return ShardKeys(matches[0].ei.PK, pk, n)
}

// recordedShardCount reads a "count: auto" shard count from the state file.
func recordedShardCount(path, table, entity, index string) (int, error) {
	path = cmp.Or(path, StatePath(table))
	st, err := ReadStateShards(path, table)
	var te *StateTableError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, stateErrorf("query: %s %s has \"count: auto\" shards, and there is no state file %s with the count the run computed: name it with --state", entity, index, path)
	case errors.As(err, &te):
		return 0, stateErrorf("query: %w: name this table's with --state", err)
	case err != nil:
		return 0, err
	}
	n, ok := st.Count(entity, index)
	if !ok {
		return 0, stateErrorf("query: the state file %s has no shard count for %s %s", path, entity, index)
	}
	return n, nil
}
