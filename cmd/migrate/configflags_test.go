package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
)

// Every flag the table names is a flag of a command: a renamed flag would
// otherwise leave the engine's field name in a usage message.
func TestConfigFlagsAreFlags(t *testing.T) {
	t.Parallel()
	var names []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&globals{stdout: io.Discard, stderr: io.Discard}))
	for field, flag := range configFlags {
		if !slices.Contains(names, flag) {
			t.Errorf("configFlags[%q] = %s, which no command has", field, flag)
		}
	}
}

func TestFlagProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for no usage error
	}{
		{"field and others", &engine.FieldError{Verb: "run", Field: "Writer.MinWCU", Problem: "must be between 0 and Writer.MaxWCU (0 = the default, 25)"},
			"export: --min-wcu must be between 0 and --max-wcu (0 = the default, 25)"},
		{"quoted values stay", &engine.FieldError{Verb: "run", Field: "OnError", Problem: `must be "fail" or "reject", not "Fresh"`},
			`export: --on-error must be "fail" or "reject", not "Fresh"`},
		{"first flag field of a join", errors.Join(errors.New("run: a mapping is required"), &engine.FieldError{Verb: "run", Field: "MaxPendingRows", Problem: "x"},
			errors.Join(&engine.FieldError{Verb: "run", Field: "Resume", Problem: "and Fresh exclude each other"})), "export: --resume and --fresh exclude each other"},
		{"no flag's field", errors.Join(errors.New("run: a mapping is required"), &engine.FieldError{Verb: "run", Field: "MaxPendingRows", Problem: "x"}), ""},
		{"nil", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := flagProblem("export", tc.err)
			var ue exitError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("flagProblem = %v, want nil", err)
			case tc.want != "" && (!errors.As(err, &ue) || ue.code != exitUsage || err.Error() != tc.want):
				t.Errorf("flagProblem = %v, want the usage error %q", err, tc.want)
			}
		})
	}
}

// The source URL's problem names where the URL came from, as the user
// gave it: the flag, an environment variable, or all of them.
func TestFlagProblemPostgresFrom(t *testing.T) {
	t.Parallel()
	const secret = "hunter2secret"
	problem := engine.CheckPostgres("run", "postgres://u:"+secret+"@h:x/db")
	for from, want := range map[string]string{
		"flag":           "run: --pg is not a PostgreSQL URL",
		"MIGRATE_PG_URL": "run: $MIGRATE_PG_URL is not a PostgreSQL URL",
		"DATABASE_URL":   "run: $DATABASE_URL is not a PostgreSQL URL",
		"":               "run: the source URL (--pg, $MIGRATE_PG_URL or $DATABASE_URL) is not a PostgreSQL URL",
	} {
		err := flagProblemIn("run", pgNames(from), problem)
		var ue exitError
		if !errors.As(err, &ue) || ue.code != exitUsage || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), secret) {
			t.Errorf("from %q: %v, want a usage error beginning %q without the password", from, err, want)
		}
	}
}

// The client's problems are said in the flags' names, or in the
// environment variable's that the value came from.
func TestFlagProblemClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&load.FieldError{Field: "Region", Problem: `must be a region name such as eu-west-1, not "a b"`}, `query: --region must be a region name such as eu-west-1, not "a b"`},
		{&load.FieldError{Field: "Endpoint", Env: "AWS_ENDPOINT_URL", Problem: "must be x"}, "query: $AWS_ENDPOINT_URL must be x"},
		{errors.Join(errors.New("load: other"), &load.FieldError{Field: "CallTimeout", Problem: "must be positive (default 10s)"}), "query: --call-timeout must be positive (default 10s)"},
		{&engine.FieldError{Verb: "export", Field: "S3.Endpoint", Env: "AWS_ENDPOINT_URL_S3", Problem: "must be x"}, "query: $AWS_ENDPOINT_URL_S3 must be x"},
	} {
		if err := flagProblem("query", tc.err); err == nil || err.Error() != tc.want {
			t.Errorf("flagProblem(%v) = %v, want %q", tc.err, err, tc.want)
		}
	}
}
