package transform_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// TestItemKeysAgreeWithApply: for every row of every golden case, the
// keys ItemKeys builds from the row's KeyColumns alone (everything else
// unknown, as in a deleted row's old version) are the keys of the items
// Apply builds from the whole row.
func TestItemKeysAgreeWithApply(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/transform/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	checked, copied := 0, 0
	for _, dir := range dirs {
		cat := loadCatalog(t, filepath.Join(dir, "catalog.json"))
		data, err := os.ReadFile(filepath.Join(dir, "mapping.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapping.Parse("mapping.yaml", data)
		if err != nil {
			continue // TestGolden reports it
		}
		plan, err := transform.Compile(m, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range plan.AutoShards() {
			plan.SetShardCount(a.Entity, a.Index, 3)
		}
		var rows map[string][]map[string]any
		readJSON(t, filepath.Join(dir, "rows.json"), &rows)
		for _, src := range plan.Sources {
			if len(src.CopiedKeyColumns()) > 0 {
				// Keys over copied columns need the parents' values too;
				// sync refuses such mappings (affect.Graph.Unsupported).
				copied++
				continue
			}
			keyCols := src.KeyColumns()
			for _, r := range rows[src.Name] {
				row := buildRow(t, src.Query, r, rows)
				items, _ := src.Apply(row)
				partial := extract.Row{Values: make([]any, len(row.Values))}
				for i, c := range src.Query.Columns {
					if slices.Contains(keyCols, c.Name) || slices.Contains(src.Query.OrderBy, c.Name) {
						partial.Values[i] = row.Values[i]
					}
				}
				keys, _ := src.ItemKeys(partial)
				for _, it := range items {
					want := map[string]types.AttributeValue{m.PartitionKey: it.Attrs[m.PartitionKey]}
					if m.SortKey != "" {
						want[m.SortKey] = it.Attrs[m.SortKey]
					}
					wantJSON, _ := transform.MarshalItem(want)
					found := false
					for _, k := range keys {
						got, _ := transform.MarshalItem(k.Attrs)
						found = found || k.Entity == it.Entity && string(got) == string(wantJSON)
					}
					if !found {
						t.Errorf("%s: %s row %s: ItemKeys %v lack the key of %s", filepath.Base(dir), src.Name, it.SourceKey, keys, it.Entity)
					}
					checked++
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d items checked", checked)
	}
	if copied == 0 {
		t.Error("no golden case has keys over copied columns: CopiedKeyColumns found none")
	}
}
