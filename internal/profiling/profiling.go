// Package profiling writes the CPU and memory profiles of one command, so
// that a user can send a profile of a slow or large run; read them with
// `go tool pprof`.
package profiling

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// ErrFile is wrapped when a profile's file cannot be created: the
// caller's path is wrong, nothing has run yet for the CPU profile.
var ErrFile = errors.New("cannot create the profile's file")

// Files names the profiles to write; "" leaves one out.
type Files struct {
	CPU string // CPU profile of the whole of Run's fn
	Mem string // heap profile at the end
}

// Run runs fn between the start and the stop of the profiles. The heap
// profile holds memory in use at the end (after a collection) and, with
// -sample_index=alloc_space, every allocation of fn.
func (p Files) Run(fn func() error) error {
	var cpu *os.File
	if p.CPU != "" {
		f, err := os.Create(p.CPU)
		if err != nil {
			return fileError{err}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("cpu profile: %w", err)
		}
		cpu = f
	}
	errs := []error{fn()}
	if cpu != nil {
		pprof.StopCPUProfile()
		errs = append(errs, cpu.Close())
	}
	if p.Mem != "" {
		f, err := os.Create(p.Mem)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("memory profile: %w", err))...)
		}
		runtime.GC()
		errs = append(errs, pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	return errors.Join(errs...)
}

// fileError is os.Create's error, said as it is, and an ErrFile.
type fileError struct{ err error }

func (e fileError) Error() string        { return e.err.Error() }
func (e fileError) Unwrap() error        { return e.err }
func (e fileError) Is(target error) bool { return target == ErrFile }
