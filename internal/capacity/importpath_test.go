package capacity

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
)

// The import path costs the items' uncompressed DYNAMODB_JSON at the price
// per GB and takes the overhead plus that size at the rate; which path is
// cheaper depends on the write units per byte, i.e. on item size and GSIs.
func TestImportPath(t *testing.T) {
	t.Parallel()
	item := func(pk string, pad int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": S(pk), "G1PK": S("g"), "v": S(strings.Repeat("x", pad))}
	}
	// {"Item":{"G1PK":{"S":"g"},"PK":{"S":"k"},"v":{"S":"xx...x"}}}\n
	if got, want := ImportLineBytes(item("k", 3)), len(`{"Item":{"G1PK":{"S":"g"},"PK":{"S":"k"},"v":{"S":"xxx"}}}`+"\n"); got != want {
		t.Fatalf("line bytes %d, want %d", got, want)
	}
	for _, tc := range []struct {
		name    string
		pad     int
		cheaper string
	}{
		// 100-byte items cost 2 write units each (table + GSI1): $1.25 per
		// million items by writes, about $0.02 by import.
		{"small items", 100, "import"},
		// 300 KB items: 300 + 300 write units (0.375 $ per 1,000), ~0.04 $
		// per 1,000 by import. Import stays cheaper: writes pay per KB too.
		{"large items", 300 << 10, "import"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{Indexes: []load.Index{{Name: "GSI1", PartitionKey: "G1PK"}}, ImportGBPerHour: 10, ImportOverhead: time.Minute})
			var bytes int64
			for i := range 1000 {
				it := item(strings.Repeat("k", 1+i%5), tc.pad)
				e.Add("E", "k", it)
				bytes += int64(ImportLineBytes(it))
			}
			est := e.Estimate()
			imp := est.Import
			if imp.UncompressedBytes != bytes || imp.PricePerGB != DefaultPricePerGBImport {
				t.Errorf("import: %+v; want %d bytes at the default price", imp, bytes)
			}
			if want := float64(bytes) / GB * DefaultPricePerGBImport; math.Abs(imp.CostUSD-want) > 1e-12 {
				t.Errorf("import cost %v, want %v", imp.CostUSD, want)
			}
			if want := 60 + float64(bytes)/GB/10*3600; math.Abs(imp.Seconds-want) > 1e-9 {
				t.Errorf("import seconds %v, want %v", imp.Seconds, want)
			}
			if got := est.Cheaper(); got != tc.cheaper {
				t.Errorf("cheaper: %s (writes $%g, import $%g), want %s", got, est.CostUSD, imp.CostUSD, tc.cheaper)
			}
		})
	}
	// With no items the write path is not more expensive.
	if got := New(Config{}).Estimate().Cheaper(); got != "write" {
		t.Errorf("no items: cheaper %s", got)
	}
	// A high import price makes writes cheaper.
	e := New(Config{PricePerGBImport: 1000})
	e.Add("E", "k", item("k", 10))
	if got := e.Estimate().Cheaper(); got != "write" {
		t.Errorf("import at $1000/GB: cheaper %s", got)
	}
}

func TestImportFileLimit(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	if n := ImportFiles(64*mib*MaxImportFiles, DefaultExportFileSize); n != MaxImportFiles {
		t.Errorf("ImportFiles at the limit: %d", n)
	}
	if s := FileLimit(64*mib*MaxImportFiles, DefaultExportFileSize); s != "" {
		t.Errorf("FileLimit at the limit: %q", s)
	}
	// 4 TiB in 64 MiB files is 65,536 files.
	got := FileLimit(4<<40, DefaultExportFileSize)
	want := "65536 files of 64MiB, and Import from S3 takes at most 50000 files per import: export with --file-size 93MiB or more"
	if got != want {
		t.Errorf("FileLimit(4 TiB) = %q, want %q", got, want)
	}
	if n := ImportFiles(4<<40, FileSizeForImport(4<<40)); n > MaxImportFiles {
		t.Errorf("the suggested size still needs %d files", n)
	}
}
