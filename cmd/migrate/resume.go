package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// againCommand renders a command to run again from the flags given: the
// flags named in first, in that order, then --pg, then afterPG, then the
// other flags given, sorted, then tail. The database URL may hold a
// password, so it is never printed: the command refers to the environment
// variable it came from, or to a placeholder for the --pg flag. Flags in
// skip, and boolean flags that are false, are left out; with onlyFirst,
// every flag but first's.
type againCommand struct {
	words, first, skip, afterPG, tail []string
	onlyFirst                         bool
}

func (c againCommand) render(flags *pflag.FlagSet, pgFrom string) string {
	type value struct {
		v    string
		bare bool // a boolean flag, given alone
	}
	given := map[string]value{}
	var rest []string
	flags.Visit(func(f *pflag.Flag) {
		if f.Name == "pg" || slices.Contains(c.skip, f.Name) || c.onlyFirst && !slices.Contains(c.first, f.Name) {
			return
		}
		v := value{v: f.Value.String()}
		if f.Value.Type() == "bool" {
			if v.v != "true" {
				return
			}
			v.bare = true
		}
		given[f.Name] = v
		if !slices.Contains(c.first, f.Name) {
			rest = append(rest, f.Name)
		}
	})
	parts := slices.Clone(c.words)
	add := func(name string) {
		if v, ok := given[name]; ok && v.bare {
			parts = append(parts, "--"+name)
		} else if ok {
			parts = append(parts, "--"+name, shellQuote(v.v))
		}
	}
	for _, n := range c.first {
		add(n)
	}
	switch pgFrom {
	case "flag":
		parts = append(parts, "--pg", "'<your --pg URL>'")
	case "":
	default:
		parts = append(parts, "--pg", `"$`+pgFrom+`"`)
	}
	parts = append(parts, c.afterPG...)
	slices.Sort(rest)
	for _, n := range rest {
		add(n)
	}
	return strings.Join(append(parts, c.tail...), " ")
}

// resumeCommand renders the command that resumes a run: the flags given,
// minus --pg's value, --resume/--fresh, --create-table and the profiles
// (which would overwrite the first run's), plus --state and --resume.
func resumeCommand(flags *pflag.FlagSet, pgFrom, statePath string) string {
	return againCommand{
		words: []string{"migrate", "run"},
		first: []string{"mapping", "table", "endpoint", "region"},
		skip:  []string{"resume", "fresh", "create-table", "state", "cpuprofile", "memprofile"},
		tail:  []string{"--state", shellQuote(statePath), "--resume"},
	}.render(flags, pgFrom)
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
