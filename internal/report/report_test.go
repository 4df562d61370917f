package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/pgdynamo/migrate/internal/golden"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// samplePlan exercises every part of the report, with values that need
// escaping in each format.
func samplePlan() *Plan {
	return &Plan{
		GeneratedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Mapping:     "testdata/bookstore.yaml",
		Table:       Table{Name: "Bookstore", Exists: true, PartitionKey: "PK", SortKey: "SK", EntityAttribute: "type"},
		Reads:       Reads{Mode: "scan", StaleChecked: true, Calls: 8, ItemsRead: 2351, ReadUnits: 61.5, Seconds: 1.94},
		Summary:     PlanSummary{Expected: 2349, Create: 4, Change: 5, Unchanged: 2340, Stale: 6, Foreign: 2},
		Entities: []EntityPlan{
			{Entity: "Customer", Source: "public.customers", Expected: 61, Create: 1, Change: 2, Unchanged: 58, Bytes: 25620, MaxItemBytes: 1203, WriteUnits: 112},
			{Entity: "Order", Source: "public.orders", Expected: 210, Create: 1, Change: 3, Unchanged: 206, Stale: 1, Bytes: 48930, MaxItemBytes: 262, WriteUnits: 420},
			{Entity: "OrderLine", Source: "public.order_items", Expected: 2078, Create: 2, Unchanged: 2076, Stale: 5, Bytes: 436380, MaxItemBytes: 301, WriteUnits: 4156},
		},
		Creates: []ItemRef{
			{Key: Key{PK: "CUSTOMER#61", SK: "PROFILE"}, Entity: "Customer", Origin: "public.customers customer_id=61"},
			{Key: Key{PK: "CUSTOMER#61", SK: "ORDER#2024-03-01T10:00:00.000000Z#000000000211"}, Entity: "Order", Origin: "public.orders order_id=211"},
			{Key: Key{PK: "ORDER#211", SK: "BOOK#000000000003"}, Entity: "OrderLine", Origin: "public.order_items order_id=211, book_id=3"},
		},
		Changes: []ItemChange{
			{ItemRef: ItemRef{Key: Key{PK: "CUSTOMER#3", SK: "PROFILE"}, Entity: "Customer", Origin: "public.customers customer_id=3"}, Attributes: []AttributeChange{
				{Path: "addresses.home.city", Op: "changed", Old: raw(`{"S":"Oslo"}`), New: raw(`{"S":"Trondheim | Nord*"}`)},
				{Path: "email", Op: "removed", Old: raw(`{"S":"ann@example.com"}`)},
				{Path: "name", Op: "changed", Old: raw(`{"S":"Ann <Admin>"}`), New: raw(`{"S":"Ånn Ørsted"}`)},
				{Path: "phone", Op: "added", New: raw(`{"S":"+47 555 1234"}`)},
			}},
			{ItemRef: ItemRef{Key: Key{PK: "CUSTOMER#5", SK: "ORDER#2023-07-14T08:15:00.123456Z#000000000042"}, Entity: "Order", Origin: "public.orders order_id=42"}, Attributes: []AttributeChange{
				{Path: "shipCity", Op: "changed", Old: raw(`{"S":"Bergen"}`), New: raw(`{"S":"Newtown"}`)},
				{Path: "tags", Op: "changed", Old: raw(`{"SS":["a","b"]}`), New: raw(`{"SS":["a","b","a very long tag that goes on and on and on to be cut somewhere"]}`)},
				{Path: "total", Op: "changed", Old: raw(`{"N":"10.5"}`), New: raw(`{"N":"11"}`)},
			}},
		},
		Stale: []ItemRef{
			{Key: Key{PK: "CUSTOMER#9", SK: "ORDER#2022-01-01T00:00:00.000000Z#000000000077"}, Entity: "Order"},
			{Key: Key{PK: "ORDER#77", SK: "BOOK#000000000001"}, Entity: "OrderLine"},
		},
		MaxDetails: 3,
		Capacity: Capacity{
			Items: 2349, Bytes: 510930, AvgItemBytes: 217.5, MaxItemBytes: 1203,
			MaxItem:                   &ItemRef{Key: Key{PK: "CUSTOMER#7", SK: "PROFILE"}, Entity: "Customer"},
			WriteUnits:                WriteUnits{Table: 2349, Indexes: 2339, Total: 4688, CreatesAndChanges: 18},
			PricePerMillionWriteUnits: 0.625, EstimatedCostUSD: 0.00293, WriteRate: 1000, EstimatedSeconds: 2.349,
			Warm:                 &WarmLoad{Billing: "onDemand", NewTable: true, WriteUnitsPerSecond: 4000, HotPartitionSeconds: 0.048, EstimatedSeconds: 1.172},
			Import:               ImportPath{UncompressedBytes: 611_000, PricePerGB: 0.15, EstimatedCostUSD: 0.0000854, GBPerHour: 20, OverheadSeconds: 300, EstimatedSeconds: 300.1},
			Cheaper:              "import",
			SizeHistogram:        []SizeBin{{0, 128, 80}, {128, 256, 1900}, {256, 512, 350}, {512, 1024, 17}, {1024, 2048, 2}},
			TopPartitionsByItems: []Partition{{PK: "CUSTOMER#7", Items: 48, Bytes: 11200}, {PK: "ORDER#12", Items: 9, Bytes: 2400}},
			TopPartitionsByBytes: []Partition{{PK: "CUSTOMER#7", Items: 48, Bytes: 11200}, {PK: "CUSTOMER#3", Items: 5, Bytes: 3100}},
			Indexes: []IndexKeys{
				{Index: "GSI1", Items: 2129, WriteUnits: 2129, DistinctPartitionKeys: 118, Method: "exact"},
				{Index: "GSI2", Items: 210, WriteUnits: 210, DistinctPartitionKeys: 68, Method: "exact"},
			},
			Shards: []Shards{{Entity: "Order", Index: "GSI2", AvgItemBytes: 233, ItemsPerRCU: 17, PartitionMaxReadRate: 51000, ReadRate: 600000, Raw: 12, Count: 14}},
			Copies: []CopyCost{
				{Entity: "Order", From: "addresses", Attributes: []string{"shipCity", "shipCountry"}, Items: 198},
				{Entity: "OrderLine", From: "books > authors", Attributes: []string{"authorName"}, Items: 2078},
			},
			Snapshot: &SnapshotHold{RunSeconds: 2.349, PlanSeconds: 1.91,
				Overrides: []Setting{{Name: "idle_in_transaction_session_timeout", Value: "15s", Source: "database"}}},
		},
	}
}

