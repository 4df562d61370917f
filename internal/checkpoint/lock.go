package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
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
// and a lock on the replaced file would guard nothing. The sidecar is never
// removed, since a process could otherwise lock a file that another one is
// about to unlink and both would run.
type Lock struct {
	f    *os.File
	path string
}

// LockPath is the lock file of the state file at path.
func LockPath(path string) string { return path + ".lock" }

// Acquire takes the lock of the state file at path (which need not exist
// yet), creating its directory if needed. It does not wait: when another
// process (or another Lock in this one) holds the lock, it returns a
// *LockedError naming the holder.
func Acquire(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	f, err := os.OpenFile(LockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: lock: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: lock %s: %w", LockPath(path), err)
	}
	if !held {
		h := readHolder(f)
		f.Close()
		return nil, &LockedError{Path: path, Holder: h}
	}
	host, _ := os.Hostname()
	if err := writeHolder(f, Holder{PID: os.Getpid(), Host: host, Start: time.Now().UTC()}); err != nil {
		_ = unlock(f)
		f.Close()
		return nil, fmt.Errorf("checkpoint: lock %s: %w", LockPath(path), err)
	}
	return &Lock{f: f, path: path}, nil
}

// Unlock releases the lock, first clearing the holder's details. It may be
// called more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0)
	err := unlock(f)
	if cerr := f.Close(); err == nil {
		err = cerr
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
