package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/draft"
	goldenfile "github.com/pgdynamo/migrate/internal/golden"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/mapping"
)

// golden compares got with testdata/<name>.golden (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), got)
}

// render runs one renderer into a buffer.
func render(t *testing.T, fn func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.Bytes()
}

func runResult() *engine.RunResult {
	return &engine.RunResult{
		Table: "Bookstore", Seconds: 12.34,
		Entities: []engine.EntityResult{
			{Entity: "Customer", Source: "public.customers", RowsRead: 1500, ItemsWritten: 1500, Retries: 3, Throttled: 2, WCU: 1500, Seconds: 4.25},
			{Entity: "Order", Source: "public.orders", RowsRead: 120000, ItemsWritten: 119990, Rejects: 10, WCU: 240000, Seconds: 11.9},
		},
		Total:    engine.EntityResult{Entity: "TOTAL", RowsRead: 121500, ItemsWritten: 121490, Rejects: 10, Retries: 3, Throttled: 2, WCU: 241500, Seconds: 12.3},
		Writer:   engine.WriterResult{Calls: 4860, ThrottledCalls: 2, DirectCalls: 4800, DirectFallbacks: 1},
		Snapshot: &engine.SnapshotResult{HeldSeconds: 10.5, Overrides: []extract.Setting{{Name: "statement_timeout", Value: "30s", Source: "database"}}},
	}
}

func TestRunSummaryGolden(t *testing.T) {
	golden(t, "run_summary", render(t, func(b *bytes.Buffer) error { return RunSummary(b, runResult()) }))
	// A run that read an export holds no snapshot, and one that wrote
	// nothing made no call.
	bare := &engine.RunResult{Total: engine.EntityResult{Entity: "TOTAL"}}
	golden(t, "run_summary_bare", render(t, func(b *bytes.Buffer) error { return RunSummary(b, bare) }))
}

func TestSeedGolden(t *testing.T) {
	counts := seed.Counts{Customers: 100, Addresses: 150, Authors: 10, Books: 50, Orders: 400, OrderItems: 1100}
	golden(t, "seed", render(t, func(b *bytes.Buffer) error {
		return Seed(b, seed.Config{Scale: 100, Seed: 7}, counts, 2*time.Second)
	}))
}

func TestExportGolden(t *testing.T) {
	res := &engine.ExportResult{Location: "s3://exports/bookstore", Complete: true, ContentHash: "sha256:abc123",
		Files: []engine.ExportedFile{
			{Name: "data/part-000001.json.gz", Items: 1_000_000, Bytes: 40 << 20, UncompressedBytes: 3 << 30},
			{Name: "data/part-000002.json.gz", Items: 234_567, Bytes: 900 << 10, UncompressedBytes: 60 << 20},
		}}
	golden(t, "export", render(t, func(b *bytes.Buffer) error { return Export(b, res) }))
	partial := &engine.ExportResult{Location: "out", Files: []engine.ExportedFile{{Items: 3, Bytes: 512, UncompressedBytes: 2048}}}
	golden(t, "export_partial", render(t, func(b *bytes.Buffer) error { return Export(b, partial) }))
}

func syncStatus() engine.SyncStatus {
	return engine.SyncStatus{Elapsed: 90 * time.Second, ServerLSN: replicate.LSN(0x16B3748), Confirmed: replicate.LSN(0x16B3700),
		LagBytes: 72, LagSeconds: 0.4, LastLatency: 0.12, Transactions: 40, Changes: 120, ItemsPut: 300, ItemsDeleted: 12, Rounds: 9,
		ChangesPerSecond: 1.3, ItemsPerSecond: 3.5, CaughtUp: true,
		Fanout: affect.Fanout{Changes: 120, Items: 312, Max: 25, MaxChange: "UPDATE public.customers id=7"}}
}

func TestSyncGolden(t *testing.T) {
	golden(t, "sync_end", render(t, func(b *bytes.Buffer) error { return SyncEnd(b, syncStatus()) }))
	created := engine.SlotInfo{Slot: "migrate_bookstore", Publication: "migrate_bookstore", SlotCreated: true, PublicationCreated: true,
		Tables: []string{"public.customers", "public.orders"}, ConsistentPoint: replicate.LSN(0x1000028)}
	reused := engine.SlotInfo{Slot: "migrate_bookstore", Publication: "migrate_bookstore", ConfirmedFlush: replicate.LSN(0x16B3700), RetainedBytes: 3 << 20}
	drop := "migrate sync --drop --mapping m.yaml --slot migrate_bookstore --publication migrate_bookstore"
	golden(t, "sync_slot", render(t, func(b *bytes.Buffer) error {
		return errors.Join(SlotInfo(b, created, drop), SlotInfo(b, reused, drop))
	}))
	golden(t, "sync_drop", render(t, func(b *bytes.Buffer) error {
		return errors.Join(
			DropSync(b, &engine.DropSyncResult{Slot: "s", Publication: "p", SlotDropped: true, PublicationDropped: true, RetainedBytes: 5 << 20}, true),
			DropSync(b, &engine.DropSyncResult{Slot: "s", Publication: "p"}, true),
			DropSync(b, &engine.DropSyncResult{Slot: "s", Publication: "p"}, false))
	}))
	doc := SyncSummary(&engine.SyncResult{Slot: created, Final: syncStatus(), CaughtUp: true}, errors.New("sync: stopped"))
	golden(t, "sync_summary_json", render(t, func(b *bytes.Buffer) error {
		p := filepath.Join(t.TempDir(), "s.json")
		if err := WriteJSONFile(p, doc); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	}))
}

