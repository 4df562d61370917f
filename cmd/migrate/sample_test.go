package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/migratetest"
)

// The sample commands live under "sample"; the old top-level spellings are
// gone from the CLI and its help.
func TestSampleCommandsAreApart(t *testing.T) {
	t.Parallel()
	help, _, code := runCLI(t, "--help")
	if code != exitOK || !strings.Contains(help, "\n  sample ") {
		t.Fatalf("root help (exit %d) does not offer sample:\n%s", code, help)
	}
	for _, old := range []string{"\n  schema ", "\n  seed "} {
		if strings.Contains(help, old) {
			t.Errorf("root help still offers %q:\n%s", strings.TrimSpace(old), help)
		}
	}
	for _, args := range [][]string{{"schema", "up", "--pg", "postgres://x@127.0.0.1:1/db"}, {"seed", "--pg", "postgres://x@127.0.0.1:1/db"}} {
		if _, errOut, code := runCLI(t, args...); code != exitUsage || !strings.Contains(errOut, "unknown command") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, unknown command", args, code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sample"}, "name a subcommand: schema or seed"},
		{[]string{"sample", "schema"}, "name a subcommand: up or down"},
		{[]string{"sample", "schema", "up"}, "sample schema up: --pg is required"},
		{[]string{"sample", "seed"}, "sample seed: --pg is required"},
		{[]string{"sample", "seed", "--pg", "postgres://x@127.0.0.1:1/db", "--scale", "0"}, "scale 0 out of range"},
	} {
		if _, errOut, code := runCLI(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// sample schema up, sample seed and sample schema down against a database
// that already has its own golang-migrate history: the history survives.
func TestSampleLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL);
		INSERT INTO schema_migrations VALUES (7, false)`); err != nil {
		t.Fatal(err)
	}
	scalar := func(q string) (n int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	cli := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, append(args, "--pg", pg)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
		}
		return out + errOut
	}

	if out := cli(exitFailure, "sample", "seed", "--scale", "2"); !strings.Contains(out, `run "migrate sample schema up" first`) {
		t.Errorf("seed before schema up: %s", out)
	}
	if out := cli(exitOK, "sample", "schema", "up"); !strings.HasPrefix(out, "sample schema up: done") {
		t.Errorf("schema up printed %q", out)
	}
	out := cli(exitOK, "sample", "seed", "--scale", "3")
	if !strings.Contains(out, "seeded scale 3") || strings.Contains(out, "level=INFO") {
		t.Errorf("seed printed:\n%s", out)
	}
	if n := scalar(`SELECT count(*) FROM customers`); n != 3 {
		t.Errorf("%d customers after seed --scale 3", n)
	}
	if v := scalar(`SELECT max(version) FROM migrate_sample_schema_migrations`); v != 1 {
		t.Errorf("sample migrations table at version %d, want 1", v)
	}
	if out := cli(exitFailure, "sample", "seed", "--scale", "3"); !strings.Contains(out, "--replace") {
		t.Errorf("seeding again without --replace: %s", out)
	}
	cli(exitOK, "sample", "schema", "down")
	if n := scalar(`SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'customers'`); n != 0 {
		t.Error("customers left after sample schema down")
	}
	if v := scalar(`SELECT version FROM schema_migrations WHERE NOT dirty`); v != 7 {
		t.Errorf("the user's schema_migrations changed: version %d, want 7", v)
	}
}
