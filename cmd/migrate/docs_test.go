package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/internal/report"
)

// docs --plan shows each entity's figures from a JSON plan, and refuses a
// plan that is not one or is of another mapping, with exit 2.
func TestDocsWithPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, p report.Plan) string {
		t.Helper()
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	at := time.Date(2026, 11, 26, 1, 20, 0, 0, time.UTC)
	good := write("plan.json", report.Plan{Schema: report.PlanSchema, GeneratedAt: at, Entities: []report.EntityPlan{
		{Entity: "Employee", Expected: 20, Bytes: 1500, MaxItemBytes: 80, WriteUnits: 20},
		{Entity: "Sale", Expected: 600, Bytes: 600 * 90, MaxItemBytes: 95, WriteUnits: 600, PartitionKeys: 70000, PartitionKeysMethod: "hyperloglog"},
		{Entity: "CurrentJob", Expected: 19, Bytes: 19 * 100, MaxItemBytes: 100, WriteUnits: 19, PartitionKeys: 19, PartitionKeysMethod: "exact"},
	}})
	out, errOut, code := runCLI(t, "docs", "--mapping", patternsMapping, "--plan", good)
	for _, want := range []string{"Measured by `migrate plan` (plan.json, made 2026-11-26 01:20 UTC)", "| Employee | 20 | 75 B | 80 B | 20 | not measured |", "| Sale | 600 | 90 B | 95 B | 600 | about 70,000 |", "| CurrentJob | 19 | 100 B | 100 B | 19 | 19 |", "| Skill | not in the plan | | | | |"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("docs --plan exited %d, lacks %q:\n%s\n%s", code, want, out, errOut)
		}
	}
	for _, tc := range []struct{ name, path, want string }{
		{"another schema", write("other.json", report.Plan{Schema: "migrate.verify/v1"}), `schema "migrate.verify/v1", want "migrate.plan/v1"`},
		{"another mapping", write("foreign.json", report.Plan{Schema: report.PlanSchema, Entities: []report.EntityPlan{{Entity: "Order"}}}), "has entity Order, which the mapping"},
		{"no file", filepath.Join(dir, "missing.json"), "no such file"},
	} {
		_, errOut, code := runCLI(t, "docs", "--mapping", patternsMapping, "--plan", tc.path)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errOut, tc.want)
		}
	}
}
