package main

import (
	"strings"
	"testing"
)

// query --pattern refuses what it cannot run before any DynamoDB call,
// with exit 2: the endpoint here answers nothing.
func TestQueryPatternRefusals(t *testing.T) {
	t.Parallel()
	common := []string{"--mapping", patternsMapping, "--endpoint", "http://127.0.0.1:1", "--region", "us-east-1"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown pattern", []string{"--pattern", "latestSale", "--param", "id=1"}, `the mapping has no access pattern "latestSale" (its patterns: currentJob, employeeWithJobAndSkills, latestSales)`},
		{"a GetItem pattern", []string{"--pattern", "currentJob", "--param", "id=1"}, "access pattern currentJob is a GetItem, not a Query"},
		{"missing parameter", []string{"--pattern", "latestSales"}, "access pattern latestSales needs a value for id (--param id=...)"},
		{"unknown parameter", []string{"--pattern", "latestSales", "--param", "id=1", "--param", "year=2024"}, "access pattern latestSales has no parameter year (its parameters: id)"},
		{"parameter without a value", []string{"--pattern", "latestSales", "--param", "id"}, `--param "id": want name=value`},
		{"key flags with a pattern", []string{"--pattern", "latestSales", "--param", "id=1", "--pk", "X"}, "--pattern takes its key condition"},
		{"param without a pattern", []string{"--pk", "X", "--param", "id=1"}, "--param goes with --pattern"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := runCLI(t, append(append([]string{"query"}, tc.args...), common...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}