func TestSyncLeftGolden(t *testing.T) {
	c := SyncCommands{Table: "Bookstore", Slot: "migrate_bookstore", Again: "migrate sync --mapping m.yaml --pg \"$MIGRATE_PG_URL\" --slot migrate_bookstore --publication migrate_bookstore",
		DropCmd: "migrate sync --drop --mapping m.yaml --slot migrate_bookstore --publication migrate_bookstore"}
	made := engine.SlotInfo{Slot: "migrate_bookstore", Publication: "migrate_bookstore"}
	cases := []struct {
		name string
		res  *engine.SyncResult
		err  error
	}{
		{"caught up", &engine.SyncResult{Slot: made, CaughtUp: true, CaughtUpAt: replicate.LSN(0x16B3700)}, nil},
		{"schema changed", &engine.SyncResult{Slot: made, Final: syncStatus()}, fmt.Errorf("sync: %w", engine.ErrSchemaChanged)},
		{"stopped", &engine.SyncResult{Slot: made, Final: syncStatus()}, errors.New("sync: DynamoDB failed")},
		{"WAL guard dropped the slot", &engine.SyncResult{Slot: made, Final: syncStatus()}, fmt.Errorf("sync: %w", engine.ErrSlotWALLimit)},
		{"no slot made", &engine.SyncResult{}, errors.New("sync: no source")},
		{"no result", nil, errors.New("sync: no mapping")},
	}
	golden(t, "sync_left", render(t, func(b *bytes.Buffer) error {
		for _, tc := range cases {
			fmt.Fprintf(b, "== %s\n", tc.name)
			if err := SyncLeft(b, b, tc.res, tc.err, c); err != nil {
				return err
			}
		}
		return nil
	}))
}

func TestSyncStateGolden(t *testing.T) {
	updated := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	full := &engine.SyncState{
		Slot: &replicate.Slot{Name: "migrate_bookstore", Active: true, ActivePID: 4242, ConfirmedFlush: replicate.LSN(0x16B3700),
			RestartLSN: replicate.LSN(0x16B0000), RetainedBytes: 14080, WALStatus: "reserved"},
		ServerLSN: replicate.LSN(0x16B3748), LagBytes: 72, MaxSlotWALKeepSize: "-1",
		Stream:      &engine.StreamState{PID: 4242, State: "streaming", ReplyAge: 1234567 * time.Microsecond, FlushLag: 3 * time.Millisecond},
		Publication: []string{"public.customers", "public.orders"},
		Load:        &engine.LoadCheckpoint{Path: ".migrate/Bookstore.state.json", Table: "Bookstore", Complete: true, Updated: updated},
	}
	none := &engine.SyncState{ServerLSN: replicate.LSN(0x16B3748), MaxSlotWALKeepSize: "10GB"}
	loading := &engine.SyncState{Slot: &replicate.Slot{Name: "s", WALStatus: "extended"}, Publication: []string{},
		Load: &engine.LoadCheckpoint{Path: "s.json", Updated: updated}}
	for name, st := range map[string]*engine.SyncState{"full": full, "none": none, "loading": loading} {
		golden(t, "sync_state_"+name, render(t, func(b *bytes.Buffer) error { return SyncState(b, "migrate_bookstore", "migrate_bookstore", st) }))
		golden(t, "sync_state_"+name+"_json", render(t, func(b *bytes.Buffer) error { return SyncStateJSON(b, "migrate_bookstore", "migrate_bookstore", st) }))
	}
}

func TestCutoverGolden(t *testing.T) {
	goRes := &engine.CutoverResult{Go: true, CaughtUp: replicate.LSN(0x16B3700), Applied: 12, Quiet: 10 * time.Second,
		Final: replicate.LSN(0x16B3748), Elapsed: 12345 * time.Millisecond,
		Verify: &report.Verify{Sample: 1, Identical: true, Summary: report.VerifySummary{Expected: 100, Matching: 100}}}
	golden(t, "cutover_go", render(t, func(b *bytes.Buffer) error { return Cutover(b, "Bookstore", goRes) }))
	noGo := &engine.CutoverResult{CaughtUp: replicate.LSN(0x16B3700), Quiet: 10 * time.Second, Final: replicate.LSN(0x16B3748),
		QuietChanges: map[string]int64{"public.orders": 3, "public.customers": 1},
		Writers:      []engine.TableWriter{{PID: 77, Table: "public.orders", OpenSeconds: 4.5}},
		Verify:       &report.Verify{Sample: 0.01, Summary: report.VerifySummary{Expected: 10, Matching: 9, Missing: 1}},
		NoGo:         []string{"the source took 4 writes during the quiet period", "verify found differences"}}
	golden(t, "cutover_nogo", render(t, func(b *bytes.Buffer) error { return Cutover(b, "Bookstore", noGo) }))
}

