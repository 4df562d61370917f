package engine

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/extsort"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// keyCheck finds every key that two items of a run share, among the items
// of entities whose keys mapping.ProveUniqueKeys could not prove unique
// (for the others there is nothing to check, and nothing is kept). The
// writer refuses a duplicate that arrives among its recent keys before
// writing it; keyCheck finds all the others, once the items are written:
// it records the key and origin of every acknowledged item in an external
// sorter (bounded memory, runs spilled to disk) and, at the end, finds
// equal keys next to each other. Memory does not grow with the table.
type keyCheck struct {
	pk, sk string
	check  map[string]bool // entities whose items are recorded

	mu     sync.Mutex
	sorter *extsort.Sorter
	err    error
}

// keyCheckMemory is the sorter's buffer.
const keyCheckMemory = 16 << 20

// newKeyCheck returns the check for the entities the proof leaves out and
// for the others listed in more, or nil when there are none.
func newKeyCheck(m *mapping.Mapping, proof mapping.KeyProof, more []string, dir string) (*keyCheck, error) {
	k := &keyCheck{pk: m.PartitionKey, sk: m.SortKey, check: map[string]bool{}}
	for _, e := range proof.Entities {
		if !e.Unique {
			k.check[e.Entity] = true
		}
	}
	for _, e := range more {
		k.check[e] = true
	}
	if len(k.check) == 0 {
		return nil, nil
	}
	s, err := extsort.New(extsort.Config{Dir: dir, MemoryBytes: keyCheckMemory})
	if err != nil {
		return nil, err
	}
	k.sorter = s
	return k, nil
}

// needs reports whether items of entity must be recorded.
func (k *keyCheck) needs(entity string) bool { return k != nil && k.check[entity] }

// record returns what to record for an item once it is acknowledged: its
// key, and its key for display and its origin.
func (k *keyCheck) record(it contract.Item) (key, value []byte) {
	key = load.AppendKey(nil, it.Attrs, k.pk, k.sk)
	value = fmt.Appendf(nil, "%s\x00%s", load.DisplayKey(it.Attrs, k.pk, k.sk), it.Origin.String())
	return key, value
}

// add records an acknowledged item. Safe for concurrent use.
func (k *keyCheck) add(key, value []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = k.sorter.Add(key, value)
	}
}

// duplicate is two items with one key.
type duplicate struct {
	key           string // for display
	first, second string // origins, in the order they were acknowledged
}

// maxDuplicates is how many duplicates the error names.
const maxDuplicates = 10

// duplicates sorts the recorded keys and returns the first maxDuplicates
// pairs of items sharing a key, and how many such items there are
// (beyond the first of each key).
func (k *keyCheck) duplicates() ([]duplicate, int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return nil, 0, fmt.Errorf("check keys for duplicates: %w", k.err)
	}
	it, err := k.sorter.Sort()
	if err != nil {
		return nil, 0, fmt.Errorf("check keys for duplicates: %w", err)
	}
	var out []duplicate
	var n int64
	var prevKey, prevValue []byte
	for it.Next() {
		key, value := it.Key(), it.Value()
		if prevKey != nil && bytes.Equal(key, prevKey) {
			n++
			if len(out) < maxDuplicates {
				display, first, _ := strings.Cut(string(prevValue), "\x00")
				_, second, _ := strings.Cut(string(value), "\x00")
				out = append(out, duplicate{key: display, first: first, second: second})
			}
			continue // prevValue stays the first item of the key
		}
		prevKey, prevValue = append(prevKey[:0], key...), append(prevValue[:0], value...)
	}
	if err := it.Err(); err != nil {
		return nil, 0, fmt.Errorf("check keys for duplicates: %w", err)
	}
	return out, n, nil
}

func (k *keyCheck) close() {
	if k != nil {
		k.sorter.Close()
	}
}

// duplicatesError describes duplicates found after writing.
// target is the kind of target written (TargetInfo.Kind).
func duplicatesError(dups []duplicate, n int64, target string) error {
	var b strings.Builder
	fate := "which it replaced in the table"
	if target != "" && target != "dynamodb" {
		fate = "and both are in the " + target
	}
	fmt.Fprintf(&b, "duplicate keys: %s of this run had the key of an earlier item, %s", plural(n, "item"), fate)
	for _, d := range dups {
		fmt.Fprintf(&b, "\n  %s: %s, then %s", d.key, d.first, d.second)
	}
	if n > int64(len(dups)) {
		fmt.Fprintf(&b, "\n  and %d more", n-int64(len(dups)))
	}
	b.WriteString("\nthe mapping's keys are not unique (migrate validate says which entities' keys it could not prove unique): fix the key templates, then run again with --fresh")
	return fmt.Errorf("%w: %s", load.ErrDuplicateKey, b.String())
}

// checkKeys runs the duplicate-key check at the end of a run whose items
// are all written. Under OnDuplicate "skip" duplicates are only logged:
// the later item is in the table, not the first.
func (r *runner) checkKeys() error {
	dups, n, err := r.keys.duplicates()
	if err != nil || n == 0 {
		return err
	}
	derr := duplicatesError(dups, n, r.targetKind)
	if r.cfg.Writer.OnDuplicate == load.OnDuplicateSkip {
		r.log.Warn("duplicate keys found after writing; each key holds the item written last", "err", derr)
		return nil
	}
	return derr
}
