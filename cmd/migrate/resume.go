package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

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
