package main

import (
	"os"

	"github.com/pgdynamo/migrate/internal/render"
)

// pgURLFrom returns the source URL and where it came from: "flag",
// "MIGRATE_PG_URL" or "DATABASE_URL".
func pgURLFrom(flag string) (string, string) {
	if flag != "" {
		return flag, "flag"
	}
	for _, env := range []string{"MIGRATE_PG_URL", "DATABASE_URL"} {
		if v := os.Getenv(env); v != "" {
			return v, env
		}
	}
	return "", ""
}

// newProgress is the observer of a run's progress, drawn on the command's
// terminal or logged.
func newProgress(g *globals, quiet bool) *render.RunProgress {
	return render.NewRunProgress(render.ProgressConfig{Stdout: g.stdout, Stderr: g.stderr, Logger: g.logger, NewLogger: g.newLogger, Quiet: quiet})
}
