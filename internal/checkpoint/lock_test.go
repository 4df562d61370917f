package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockHelperEnv makes the test binary, run again as a child, a process that
// takes the lock of the state file named in the variable, says "locked" on
// stdout and then waits to be killed.
const lockHelperEnv = "CHECKPOINT_TEST_LOCK_HOLDER"

func TestMain(m *testing.M) {
	if path := os.Getenv(lockHelperEnv); path != "" {
		if _, err := Acquire(path); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("locked")
		select {} // hold the lock until killed
	}
	os.Exit(m.Run())
}

// holdLock starts another process holding the lock of path.
func holdLock(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	return cmd
}

// A second run on a state file in use fails at once, naming the holder;
// once the holder is killed (kill -9: it releases nothing itself), the
// next run gets the lock.
func TestLockExcludesAnotherProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".migrate", "Shop.state.json")
	before := time.Now().Add(-time.Second)
	holder := holdLock(t, path)

	start := time.Now()
	l, err := Acquire(path)
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire while another process holds the lock: %v, %v", l, err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("Acquire waited %v for a held lock; it must fail at once", waited)
	}
	host, _ := os.Hostname()
	h := locked.Holder
	if h.PID != holder.Process.Pid || h.Host != host || h.Start.Before(before) || h.Start.After(time.Now()) {
		t.Errorf("holder = %+v, want pid %d on %s started just now", h, holder.Process.Pid, host)
	}
	for _, want := range []string{path, fmt.Sprintf("pid %d on host %s, started ", holder.Process.Pid, host)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}

	if err := holder.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = holder.Wait()
	l, err = Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
}

// Two locks in one process exclude each other too, and an unlocked state
// file can be locked again.
func TestLockInProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.json")
	l, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	var locked *LockedError
	if _, err := Acquire(path); !errors.As(err, &locked) || locked.Holder.PID != os.Getpid() {
		t.Fatalf("second Acquire in the same process: %v", err)
	}
	// Saving the state (a rename over the state file) keeps the lock.
	if err := Save(path, &State{Table: "Shop"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire after Save: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
	l2, err := Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after Unlock: %v", err)
	}
	defer l2.Unlock()
}

// A holder that has locked but not yet written its details is still a
// holder.
func TestLockedErrorWithoutDetails(t *testing.T) {
	t.Parallel()
	e := &LockedError{Path: "s.json"}
	if !strings.Contains(e.Error(), "s.json is in use by another run (a run that has not recorded itself yet)") {
		t.Errorf("message: %v", e)
	}
}

// Unlock leaves nothing behind: no lock file, and no directory Acquire
// created for it; a directory that was there before stays.
func TestUnlockRemovesLockFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, ".migrate", "deeper", "Shop.state.json")
	l, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(path)); err != nil {
		t.Fatalf("no lock file while locked: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".migrate")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directories Acquire created are still there after Unlock: %v", err)
	}

	// A directory with a state file in it is kept, the lock file is not.
	dir := filepath.Join(root, "kept")
	path = filepath.Join(dir, "Shop.state.json")
	if l, err = Acquire(path); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, &State{Table: "Shop"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "Shop.state.json" {
		t.Errorf("after Unlock the directory holds %v, %v; want only the state file", entries, err)
	}
}

// Removing the lock file on Unlock must not let two holders in: one that
// opened the file just before its holder removed it would otherwise lock
// the removed file while another locks the new one. Many lockers take and
// release one lock as fast as they can; never two hold it at once.
func TestLockExcludesWhileRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d", "s.json")
	const lockers, rounds = 4, 50
	var holders, taken, overlaps atomic.Int32
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				var l *Lock
				for {
					var err error
					if l, err = Acquire(path); err == nil {
						break
					} else if !errors.Is(err, ErrLocked) {
						failed.CompareAndSwap(nil, &err)
						return
					}
					runtime.Gosched()
				}
				if holders.Add(1) != 1 {
					overlaps.Add(1)
				}
				taken.Add(1)
				runtime.Gosched()
				holders.Add(-1)
				if err := l.Unlock(); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatal(*err)
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("two holders at once %d times", n)
	}
	if taken.Load() != lockers*rounds {
		t.Errorf("lock taken %d times, want %d", taken.Load(), lockers*rounds)
	}
}
