package main

import (
	"errors"

	"github.com/pgdynamo/migrate/internal/profiling"
)

// profiles are the --cpuprofile and --memprofile files of one command.
type profiles struct{ profiling.Files }

// profiled runs fn between the start and the stop of the profiles.
func (p *profiles) profiled(fn func() error) error {
	err := p.Run(fn)
	if errors.Is(err, profiling.ErrFile) {
		return usagef("--cpuprofile: %v", err)
	}
	return err
}

// validate checks that the profiles' directories exist: the files are
// written at the end of a long command.
func (p *profiles) validate(cmd string) error {
	return checks(checkOutput(cmd, "--cpuprofile", p.CPU), checkOutput(cmd, "--memprofile", p.Mem))
}
