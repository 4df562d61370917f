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

// validate checks that the profiles' directories exist: the files are
// written at the end of a long command.
func (p *profiles) validate(cmd string) error {
	return checks(checkOutput(cmd, "--cpuprofile", p.cpu), checkOutput(cmd, "--memprofile", p.mem))
}
