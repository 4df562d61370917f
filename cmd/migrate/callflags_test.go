package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/load"
)

// Every command that calls DynamoDB takes --call-timeout, and a bad value
// is a usage error before any call.
func TestCallTimeoutFlag(t *testing.T) {
	t.Parallel()
	pg := "postgres://x@127.0.0.1:1/db"
	commands := [][]string{
		{"run", "--mapping", bookstoreMapping, "--pg", pg},
		{"sync", "--mapping", bookstoreMapping, "--pg", pg},
		{"plan", "--mapping", bookstoreMapping, "--pg", pg},
		{"verify", "--mapping", bookstoreMapping, "--pg", pg},
		{"prune", "--mapping", bookstoreMapping, "--pg", pg},
		{"prove", "--mapping", bookstoreMapping, "--pg", pg},
		{"query", "--table", "Orders", "--pk", "X"},
		{"import", "--mapping", bookstoreMapping, "--from", "s3://bucket/prefix"},
		{"cutover", "--mapping", bookstoreMapping, "--pg", pg},
	}
	for _, args := range commands {
		for _, bad := range [][]string{{"--call-timeout", "0"}, {"--call-timeout", "-1s"}, {"--max-batch-elapsed", "-1s"}} {
			t.Run(args[0]+" "+strings.Join(bad, " "), func(t *testing.T) {
				t.Parallel()
				_, stderr, code := runCLI(t, append(append([]string{}, args...), bad...)...)
				if code != exitUsage || !strings.Contains(stderr, bad[0]+" must") {
					t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming %s", code, stderr, bad[0])
				}
			})
		}
	}
}

// A read command against an endpoint nobody listens on fails at once: the
// retries that a timeout gets are not for a wrong endpoint.
func TestQueryUnreachableFailsFast(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, stderr, code := runCLI(t, "query", "--endpoint", "http://127.0.0.1:1", "--region", "us-east-1", "--table", "Orders", "--pk", "X")
	if code != exitFailure || !strings.Contains(stderr, "unreachable") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to report an unreachable endpoint", d)
	}
}

func TestRetryHint(t *testing.T) {
	t.Parallel()
	timeout := fmt.Errorf("%w: 25 items; last error: %w", load.ErrBatchTimeout, &load.CallTimeoutError{Operation: "BatchWriteItem", Limit: time.Second})
	throttled := fmt.Errorf("%w: 25 items; last error: %w", load.ErrBatchTimeout, errors.New("ThrottlingException"))
	readLimit := fmt.Errorf("scan T segment 0: %w", &load.RetryLimitError{Operation: "Scan", Attempts: 9, Err: &load.CallTimeoutError{Operation: "Scan", Limit: time.Second}})
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{timeout, []string{"--call-timeout", "--max-batch-elapsed"}},
		{readLimit, []string{"--call-timeout", "--max-batch-elapsed"}},
		{throttled, []string{"--max-batch-elapsed", "--concurrency"}},
		{errors.New("other"), nil},
	} {
		hint := retryHint(tc.err)
		if (hint == "") != (tc.want == nil) {
			t.Errorf("retryHint(%v) = %q", tc.err, hint)
		}
		for _, w := range tc.want {
			if !strings.Contains(hint, w) {
				t.Errorf("retryHint(%v) = %q, want it to name %s", tc.err, hint, w)
			}
		}
		if strings.Contains(hint, "MaxBatchElapsed") || strings.Contains(hint, "CallTimeout") {
			t.Errorf("retryHint(%v) = %q names a Go field", tc.err, hint)
		}
	}
}
