package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/load"
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

// checkTable checks a --table or --index value against DynamoDB's naming
// rule, [a-zA-Z0-9_.-]{3,255}; "" (the default) passes.
func checkTable(cmd, flag, name string) error {
	if name == "" {
		return nil
	}
	what := "table"
	if flag == "--index" {
		what = "index"
	}
	if msg := mapping.TableNameProblem(what, name); msg != "" {
		return usagef("%s: %s: %s", cmd, flag, msg)
	}
	return nil
}

// checkS3Endpoint checks --s3-endpoint or, without it, the endpoint the
// SDK would take from the environment, when where (an export's place) is
// in S3.
func checkS3Endpoint(cmd, flag, where string) error {
	if flag != "" {
		if p := load.EndpointProblem(flag); p != "" {
			return usagef("%s: --s3-endpoint %s", cmd, p)
		}
		return nil
	}
	if !strings.HasPrefix(where, "s3://") {
		return nil
	}
	if env, v := load.EnvEndpoint("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"); v != "" {
		if p := load.EndpointProblem(v); p != "" {
			return usagef("%s: $%s %s", cmd, env, p)
		}
	}
	return nil
}

// checkRegion checks the region of an export's S3 client.
func checkRegion(cmd, region string) error {
	if p := load.RegionProblem(region); p != "" {
		return usagef("%s: --region %s", cmd, p)
	}
	return nil
}

// checkPostgres checks a source URL for a command without an engine
// Config that would; from is where it came from (see pgNames).
func checkPostgres(cmd, pg, from string) error {
	return flagProblemIn(cmd, pgNames(from), engine.CheckPostgres(cmd, pg))
}

// checkWhere checks an export's place: a directory or s3://bucket/prefix
// (s3Only: only the latter), with a bucket name S3 accepts.
func checkWhere(cmd, flag, v string, s3Only bool) error {
	if v == "" {
		return nil
	}
	w, err := export.ParseWhere(v)
	if err != nil {
		return usagef("%s: %s: %v", cmd, flag, err)
	}
	if !w.IsS3() {
		if s3Only {
			return usagef("%s: %s must be s3://bucket/prefix, not %q", cmd, flag, v)
		}
		return nil
	}
	// S3's rule for new buckets: 3 to 63 lower-case letters, digits, '.'
	// and '-', beginning and ending with a letter or digit.
	b := w.Bucket
	ok := len(b) >= 3 && len(b) <= 63 && b[0] != '.' && b[0] != '-' && b[len(b)-1] != '.' && b[len(b)-1] != '-'
	for _, r := range b {
		ok = ok && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-')
	}
	if !ok {
		return usagef("%s: %s: bucket name %q is not one S3 allows (3 to 63 lower-case letters, digits, '.' and '-')", cmd, flag, b)
	}
	return nil
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
