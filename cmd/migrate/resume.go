package main

import (
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/internal/render"
)

// resumeCommand renders the command that resumes a run: the flags given,
// minus --pg's value, --resume/--fresh, --create-table and the profiles
// (which would overwrite the first run's), plus --state and --resume.
func resumeCommand(flags *pflag.FlagSet, pgFrom, statePath string) string {
	return render.Again{
		Words: []string{"migrate", "run"},
		First: []string{"mapping", "table", "endpoint", "region"},
		Skip:  []string{"resume", "fresh", "create-table", "state", "cpuprofile", "memprofile"},
		Tail:  []string{"--state", render.ShellQuote(statePath), "--resume"},
	}.Command(flags, pgFrom)
}
