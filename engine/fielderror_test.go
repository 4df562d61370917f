package engine_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// fieldErrors is the message of each FieldError of a Validate's errors,
// by field.
func fieldErrors(err error) map[string]string {
	out := map[string]string{}
	for _, fe := range contract.FieldErrors(err) {
		out[fe.Field] = fe.Error()
	}
	return out
}

// A value out of bounds is a FieldError naming the Config field, and an
// ErrConfig; a default (0) is not a problem. The messages are pinned: the
// CLI prints them with its flags' names.
func TestConfigFieldErrors(t *testing.T) {
	t.Parallel()
	checkFieldCases(t, []fieldValidateCase{
		{"max wcu", engine.RunConfig{Writer: load.Config{MaxWCU: -1}}.Validate(), "Writer.MaxWCU", "run: Writer.MaxWCU must not be negative (0 = no cap)"},
		{"max wcu NaN", engine.RunConfig{Writer: load.Config{MaxWCU: math.NaN()}}.Validate(), "Writer.MaxWCU", "run: Writer.MaxWCU must be a finite number, not NaN"},
		{"min above max", engine.RunConfig{Writer: load.Config{MaxWCU: 10, MinWCU: 20}}.Validate(), "Writer.MinWCU",
			"run: Writer.MinWCU must be between 0 and Writer.MaxWCU (0 = the default, 25)"},
		{"window", engine.RunConfig{Writer: load.Config{Window: 3}}.Validate(), "Writer.Window", "run: Writer.Window must be at least 25 (0 = the default, 4096)"},
		{"elapsed", engine.RunConfig{Writer: load.Config{MaxBatchElapsed: -1}}.Validate(), "Writer.MaxBatchElapsed", "run: Writer.MaxBatchElapsed must not be negative"},
		{"duplicate", engine.RunConfig{Writer: load.Config{OnDuplicate: "merge"}}.Validate(), "Writer.OnDuplicate", `run: Writer.OnDuplicate must be "fail" or "skip", not "merge"`},
		{"warm without create", engine.RunConfig{Writer: load.Config{WarmWCU: 5000}}.Validate(), "Writer.WarmWCU", "run: Writer.WarmWCU applies only with CreateTable"},
		{"warm too low", engine.RunConfig{CreateTable: true, Writer: load.Config{WarmWCU: 5}}.Validate(), "Writer.WarmWCU", "must be at least 4000"},
		{"on error", engine.RunConfig{OnError: "maybe"}.Validate(), "OnError", `run: OnError must be "fail" or "reject", not "maybe"`},
		{"rejects", engine.RunConfig{MaxRejects: -2}.Validate(), "MaxRejects", "run: MaxRejects must be -1 (no limit) or more"},
		{"readers", engine.RunConfig{}.Validate(), "Readers", "run: Readers and RangeRows must be at least 1"},
		{"resume fresh", engine.RunConfig{Resume: true, Fresh: true}.Validate(), "Resume", "run: Resume and Fresh exclude each other"},
		{"fanout", engine.SyncConfig{MaxFanout: -2}.Validate(), "MaxFanout", "sync: MaxFanout must be -1 (no bound), 0 (the default, 100000) or more"},
		{"truncate", engine.SyncConfig{OnTruncate: "drop"}.Validate(), "OnTruncate", `sync: OnTruncate must be "fail" or "delete", not "drop"`},
		{"sync writer", engine.SyncConfig{Writer: load.Config{MaxWCU: -1}}.Validate(), "Writer.MaxWCU", "sync: Writer.MaxWCU must not be negative"},
		{"mode", engine.PruneConfig{CompareConfig: engine.CompareConfig{Mode: "both"}}.Validate(), "Mode", `prune: Mode must be scan or get, not "both"`},
		{"segments", engine.PlanConfig{CompareConfig: engine.CompareConfig{Segments: -1}}.Validate(), "Segments", "plan: Segments must be between 1 and 1000000"},
		{"sort memory", engine.PlanConfig{}.Validate(), "SortMemoryMB", "plan: SortMemoryMB must be at least 1 (MB)"},
		{"write rate", engine.PlanConfig{WriteRate: math.Inf(1)}.Validate(), "WriteRate", "plan: WriteRate must be a finite number, not +Inf"},
		{"price", engine.PlanConfig{PricePerGBImport: -1}.Validate(), "PricePerGBImport", "plan: PricePerGBImport must not be negative"},
		{"sample", engine.VerifyConfig{Sample: math.NaN()}.Validate(), "Sample", "verify: Sample must be in (0, 1], e.g. 0.01 for 1%"},
	})
	// Defaults are no problem with the bounds.
	if fe := fieldErrors(engine.RunConfig{OnError: engine.OnErrorFail, Readers: 1, RangeRows: 1}.Validate()); len(fe) > 0 {
		t.Errorf("a default writer has problems: %v", fe)
	}
}

// Without a source, LoadMappingWithCatalog reports the file's problems, as
// LoadMapping does; a good file loads.
func TestLoadMappingWithCatalogOffline(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("table: T\nentities:\n  - name: X\n    bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want := engine.LoadMapping(bad)
	_, got := engine.LoadMappingWithCatalog(t.Context(), bad, "")
	var ds mapping.Diagnostics
	if !errors.As(got, &ds) || got.Error() != want.Error() {
		t.Errorf("LoadMappingWithCatalog = %v, want LoadMapping's %v", got, want)
	}
	if m, err := engine.LoadMappingWithCatalog(t.Context(), "../testdata/bookstore.yaml", ""); err != nil || m.Table == "" {
		t.Errorf("the bookstore mapping: %v", err)
	}
}
