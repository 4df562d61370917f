package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

type kv struct{ k, v string }

func TestSort(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		n       int
		memory  int
		fanIn   int
		runs    bool // expect run files
		passes  bool // expect intermediate merge passes
		keySize int
	}{
		{name: "empty", n: 0, memory: 1 << 20, fanIn: 4},
		{name: "in memory", n: 1000, memory: 1 << 20, fanIn: 4, keySize: 8},
		{name: "one merge", n: 5000, memory: 16 << 10, fanIn: 64, runs: true, keySize: 8},
		{name: "several passes", n: 20000, memory: 4 << 10, fanIn: 3, runs: true, passes: true, keySize: 4},
		{name: "record larger than memory", n: 50, memory: 10, fanIn: 2, runs: true, passes: true, keySize: 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := New(Config{Dir: dir, MemoryBytes: tc.memory, FanIn: tc.fanIn})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var want []kv
			for i := range tc.n {
				// Few distinct keys so that equal keys are common: their
				// values must come out in insertion order.
				k := fmt.Sprintf("%0*d", tc.keySize, rng.IntN(max(1, tc.n/3)))
				v := fmt.Sprintf("v%06d", i)
				want = append(want, kv{k, v})
				if err := s.Add([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			slices.SortStableFunc(want, func(a, b kv) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
			it, err := s.Sort()
			if err != nil {
				t.Fatal(err)
			}
			var got []kv
			for it.Next() {
				got = append(got, kv{string(it.Key()), string(it.Value())})
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d records, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			st := s.Stats()
			if (st.Runs > 0) != tc.runs || (st.MergePasses > 0) != tc.passes {
				t.Errorf("stats %+v: want runs %v, passes %v", st, tc.runs, tc.passes)
			}
			if err := s.Add([]byte("x"), nil); err != ErrSorted {
				t.Errorf("Add after Sort: %v, want ErrSorted", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*"))
			if len(left) > 0 {
				t.Errorf("files left after Close: %v", left)
			}
		})
	}
}

func firstDiff(a, b []kv) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{FanIn: 1}); err == nil {
		t.Error("fan-in 1 accepted")
	}
	if _, err := New(Config{MemoryBytes: -1}); err == nil {
		t.Error("negative memory accepted")
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Dir != os.TempDir() || s.cfg.MemoryBytes != DefaultMemoryBytes || s.cfg.FanIn != DefaultFanIn {
		t.Errorf("defaults: %+v", s.cfg)
	}
}

func BenchmarkSort(b *testing.B) {
	val := bytes.Repeat([]byte("x"), 200)
	for b.Loop() {
		s, _ := New(Config{Dir: b.TempDir(), MemoryBytes: 1 << 20})
		for i := range 20000 {
			s.Add(fmt.Appendf(nil, "CUSTOMER#%d", i*7919%20000), val)
		}
		it, _ := s.Sort()
		for it.Next() {
		}
		s.Close()
	}
}
