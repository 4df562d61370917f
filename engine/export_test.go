package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

// These tests export (engine.Export) from a real PostgreSQL and compare
// with what a run into a table would write, through a target that keeps
// the items; then they load the export back (RunConfig.Export).

const exportShopSchema = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, total numeric NOT NULL);
INSERT INTO customers SELECT i, 'customer ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'c' || i || '@example.com' END FROM generate_series(1, 400) i;
INSERT INTO orders SELECT i, 1 + i % 400, i * 10.25 FROM generate_series(1, 2000) i;
`

const exportShopMapping = `table: Shop
keys: { partition: PK, sort: SK }
entityAttribute: type
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{id}", sk: "PROFILE" }
    attributes: { name: name }
    index:
      GSI1: { pk: "EMAIL#{email}", sk: "CUSTOMER" }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{id:8}" }
    attributes: { total: total }
`

func exportShop(t *testing.T, extraSQL string) (string, *mapping.Mapping) {
	t.Helper()
	pg := migratetest.PostgresURL(t)
	migratetest.Exec(t, pg, exportShopSchema+extraSQL)
	m, err := mapping.Parse("shop.yaml", []byte(exportShopMapping))
	if err != nil {
		t.Fatal(err)
	}
	return pg, m
}

// keeper is a table-like target: it keeps and acknowledges every item.
type keeper struct {
	mu    sync.Mutex
	items map[string]string // canonical JSON by key
	attrs map[string]map[string]types.AttributeValue
	// failAfter > 0 fails Write after that many items (the rest unacked).
	failAfter int
}

func (k *keeper) Open(context.Context) (contract.TargetInfo, error) {
	return contract.TargetInfo{Kind: "memory", Name: "keeper"}, nil
}

func (k *keeper) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	var st contract.Stats
	st.Entities = map[string]contract.EntityStats{}
	n := 0
	for it := range items {
		if k.failAfter > 0 && n >= k.failAfter {
			for range items {
			}
			return st, errors.New("keeper: gave up")
		}
		n++
		c, _ := diff.Canonical(it.Attrs)
		k.mu.Lock()
		if k.items == nil {
			k.items, k.attrs = map[string]string{}, map[string]map[string]types.AttributeValue{}
		}
		k.items[exportKey(it.Attrs)] = string(c)
		k.attrs[exportKey(it.Attrs)] = it.Attrs
		k.mu.Unlock()
		it.Ack()
		st.Total.Written++
	}
	return st, nil
}

func exportKey(a map[string]types.AttributeValue) string {
	return a["PK"].(*types.AttributeValueMemberS).Value + "|" + a["SK"].(*types.AttributeValueMemberS).Value
}

func (k *keeper) sorted() []string {
	var out []string
	for _, v := range k.items {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// exported is an export's result with its manifest (nil until complete).
type exported struct {
	*engine.ExportResult
	Manifest *export.Manifest
}

func exportTo(t *testing.T, pg string, m *mapping.Mapping, dir string, mod func(*engine.ExportConfig)) (*exported, error) {
	t.Helper()
	cfg := engine.ExportConfig{
		Run:      engine.RunConfig{Mapping: m, Postgres: pg, StateFile: filepath.Join(dir, "..", filepath.Base(dir)+".state.json")},
		To:       dir,
		FileSize: 16 << 10,
	}
	if mod != nil {
		mod(&cfg)
	}
	res, err := engine.Export(t.Context(), cfg)
	if res == nil {
		return nil, err
	}
	out := &exported{ExportResult: res}
	if res.Complete {
		out.Manifest = openExport(t, dir).Manifest
		if out.Manifest.ContentHash != res.ContentHash {
			t.Errorf("the result says content hash %s, the manifest %s", res.ContentHash, out.Manifest.ContentHash)
		}
	}
	return out, err
}

// openExport reads the export in dir.
func openExport(t *testing.T, dir string) *export.Source {
	t.Helper()
	st, err := export.NewStore(export.Where{Dir: dir}, nil, export.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := export.Open(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// An export holds exactly the items a run writes, its manifest has
// verify's content hashes, and loading it (Run with Export) writes those
// items again.
func TestExportEqualsRun(t *testing.T) {
	t.Parallel()
	pg, m := exportShop(t, "")
	var direct keeper
	if _, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: &direct, StateFile: filepath.Join(t.TempDir(), "s.json")}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "export")
	res, err := exportTo(t, pg, m, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	man := res.Manifest
	if man == nil || !man.Complete || man.Items != int64(len(direct.items)) || len(man.Files) < 3 {
		t.Fatalf("manifest %+v for %d items", man, len(direct.items))
	}
	if res.Run.Target.Kind != "export" || res.Run.Total.ItemsWritten != man.Items || man.Rows != 2400 {
		t.Errorf("run: %+v", res.Run.Total)
	}
	sums := map[string]*diff.Sum{}
	for _, attrs := range direct.attrs {
		e := attrs["type"].(*types.AttributeValueMemberS).Value
		if sums[e] == nil {
			sums[e] = &diff.Sum{}
		}
		h, _ := diff.Hash(attrs)
		sums[e].Add(h)
	}
	for _, e := range man.Entities {
		if sums[e.Entity] == nil || e.ContentHash != sums[e.Entity].String() {
			t.Errorf("entity %s: manifest hash %s, run's items %v", e.Entity, e.ContentHash, sums[e.Entity])
		}
	}

	src := openExport(t, dir)
	var loaded keeper
	lr, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Export: src, Target: &loaded, StateFile: filepath.Join(t.TempDir(), "load.json")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(loaded.sorted(), direct.sorted()) {
		t.Errorf("loading the export wrote %d items, the run %d, not the same", len(loaded.items), len(direct.items))
	}
	if lr.Total.RowsRead != man.Items || lr.AllRuns.Items != man.Items {
		t.Errorf("load: %+v", lr.Total)
	}
}

// A load that fails halfway resumes after the last line done, and a
// share of the files (k/N) loads only its files.
func TestLoadExportResumesAndShares(t *testing.T) {
	t.Parallel()
	pg, m := exportShop(t, "")
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := exportTo(t, pg, m, dir, nil); err != nil {
		t.Fatal(err)
	}
	src := openExport(t, dir)
	state := filepath.Join(t.TempDir(), "load.json")
	cfg := engine.RunConfig{Mapping: m, Export: src, StateFile: state, Writer: load.Config{Concurrency: 1}}
	k := &keeper{failAfter: 700}
	cfg.Target = k
	if _, err := engine.Run(t.Context(), cfg); err == nil {
		t.Fatal("the failing load succeeded")
	}
	first := len(k.items)
	k.failAfter = 0
	cfg.Resume = true
	res, err := engine.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(k.items)) != src.Manifest.Items || !res.Resumed || res.Total.RowsRead > src.Manifest.Items-int64(first)+1000 {
		t.Errorf("after resume: %d items of %d; the resumed run read %d lines after %d were done", len(k.items), src.Manifest.Items, res.Total.RowsRead, first)
	}

	// Another export ID (a share) cannot resume this state file.
	if err := src.Select(1, 2); err != nil {
		t.Fatal(err)
	}
	cfg.Resume = false
	if _, err := engine.Run(t.Context(), cfg); err != nil {
		t.Fatalf("a new load over a complete state file: %v", err)
	}
	var shares [2]keeper
	total := 0
	for i := range 2 {
		if err := src.Select(i+1, 2); err != nil {
			t.Fatal(err)
		}
		c := engine.RunConfig{Mapping: m, Export: src, Target: &shares[i], StateFile: filepath.Join(t.TempDir(), "share.json")}
		if _, err := engine.Run(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		total += len(shares[i].items)
		for key := range shares[i].items {
			if i == 1 && shares[0].items[key] != "" {
				t.Errorf("%s is in both shares", key)
			}
		}
	}
	if int64(total) != src.Manifest.Items || len(shares[0].items) == 0 || len(shares[1].items) == 0 {
		t.Errorf("shares hold %d + %d items of %d", len(shares[0].items), len(shares[1].items), src.Manifest.Items)
	}

	// A state file of another share is refused on resume.
	if err := src.Select(1, 2); err != nil {
		t.Fatal(err)
	}
	k2 := &keeper{failAfter: 10}
	c := engine.RunConfig{Mapping: m, Export: src, Target: k2, StateFile: filepath.Join(t.TempDir(), "other.json")}
	engine.Run(t.Context(), c)
	if err := src.Select(2, 2); err != nil {
		t.Fatal(err)
	}
	c.Resume = true
	if _, err := engine.Run(t.Context(), c); !errors.Is(err, engine.ErrState) {
		t.Errorf("resume with another share: %v", err)
	}
	// And another mapping is refused.
	other, _ := mapping.Parse("other.yaml", []byte(exportShopMapping+"\n"))
	c = engine.RunConfig{Mapping: other, Export: src, Target: &keeper{}, StateFile: filepath.Join(t.TempDir(), "m.json")}
	if _, err := engine.Run(t.Context(), c); !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "another mapping") {
		t.Errorf("load with another mapping: %v", err)
	}
}

// Bad rows go to the reject file as in a run, and are left out of the
// export; with --on-error fail the export stops, and after the row is
// fixed it resumes into the same files.
func TestExportBadRows(t *testing.T) {
	t.Parallel()
	pg, m := exportShop(t, `INSERT INTO customers VALUES (1000, 'bad', 'x#y'), (1001, 'long', repeat('e', 2100));
		INSERT INTO orders VALUES (5000, 1000, 1);`)
	dir := filepath.Join(t.TempDir(), "export")
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	res, err := exportTo(t, pg, m, dir, func(c *engine.ExportConfig) {
		c.Run.OnError, c.Run.RejectFile, c.Run.MaxRejects = engine.OnErrorReject, rejects, -1
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, rejects)
	if len(lines) != 2 || !strings.Contains(lines[0], `"stage":"transform"`) || !strings.Contains(lines[0], "id=1000") ||
		!strings.Contains(lines[1], `"kind":"key-too-long"`) || !strings.Contains(lines[1], "id=1001") {
		t.Errorf("reject file: %.300q", lines)
	}
	// 400 customers and 2000 orders, and the order of customer 1000; the
	// customers 1000 and 1001 are rejects.
	if res.Manifest.Rejects != 2 || res.Manifest.Items != 400+2000+1 {
		t.Errorf("manifest: %d items, %d rejects", res.Manifest.Items, res.Manifest.Rejects)
	}

	dir2 := filepath.Join(t.TempDir(), "export2")
	res, err = exportTo(t, pg, m, dir2, nil)
	if err == nil || !strings.Contains(err.Error(), "bad row") || !strings.Contains(err.Error(), "id=1000") {
		t.Fatalf("export with a bad row: %v", err)
	}
	if res.Manifest != nil || res.Run.Status != engine.StatusFailed {
		t.Errorf("a failed export wrote a manifest or says %s", res.Run.Status)
	}
	stored := 0
	for _, f := range res.Files {
		stored += int(f.Items)
	}
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `UPDATE customers SET email = NULL WHERE id IN (1000, 1001)`); err != nil {
		t.Fatal(err)
	}
	res, err = exportTo(t, pg, m, dir2, func(c *engine.ExportConfig) { c.Run.Resume = true })
	if err != nil {
		t.Fatal(err)
	}
	if !res.Run.Resumed || res.Manifest == nil || res.Manifest.Items != 400+2000+2+1 {
		t.Errorf("resumed export: %+v", res.Manifest)
	}
	if res.Run.Total.ItemsWritten != res.Manifest.Items-int64(stored) {
		t.Errorf("the resumed run exported %d items, %d were stored before", res.Run.Total.ItemsWritten, stored)
	}
}

// A crash after the last checkpoint of a complete export, before its
// manifest: resuming writes the manifest from the committed files.
func TestResumeWritesAMissingManifest(t *testing.T) {
	t.Parallel()
	pg, m := exportShop(t, "")
	dir := filepath.Join(t.TempDir(), "export")
	res, err := exportTo(t, pg, m, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	resume := func(c *engine.ExportConfig) { c.Run.Resume = true }
	if _, err := exportTo(t, pg, m, dir, resume); !errors.Is(err, engine.ErrNothingToResume) {
		t.Fatalf("resume of a complete export: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	again, err := exportTo(t, pg, m, dir, resume)
	if err != nil {
		t.Fatal(err)
	}
	if again.Manifest == nil || again.Manifest.ContentHash != res.Manifest.ContentHash || again.Manifest.Items != res.Manifest.Items ||
		again.Manifest.Rows != res.Manifest.Rows || len(again.Manifest.Files) != len(res.Manifest.Files) {
		t.Errorf("recovered manifest %+v, the original %+v", again.Manifest, res.Manifest)
	}
	openExport(t, dir) // the recovered export opens
}

// OpenExport takes the share it is given, says so in its log, and refuses
// a share that holds no file.
func TestOpenExportShare(t *testing.T) {
	t.Parallel()
	pg, m := exportShop(t, "")
	dir := filepath.Join(t.TempDir(), "export")
	exp, err := exportTo(t, pg, m, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := len(exp.Manifest.Files)
	if total < 3 {
		t.Fatalf("the export has %d files; the test wants at least 3", total)
	}
	all, err := engine.OpenExport(t.Context(), engine.OpenExportConfig{From: dir})
	if err != nil || len(all.Files()) != total {
		t.Fatalf("the whole export: %v files, %v", all, err)
	}
	var logged strings.Builder
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	src, err := engine.OpenExport(t.Context(), engine.OpenExportConfig{From: dir, Share: 2, Shares: 3, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(src.Files()), (total+1)/3; got != want {
		t.Errorf("share 2 of 3 of %d files has %d; want %d", total, got, want)
	}
	if want := fmt.Sprintf(`files="%d of %d (share 2/3)"`, len(src.Files()), total); !strings.Contains(logged.String(), "loading an export") || !strings.Contains(logged.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logged.String())
	}
	if _, err := engine.OpenExport(t.Context(), engine.OpenExportConfig{From: dir, Share: total + 1, Shares: total + 1}); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a share with no file: %v", err)
	}
	if _, err := engine.OpenExport(t.Context(), engine.OpenExportConfig{From: filepath.Join(dir, "none")}); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("no export there: %v", err)
	}
}
