package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// errAlreadyComplete: --resume found a state file of a completed run.
var errAlreadyComplete = errors.New("run: the recorded run is complete")

// previousRun decides, from the state file at path, whether the run starts
// fresh (nil) or continues a previous one, or must refuse:
//
//   - no state file: a fresh run; with --resume, a usage error.
//   - --fresh: a fresh run, whatever the file holds (it is overwritten).
//   - --resume: the recorded run, if it is for the same mapping (hash) and
//     table; errAlreadyComplete if it is complete.
//   - neither: a fresh run if the recorded one is complete; otherwise a
//     usage error naming both options, so that an unfinished run is never
//     restarted or continued by accident.
func previousRun(log *slog.Logger, path, hash, table string, o runOpts) (*checkpoint.State, error) {
	st, err := checkpoint.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if o.resume {
			return nil, usagef("run --resume: there is no state file %s, so nothing to resume (run without --resume to start, or name the file with --state)", path)
		}
		return nil, nil
	case err != nil && o.fresh:
		return nil, nil
	case err != nil:
		return nil, usagef("run: %v; pass --fresh to start over and overwrite it", err)
	case o.fresh:
		log.Info("--fresh: starting over; the state file is overwritten", "state", path)
		return nil, nil
	case o.resume:
		if err := st.Check(hash, table); err != nil {
			return nil, usagef("run --resume: cannot continue the run recorded in %s: %v; pass --fresh instead of --resume to start over (items already written are overwritten, not duplicated)", path, err)
		}
		if st.Complete {
			return st, errAlreadyComplete
		}
		return st, nil
	case st.Complete:
		log.Info("the run recorded in the state file is complete; starting a new run", "state", path)
		return nil, nil
	}
	what := fmt.Sprintf("an unfinished run into table %q (%s done, last saved %s)", st.Table, plural(int(st.Rows()), "row"), st.UpdatedAt.Format(time.RFC3339))
	if err := st.Check(hash, table); err != nil {
		what += fmt.Sprintf(" that --resume could not continue: %v", err)
	}
	return nil, usagef("run: %s holds %s: pass --resume to continue it, or --fresh to start over and overwrite the state file", path, what)
}

// resumeCommand renders the command that resumes a run: the flags given,
// minus --pg's value, --resume/--fresh and --create-table, plus --state and
// --resume. The database URL may hold a password, so it is never printed:
// the command refers to the environment variable it came from, or to a
// placeholder for the --pg flag.
func resumeCommand(flags *pflag.FlagSet, pgFrom, statePath string) string {
	first := []string{"mapping", "table", "endpoint", "region"}
	given := map[string]string{}
	var rest []string
	flags.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "pg", "resume", "fresh", "create-table", "state":
			return
		}
		v := f.Value.String()
		if f.Value.Type() == "bool" {
			if v != "true" {
				return
			}
			v = ""
		}
		given[f.Name] = v
		if !slices.Contains(first, f.Name) {
			rest = append(rest, f.Name)
		}
	})
	parts := []string{"migrate", "run"}
	add := func(name string) {
		v, ok := given[name]
		if !ok {
			return
		}
		if v == "" {
			parts = append(parts, "--"+name)
			return
		}
		parts = append(parts, "--"+name, shellQuote(v))
	}
	for _, n := range first {
		add(n)
	}
	switch pgFrom {
	case "flag":
		parts = append(parts, "--pg", "'<your --pg URL>'")
	case "":
	default:
		parts = append(parts, "--pg", `"$`+pgFrom+`"`)
	}
	slices.Sort(rest)
	for _, n := range rest {
		add(n)
	}
	parts = append(parts, "--state", shellQuote(statePath), "--resume")
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