func TestItemsGolden(t *testing.T) {
	items := []map[string]types.AttributeValue{
		{
			"PK":    &types.AttributeValueMemberS{Value: "CUSTOMER#42"},
			"SK":    &types.AttributeValueMemberS{Value: "ORDER#2026-01-02T03:04:05.000000Z"},
			"total": &types.AttributeValueMemberN{Value: "12345678901234567890.25"},
			"tags":  &types.AttributeValueMemberSS{Value: []string{"gift", "rush"}},
			"sizes": &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
			"blob":  &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
			"lines": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"qty": &types.AttributeValueMemberN{Value: "3"}, "gone": &types.AttributeValueMemberNULL{Value: true}}}}},
			"paid": &types.AttributeValueMemberBOOL{Value: true},
		},
		{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#43"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}},
	}
	golden(t, "items_json", render(t, func(b *bytes.Buffer) error { return Items(b, OutputJSON, items) }))
	golden(t, "items_dynamodb_json", render(t, func(b *bytes.Buffer) error { return Items(b, OutputDynamoDBJSON, items) }))
}

func TestValidateGolden(t *testing.T) {
	proven := mapping.KeyProof{Entities: []mapping.EntityKeyProof{{Entity: "Customer", Unique: true, Reason: "PK holds customers.id"}}}
	partly := mapping.KeyProof{Entities: []mapping.EntityKeyProof{
		{Entity: "Customer", Unique: true, Reason: "PK holds customers.id"},
		{Entity: "OrderItem", Reason: "no unique key of order_items is in its key template"},
	}}
	golden(t, "key_proof", render(t, func(b *bytes.Buffer) error { return errors.Join(KeyProof(b, proven), KeyProof(b, partly)) }))
	problems := []error{errors.New("wal_level is replica, not logical"), errors.New("public.orders: replica identity default lacks status: ALTER TABLE ...")}
	golden(t, "sync_readiness", render(t, func(b *bytes.Buffer) error {
		return errors.Join(SyncReadiness(b, "m.yaml", nil, false), SyncReadiness(b, "m.yaml", problems, false), SyncReadiness(b, "m.yaml", problems, true))
	}))
	shards := &engine.StateShards{Path: ".migrate/B.state.json", Counts: []engine.StateShardCount{{Entity: "Order", Index: "GSI2", Count: 14}}}
	golden(t, "state_shards", render(t, func(b *bytes.Buffer) error {
		return errors.Join(StateShards(b, "verify", shards), StateShards(b, "prove", nil))
	}))
}

func TestInitSummaryGolden(t *testing.T) {
	d := &draft.Draft{Table: "shop", Entities: 6, Indexes: 1, Offers: 2, Skipped: []string{"public.audit: no primary key"}}
	golden(t, "init_summary", render(t, func(b *bytes.Buffer) error {
		return errors.Join(InitSummary(b, "-", false, d), InitSummary(b, "m.yaml", true, &draft.Draft{Table: "shop", Entities: 1, Indexes: 3}))
	}))
}

func TestRequestJSONGolden(t *testing.T) {
	req := struct {
		TableName *string
		Billing   string
		Unset     *int
		Indexes   []map[string]any
	}{TableName: new(string), Billing: "PAY_PER_REQUEST", Indexes: []map[string]any{{"IndexName": "GSI1", "Projection": nil}}}
	*req.TableName = "Bookstore"
	golden(t, "request_json", render(t, func(b *bytes.Buffer) error { return RequestJSON(b, req) }))
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{{0, "file", "0 files"}, {1, "file", "1 file"}, {2, "entity", "2 entities"}, {1, "entity", "1 entity"}} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}

func TestSourceChangesGolden(t *testing.T) {
	changes := []engine.SourceChange{{Source: "public.orders", RowsThen: 100, LastKeyThen: "(100)", RowsNow: 98, LastKeyNow: "(100)"}}
	golden(t, "source_changes", render(t, func(b *bytes.Buffer) error {
		return errors.Join(SourceChanges(b, nil, "unused"), SourceChanges(b, changes, "migrate verify 'my map.yaml' --table Bookstore"))
	}))
}

func TestImportGolden(t *testing.T) {
	res := &engine.ImportResult{ARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/Bookstore/import/01", Status: "COMPLETED",
		Table: "Bookstore", Processed: 1000, Imported: 998, Errors: 2, Expected: 1000, Seconds: 93.4}
	golden(t, "import", render(t, func(b *bytes.Buffer) error { return Import(b, res) }))
}
