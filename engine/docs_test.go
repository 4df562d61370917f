package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// engine.Docs, called directly, documents the mapping with a plan's
// figures, and refuses a plan that is not one or is of another mapping
// with ErrConfig and the messages the CLI has always printed.
func TestDocsVerb(t *testing.T) {
	t.Parallel()
	m, err := engine.LoadMapping("../testdata/patterns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("plan.json", report.Plan{Schema: report.PlanSchema, GeneratedAt: time.Date(2026, 11, 26, 1, 20, 0, 0, time.UTC), Entities: []report.EntityPlan{
		{Entity: "Sale", Expected: 600, Bytes: 600 * 90, MaxItemBytes: 95, WriteUnits: 600, PartitionKeys: 70000, PartitionKeysMethod: "hyperloglog"},
	}})
	doc, err := engine.Docs(t.Context(), engine.DocsConfig{Mapping: m, PlanFile: good})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Table `", "Measured by `migrate plan` (plan.json, made 2026-11-26 01:20 UTC)", "| Sale | 600 | 90 B | 95 B | 600 | about 70,000 |", "| Employee | not in the plan | | | | |"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs lack %q:\n%s", want, doc)
		}
	}
	plain, err := engine.Docs(t.Context(), engine.DocsConfig{Mapping: m})
	if err != nil || strings.Contains(string(plain), "Measured by") || !strings.HasPrefix(string(plain), "# Table `") {
		t.Errorf("docs without a plan (%v):\n%s", err, plain)
	}

	notJSON := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(notJSON, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	other := write("other.json", report.Plan{Schema: "migrate.verify/v1"})
	foreign := write("foreign.json", report.Plan{Schema: report.PlanSchema, Entities: []report.EntityPlan{{Entity: "Order"}}})
	for _, tc := range []struct{ name, path, want string }{
		{"no file", missing, "docs: --plan: open " + missing + ": no such file or directory"},
		{"not JSON", notJSON, "docs: --plan " + notJSON + ": not a plan in JSON (migrate plan --format json): unexpected end of JSON input"},
		{"another schema", other, "docs: --plan " + other + `: schema "migrate.verify/v1", want "migrate.plan/v1" (migrate plan --format json)`},
		{"another mapping", foreign, "docs: --plan " + foreign + " has entity Order, which the mapping ../testdata/patterns.yaml lacks: make the plan with this mapping"},
	} {
		doc, err := engine.Docs(t.Context(), engine.DocsConfig{Mapping: m, PlanFile: tc.path})
		if !errors.Is(err, engine.ErrConfig) || err.Error() != tc.want || doc != nil {
			t.Errorf("%s: %v (%d bytes); want ErrConfig %q", tc.name, err, len(doc), tc.want)
		}
	}
	var fe *engine.FieldError
	if _, err := engine.Docs(t.Context(), engine.DocsConfig{}); !errors.As(err, &fe) || fe.Field != "Mapping" {
		t.Errorf("no mapping: %v", err)
	}
}

// With a source database, Docs documents every "count: auto" shard count
// as ShardCounts computes it.
func TestDocsVerbShardCounts(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	counts, err := engine.ShardCounts(t.Context(), m, pg)
	if err != nil || len(counts) == 0 {
		t.Fatalf("shard counts: %v, %v", counts, err)
	}
	doc, err := engine.Docs(t.Context(), engine.DocsConfig{Mapping: m, Postgres: pg})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if want := fmt.Sprintf("**%d** (auto, computed from the source;", c.Count); !strings.Contains(string(doc), want) {
			t.Errorf("docs lack %q for %s/%s:\n%s", want, c.Entity, c.Index, doc)
		}
	}
	offline, err := engine.Docs(t.Context(), engine.DocsConfig{Mapping: m})
	if err != nil || strings.Contains(string(offline), "computed from the source") || !strings.Contains(string(offline), "auto: from the average item size") {
		t.Errorf("docs without a source (%v):\n%s", err, offline)
	}
}
