package main

import (
	"os"
	"path/filepath"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/mapping"
)

// Checks of flag values that need no call: each command runs them before
// it reads the mapping or contacts anything, so that a typo exits 2 with a
// usage message at once instead of exiting 1 after an SDK or connection
// error (or after hours, for an output file written at the end). Every
// check returns a usageError naming the command and the flag; none prints
// a value that may hold a password.

// checks returns the first error of its arguments.
func checks(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTable checks a --table value against DynamoDB's naming rule,
// [a-zA-Z0-9_.-]{3,255}; "" (the default) passes.
func checkTable(cmd, name string) error {
	if msg := mapping.TableNameProblem("table", name); name != "" && msg != "" {
		return usagef("%s: --table: %s", cmd, msg)
	}
	return nil
}

// checkPostgres checks a source URL for a command without an engine
// Config that would; from is where it came from (see pgNames).
func checkPostgres(cmd, pg, from string) error {
	return flagProblemIn(cmd, pgNames(from), engine.CheckPostgres(cmd, pg))
}

// checkDir checks that a directory flag (--temp-dir) names an existing
// directory; "" (the default) passes.
func checkDir(cmd, flag, dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s: %s %q is not an existing directory", cmd, flag, dir)
	}
	return nil
}

// checkOutput checks that the directory of an output file flag exists:
// files such as --summary-json are written at the end of a long run. ""
// and "-" (stdout) pass.
func checkOutput(cmd, flag, file string) error {
	if file == "" || file == "-" {
		return nil
	}
	dir := filepath.Dir(file)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s: %s %q: directory %q does not exist", cmd, flag, file, dir)
	}
	return nil
}
