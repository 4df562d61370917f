package main

import (
	"strings"
	"testing"
)

func TestPlanVerifyUsage(t *testing.T) {
	t.Parallel()
	base := []string{"--mapping", "m.yaml", "--pg", "postgres://x@127.0.0.1:1/db"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"plan without mapping", []string{"plan", "--pg", "postgres://x@127.0.0.1:1/db"}, "--mapping is required"},
		{"plan bad compare", append([]string{"plan", "--compare", "query"}, base...), "--compare must be scan or get"},
		{"plan bad format", append([]string{"plan", "--format", "yaml"}, base...), "--format must be text, markdown or json"},
		{"plan bad color", append([]string{"plan", "--color", "sometimes"}, base...), "--color must be auto, always or never"},
		{"plan zero write rate", append([]string{"plan", "--write-rate", "0"}, base...), "--write-rate must be positive"},
		{"plan negative price", append([]string{"plan", "--price-per-million-wcu", "-1"}, base...), "must not be negative"},
		{"plan zero segments", append([]string{"plan", "--segments", "0"}, base...), "--segments must be between"},
		{"verify sample zero", append([]string{"verify", "--sample", "0"}, base...), "--sample must be in (0, 1]"},
		{"verify sample above one", append([]string{"verify", "--sample", "1.5"}, base...), "--sample must be in (0, 1]"},
		{"verify unknown flag", append([]string{"verify", "--html", "x.html"}, base...), "unknown flag: --html"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q (stdout %q)", code, errOut, tc.want, out)
			}
		})
	}
}