func sampleVerify(identical bool) *Verify {
	v := &Verify{
		GeneratedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Mapping:     "testdata/bookstore.yaml",
		Table:       Table{Name: "Bookstore", Exists: true, PartitionKey: "PK", SortKey: "SK", EntityAttribute: "type"},
		Reads:       Reads{Mode: "scan", Consistent: true, StaleChecked: true, Calls: 8, ItemsRead: 2349, ReadUnits: 123, Seconds: 2.5},
		Sample:      1,
		Identical:   true,
		Summary:     VerifySummary{Expected: 2349, Actual: 2349, Matching: 2349},
		Entities: []EntityVerify{
			{Entity: "Customer", Expected: 61, Actual: 61, ExpectedHash: strings.Repeat("ab", 32), ActualHash: strings.Repeat("ab", 32), Match: true},
			{Entity: "Order", Expected: 210, Actual: 210, ExpectedHash: strings.Repeat("cd", 32), ActualHash: strings.Repeat("cd", 32), Match: true},
		},
		MaxDetails: 20,
	}
	if identical {
		return v
	}
	v.Identical = false
	v.Sample = 0.25
	v.Summary = VerifySummary{Expected: 2349, Actual: 2349, Matching: 2346, Missing: 1, Different: 1, Unexpected: 1, Foreign: 3}
	v.Entities[0].ActualHash = strings.Repeat("ef", 32)
	v.Entities[0].Match = false
	v.Missing = []ItemRef{{Key: Key{PK: "CUSTOMER#4", SK: "PROFILE"}, Entity: "Customer", Origin: "public.customers customer_id=4"}}
	v.Different = []ItemChange{{ItemRef: ItemRef{Key: Key{PK: "CUSTOMER#3", SK: "PROFILE"}, Entity: "Customer", Origin: "public.customers customer_id=3"},
		Attributes: []AttributeChange{{Path: "name", Op: "changed", Old: raw(`{"S":"Tampered"}`), New: raw(`{"S":"Ann"}`)}}}}
	v.Unexpected = []ItemRef{{Key: Key{PK: "CUSTOMER#999", SK: "PROFILE"}, Entity: "Customer"}}
	return v
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func render(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	getPlan := samplePlan()
	getPlan.Reads = Reads{Mode: "get", Calls: 24, ItemsRead: 2345, ReadUnits: 1172.5, Seconds: 3.1}
	getPlan.Summary.Stale = 0
	getPlan.Stale = nil
	for i := range getPlan.Entities {
		getPlan.Entities[i].Stale = 0
	}
	missing := samplePlan()
	missing.Table.Exists = false
	missing.Reads = Reads{Mode: "none"}
	missing.Summary = PlanSummary{Expected: 2349, Create: 2349, Problems: 2}
	missing.Changes, missing.Stale = nil, nil
	missing.Problems = []Problem{
		{Kind: "row-error", Entity: "Customer", Origin: "public.customers customer_id=8", Message: "column email: value is not valid UTF-8"},
		{Kind: "duplicate-key", Entity: "Order", Key: &Key{PK: "CUSTOMER#1", SK: "ORDER#x"}, Origin: "public.orders order_id=9", Message: "same primary key as public.orders order_id=8"},
	}

	cases := []struct {
		name string
		f    func(*bytes.Buffer) error
	}{
		{"plan.txt", func(b *bytes.Buffer) error { return Text(b, samplePlan(), TextOptions{}) }},
		{"plan.md", func(b *bytes.Buffer) error { return Markdown(b, samplePlan()) }},
		{"plan.json", func(b *bytes.Buffer) error { return JSON(b, samplePlan()) }},
		{"plan.html", func(b *bytes.Buffer) error { return HTML(b, samplePlan()) }},
		{"plan-get.txt", func(b *bytes.Buffer) error { return Text(b, getPlan, TextOptions{}) }},
		{"plan-missing-table.txt", func(b *bytes.Buffer) error { return Text(b, missing, TextOptions{}) }},
		{"plan-missing-table.md", func(b *bytes.Buffer) error { return Markdown(b, missing) }},
		{"verify.txt", func(b *bytes.Buffer) error { return VerifyText(b, sampleVerify(false), TextOptions{}) }},
		{"verify.md", func(b *bytes.Buffer) error { return VerifyMarkdown(b, sampleVerify(false)) }},
		{"verify.json", func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(false)) }},
		{"verify-identical.txt", func(b *bytes.Buffer) error { return VerifyText(b, sampleVerify(true), TextOptions{}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, render(t, tc.f))
		})
	}
}

func TestColorOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	plain := string(render(t, func(b *bytes.Buffer) error { return Text(b, samplePlan(), TextOptions{}) }))
	color := string(render(t, func(b *bytes.Buffer) error { return Text(b, samplePlan(), TextOptions{Color: true}) }))
	if strings.Contains(plain, "\x1b[") {
		t.Error("escape codes without Color")
	}
	for _, code := range []string{ansiGreen, ansiYellow, ansiRed, ansiBold} {
		if !strings.Contains(color, code) {
			t.Errorf("no %q with Color", code)
		}
	}
	// Colour changes nothing but the escape codes.
	stripped := strings.NewReplacer(ansiReset, "", ansiBold, "", ansiRed, "", ansiGreen, "", ansiYellow, "", ansiDim, "").Replace(color)
	if stripped != plain {
		t.Errorf("coloured text differs from plain text beyond escape codes:\n%s", goldenfile.FirstLineDiff(stripped, plain))
	}
}

func TestJSONStable(t *testing.T) {
	t.Parallel()
	// Empty lists are [] and the schema is always set.
	var b bytes.Buffer
	if err := JSON(&b, &Plan{}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["schema"] != PlanSchema {
		t.Errorf("schema %v", m["schema"])
	}
	for _, k := range []string{"entities", "creates", "changes", "stale", "problems"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s is %T, want a list", k, m[k])
		}
	}
	// The JSON round-trips into the schema types without loss.
	p := samplePlan()
	b.Reset()
	if err := JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	var back Plan
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Summary != p.Summary || len(back.Changes) != len(p.Changes) || Value(back.Changes[0].Attributes[0].New, 0) != Value(p.Changes[0].Attributes[0].New, 0) {
		t.Errorf("round trip lost data: %+v", back.Summary)
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	t.Parallel()
	page := string(render(t, func(b *bytes.Buffer) error { return HTML(b, samplePlan()) }))
	for _, banned := range []string{"<script", "<link", "src=", "@import", "url(", "http://", "https://"} {
		if banned == "http://" {
			// The SVG namespace is an identifier, not a fetch.
			page2 := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
			if strings.Contains(page2, banned) {
				t.Errorf("page contains %q", banned)
			}
			continue
		}
		if strings.Contains(page, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	for _, want := range []string{"<svg", "Item size histogram", "Items per entity", "Largest item collections by bytes", "Ånn Ørsted", "Ann &lt;Admin&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"S":"x \"y\""}`:          `"x \"y\""`,
		`{"N":"12.50"}`:            `12.50`,
		`{"BOOL":true}`:            `true`,
		`{"NULL":true}`:            `null`,
		`{"SS":["a", "b"]}`:        `{"SS":["a","b"]}`,
		`{"M":{"k":{"S":"v"}}}`:    `{"M":{"k":{"S":"v"}}}`,
		`{"S":"0123456789abcdef"}`: `"01234567…`,
	}
	for in, want := range cases {
		max := 60
		if strings.Contains(in, "abcdef") {
			max = 10
		}
		if got := Value(raw(in), max); got != want {
			t.Errorf("Value(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	checks := [][2]string{
		{count(0), "0"}, {count(999), "999"}, {count(1000), "1,000"}, {count(-1234567), "-1,234,567"},
		{size(1023), "1023 B"}, {size(1024), "1.0 KB"}, {size(400 * 1024), "400.0 KB"}, {size(3 << 20), "3.0 MB"},
		{dollars(0.00293), "$0.0029"}, {dollars(12.345), "$12.35"}, {dollars(1234.4), "$1,234"},
		{duration(0.5), "0.50 s"}, {duration(90), "90.0 s"}, {duration(600), "10.0 min"}, {duration(7200), "2.0 h"},
		{pct(1, 1000), "<1%"}, {pct(1, 2), "50%"}, {pctFloat(0.25), "25%"}, {pctFloat(0.001), "0.1%"},
	}
	for _, c := range checks {
		if c[0] != c[1] {
			t.Errorf("got %q, want %q", c[0], c[1])
		}
	}
}

func TestIndexProjectionSaving(t *testing.T) {
	t.Parallel()
	all := IndexKeys{Index: "GSI1", Projection: "ALL", WriteUnits: 10, AllWriteUnits: 10}
	if s := all.Saving(); s != "" {
		t.Errorf("ALL saves %q", s)
	}
	keys := IndexKeys{Index: "GSI2", Projection: "KEYS_ONLY", WriteUnits: 1000, AllWriteUnits: 3500, StorageBytes: 180_000, AllStorageBytes: 2_180_000}
	if got, want := keys.Saving(), "projection KEYS_ONLY saves 2,500 write units and 1.9 MB of storage over ALL"; got != want {
		t.Errorf("saving %q, want %q", got, want)
	}
}
