package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/engine"
)

// A source URL pgx cannot parse is a FieldError of "Postgres" in every
// Config that carries one, and no message shows the URL's password.
func TestValidatePostgresURL(t *testing.T) {
	t.Parallel()
	const secret = "hunter2secret"
	bad := []string{
		"postgres://u:" + secret + "@h:x/db",
		"postgres://u:" + secret + "@h:99999999/db",
		"postgres://u:" + secret + "@%zz/db",
		"host=h port=abc password=" + secret,
	}
	for _, url := range bad {
		for _, tc := range []struct {
			name string
			err  error
		}{
			{"helper", engine.CheckPostgres("run", url)},
			{"run", engine.RunConfig{Postgres: url}.Validate()},
			{"sync", engine.SyncConfig{Postgres: url}.Validate()},
			{"verify", engine.VerifyConfig{Sample: 1, CompareConfig: engine.CompareConfig{Postgres: url}}.Validate()},
			{"plan", engine.PlanConfig{CompareConfig: engine.CompareConfig{Postgres: url}}.Validate()},
			{"prune", engine.PruneConfig{CompareConfig: engine.CompareConfig{Postgres: url}}.Validate()},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, ok := fieldErrors(tc.err)["Postgres"]
				if !ok || !strings.Contains(got, "Postgres is not a PostgreSQL URL") || !errors.Is(tc.err, engine.ErrConfig) {
					t.Errorf("Validate of a bad URL = %v, want a FieldError of Postgres", tc.err)
				}
				if strings.Contains(tc.err.Error(), secret) {
					t.Errorf("the message shows the password: %v", tc.err)
				}
			})
		}
	}
	for _, url := range []string{"", "postgres://u:p@localhost:5432/db?sslmode=disable", "host=localhost dbname=x"} {
		if err := engine.CheckPostgres("run", url); err != nil {
			t.Errorf("CheckPostgres(%q) = %v, want nil", url, err)
		}
		if _, ok := fieldErrors(engine.RunConfig{Postgres: url}.Validate())["Postgres"]; ok {
			t.Errorf("RunConfig.Validate finds a problem with %q", url)
		}
	}
}
