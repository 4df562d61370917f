package mapdoc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgdynamo/migrate/internal/golden"
	"github.com/pgdynamo/migrate/internal/mapdoc"
	"github.com/pgdynamo/migrate/mapping"
)

// Each mapping renders to its golden markdown; go test ./mapdoc -update
// rewrites them, and reviewers read the diff.
func TestMarkdown(t *testing.T) {
	cases := []struct {
		name, mapping string
		opts          mapdoc.Options
	}{
		{"bookstore", "../../testdata/bookstore.yaml", mapdoc.Options{ShardCounts: map[[2]string]int{{"Order", "GSI2"}: 14}}},
		{"bookstore-no-counts", "../../testdata/bookstore.yaml", mapdoc.Options{}},
		{"key-types-lsi-projection", "../../testdata/transform/key_types_lsi_projection/mapping.yaml", mapdoc.Options{}},
		{"copy-into", "../../testdata/transform/copy_into_and_copied_keys/mapping.yaml", mapdoc.Options{}},
		{"where", "../../testdata/transform/where_filters/mapping.yaml", mapdoc.Options{}},
		{"aggregates", "../../testdata/aggregates/mapping.yaml", mapdoc.Options{}},
		{"patterns", "../../testdata/patterns.yaml", mapdoc.Options{}},
		{"patterns-capacity", "../../testdata/patterns.yaml", mapdoc.Options{Capacity: &mapdoc.Capacity{
			From: "plan.json, made 2026-11-26 01:20 UTC",
			Entities: map[string]mapdoc.EntityCapacity{
				"Employee":   {Items: 20, Bytes: 1500, MaxItemBytes: 80, WriteUnits: 20},
				"CurrentJob": {Items: 19, Bytes: 1900, MaxItemBytes: 104, WriteUnits: 19, PartitionKeys: 19},
				"Sale":       {Items: 1234567, Bytes: 1234567 * 1800, MaxItemBytes: 2100, WriteUnits: 2469134, PartitionKeys: 81234, Estimated: true},
			},
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.mapping)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mapping.Parse(filepath.Base(tc.mapping), data)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := mapdoc.Markdown(&got, m, tc.opts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".md"), got.Bytes())
		})
	}
}
