package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrLocked is wrapped (by *LockedError) when another run holds the lock of
// a state file.
var ErrLocked = errors.New("checkpoint: the state file is in use by another run")

// Holder is who holds a state file's lock: recorded in the lock file when
// the lock is taken, so that a run that finds it taken can name the
// holder. It holds no command line (that could carry a password).
type Holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Start time.Time `json:"start"`
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "a run that has not recorded itself yet"
	}
	return fmt.Sprintf("pid %d on host %s, started %s", h.PID, h.Host, h.Start.Local().Format(time.RFC3339))
}

// LockedError says that the state file at Path is in use, and by whom.
type LockedError struct {
	Path   string // the state file
	Holder Holder // zero when the holder has not written its details yet
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("checkpoint: state file %s is in use by another run (%s); wait for it to end, or stop it, then run again",
		e.Path, e.Holder)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is an exclusive lock on a state file, held until Unlock or until the
// process ends, however it ends: the operating system releases it (flock
// semantics), so a crashed run never blocks the next one.
//
// The lock is taken on a sidecar file, LockPath(path), never on the state
// file itself: Save replaces the state file by renaming a new one over it,
// and a lock on the replaced file would guard nothing.
//
// Unlock removes the sidecar, so that a run leaves no lock file behind,
// refused or not (only a crashed run leaves one, which locks nothing). That
// is safe only with the check Acquire makes: a process may have opened the
// sidecar just before the holder removed it, and then lock the removed file
// while a third process creates and locks a new one. So the sidecar is
// removed only while locked, and Acquire, once it holds a lock, checks that
// the file it locked is still the one at LockPath; if not, it lets go and
// starts again. Whoever holds the lock on the file at LockPath holds the
// state file.
type Lock struct {
	f    *os.File
	path string
	dirs []string // directories Acquire created, deepest first
}

// LockPath is the lock file of the state file at path.
func LockPath(path string) string { return path + ".lock" }

// Acquire takes the lock of the state file at path (which need not exist
// yet), creating its directory if needed. It does not wait: when another
// process (or another Lock in this one) holds the lock, it returns a
// *LockedError naming the holder.
func Acquire(path string) (*Lock, error) {
	// Another holder may remove the sidecar, or a directory Acquire created
	// for it, between our open and our lock: each such race costs a retry,
	// and a retry only happens when another run released the lock.
	for attempt := 0; ; attempt++ {
		l, retry, err := acquire(path)
		if !retry || attempt >= 100 {
			return l, err
		}
	}
}

// acquire makes one attempt; retry means the lock file went away under it.
func acquire(path string) (l *Lock, retry bool, err error) {
	dirs := missingDirs(filepath.Dir(path))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("checkpoint: %w", err)
	}
	lockPath := LockPath(path)
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, fmt.Errorf("checkpoint: lock: %w", err) // the directory was removed
	}
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint: lock: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("checkpoint: lock %s: %w", lockPath, err)
	}
	if !held {
		h := readHolder(f)
		f.Close()
		return nil, false, &LockedError{Path: path, Holder: h}
	}
	if !stillAt(f, lockPath) {
		// Locked a file its holder removed on Unlock: not the lock.
		_ = unlock(f)
		f.Close()
		return nil, true, fmt.Errorf("checkpoint: lock %s: removed while being taken", lockPath)
	}
	host, _ := os.Hostname()
	if err := writeHolder(f, Holder{PID: os.Getpid(), Host: host, Start: time.Now().UTC()}); err != nil {
		_ = unlock(f)
		f.Close()
		return nil, false, fmt.Errorf("checkpoint: lock %s: %w", lockPath, err)
	}
	return &Lock{f: f, path: path, dirs: dirs}, false, nil
}

// stillAt reports whether f is the file at path.
func stillAt(f *os.File, path string) bool {
	open, err := f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Stat(path)
	return err == nil && os.SameFile(open, named)
}

// missingDirs lists dir and those of its parents that do not exist, deepest
// first: what MkdirAll is about to create.
func missingDirs(dir string) []string {
	var out []string
	for {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// Unlock removes the lock file and releases the lock, then removes the
// directories Acquire created for it if they are empty (a refused run
// leaves nothing behind). It may be called more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Removed while still locked: see Lock.
	if err := os.Remove(LockPath(l.path)); err != nil {
		_ = f.Truncate(0) // at least no stale holder's details
	}
	err := unlock(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	for _, d := range l.dirs {
		// Fails, harmlessly, when another run's files are in it; another
		// Acquire that finds its directory gone creates it again.
		if os.Remove(d) != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("checkpoint: unlock %s: %w", LockPath(l.path), err)
	}
	return nil
}

func writeHolder(f *os.File, h Holder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(data, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

// readHolder reads what the holder wrote; the zero Holder if it has not
// written yet (it takes the lock first).
func readHolder(f *os.File) Holder {
	var h Holder
	data := make([]byte, 4096)
	n, _ := f.ReadAt(data, 0)
	_ = json.Unmarshal(data[:n], &h)
	return h
}
