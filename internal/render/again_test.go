package render

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain.yaml": "plain.yaml", "it's": `'it'\''s'`, "": "''", "a b": "'a b'", "$HOME": "'$HOME'", "s3://b/p,x=1@%+": "s3://b/p,x=1@%+",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The URL is never in the command: the flag's value becomes a placeholder,
// the environment's a reference to the variable.
func TestAgainHidesTheURL(t *testing.T) {
	t.Parallel()
	f := pflag.NewFlagSet("sync", pflag.ContinueOnError)
	f.String("pg", "", "")
	f.String("mapping", "", "")
	f.Bool("drop", false, "")
	f.Bool("quiet", false, "")
	f.Int("concurrency", 0, "")
	if err := f.Parse([]string{"--pg", "postgres://u:secret@h/db", "--mapping", "m.yaml", "--quiet", "--concurrency", "4", "--drop=false"}); err != nil {
		t.Fatal(err)
	}
	c := Again{Words: []string{"migrate", "sync"}, First: []string{"mapping"}, AfterPG: []string{"--slot", "s"}, Tail: []string{"--resume"}}
	for from, want := range map[string]string{
		"flag":           `migrate sync --mapping m.yaml --pg '<your --pg URL>' --slot s --concurrency 4 --quiet --resume`,
		"MIGRATE_PG_URL": `migrate sync --mapping m.yaml --pg "$MIGRATE_PG_URL" --slot s --concurrency 4 --quiet --resume`,
	} {
		if got := c.Command(f, from); got != want {
			t.Errorf("from %s:\n got %s\nwant %s", from, got, want)
		}
	}
	c.OnlyFirst = true
	if got, want := c.Command(f, "DATABASE_URL"), `migrate sync --mapping m.yaml --pg "$DATABASE_URL" --slot s --resume`; got != want {
		t.Errorf("only first:\n got %s\nwant %s", got, want)
	}
}
