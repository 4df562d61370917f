package render

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Again renders a command to run again from the flags given: the
// flags named in first, in that order, then --pg, then afterPG, then the
// other flags given, sorted, then tail. The database URL may hold a
// password, so it is never printed: the command refers to the environment
// variable it came from, or to a placeholder for the --pg flag. Flags in
// Skip, and boolean flags that are false, are left out; with OnlyFirst,
// every flag but First's.
type Again struct {
	Words, First, Skip, AfterPG, Tail []string
	OnlyFirst                         bool
}

// Command renders the command for the flags given; pgFrom is where the
// source URL came from: "flag", an environment variable's name, or "".
func (c Again) Command(flags *pflag.FlagSet, pgFrom string) string {
	type value struct {
		v    string
		bare bool // a boolean flag, given alone
	}
	given := map[string]value{}
	var rest []string
	flags.Visit(func(f *pflag.Flag) {
		if f.Name == "pg" || slices.Contains(c.Skip, f.Name) || c.OnlyFirst && !slices.Contains(c.First, f.Name) {
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
		if !slices.Contains(c.First, f.Name) {
			rest = append(rest, f.Name)
		}
	})
	parts := slices.Clone(c.Words)
	add := func(name string) {
		if v, ok := given[name]; ok && v.bare {
			parts = append(parts, "--"+name)
		} else if ok {
			parts = append(parts, "--"+name, ShellQuote(v.v))
		}
	}
	for _, n := range c.First {
		add(n)
	}
	switch pgFrom {
	case "flag":
		parts = append(parts, "--pg", "'<your --pg URL>'")
	case "":
	default:
		parts = append(parts, "--pg", `"$`+pgFrom+`"`)
	}
	parts = append(parts, c.AfterPG...)
	slices.Sort(rest)
	for _, n := range rest {
		add(n)
	}
	return strings.Join(append(parts, c.Tail...), " ")
}

// ShellQuote quotes s for a POSIX shell when it needs quoting.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
