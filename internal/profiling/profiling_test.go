package profiling

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRunWritesProfiles(t *testing.T) {
	dir := t.TempDir()
	p := Files{CPU: filepath.Join(dir, "cpu.pprof"), Mem: filepath.Join(dir, "mem.pprof")}
	ran := false
	if err := p.Run(func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("Run: %v (ran %v)", err, ran)
	}
	for _, f := range []string{p.CPU, p.Mem} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// fn's error comes back; a file that cannot be created is ErrFile and
	// fn does not run.
	boom := errors.New("boom")
	if err := (Files{}).Run(func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Run = %v, want fn's error", err)
	}
	ran = false
	err := Files{CPU: filepath.Join(dir, "missing", "cpu.pprof")}.Run(func() error { ran = true; return nil })
	if !errors.Is(err, ErrFile) || ran {
		t.Errorf("Run = %v (ran %v), want ErrFile without running", err, ran)
	}
}
