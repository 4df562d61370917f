package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles are the --cpuprofile and --memprofile files of one command, so
// that a user can send a profile of a slow or large run. Read them with
// `go tool pprof`.
type profiles struct {
	cpu, mem string
	cpuFile  *os.File
}

// start begins the CPU profile, if one was asked for.
func (p *profiles) start() error {
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the heap profile: memory in use at
// the end (after a collection) and, with -sample_index=alloc_space, every
// allocation of the run.
func (p *profiles) stop() error {
	var errs []error
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		errs = append(errs, p.cpuFile.Close())
		p.cpuFile = nil
	}
	if p.mem != "" {
		f, err := os.Create(p.mem)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("--memprofile: %w", err))...)
		}
		runtime.GC()
		errs = append(errs, pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	return errors.Join(errs...)
}
