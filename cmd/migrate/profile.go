package main

import (
	"errors"

	"github.com/pgdynamo/migrate/internal/profiling"
)

// profiles are the --cpuprofile and --memprofile files of one command.
type profiles struct{ cpu, mem string }

// profiled runs fn between the start and the stop of the profiles.
func (p *profiles) profiled(fn func() error) error {
	err := profiling.Files{CPU: p.cpu, Mem: p.mem}.Run(fn)
	if errors.Is(err, profiling.ErrFile) {
		return usagef("--cpuprofile: %v", err)
	}
	return err
}
