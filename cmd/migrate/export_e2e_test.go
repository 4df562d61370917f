package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/internal/s3test"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
	"github.com/pgdynamo/migrate/transform"
)

// readManifest reads an export's manifest from the in-process S3.
func readManifest(t *testing.T, srv *s3test.Server, bucket, prefix string) *export.Manifest {
	t.Helper()
	out, err := srv.Client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + "/manifest.json")})
	if err != nil {
		t.Fatalf("manifest of s3://%s/%s: %v", bucket, prefix, err)
	}
	defer out.Body.Close()
	var m export.Manifest
	if err := json.NewDecoder(out.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// The bookstore exported to S3 and loaded back with run --from-export is
// the table a direct run writes, verify finds it identical, and the
// manifest's content hashes are verify's.
func TestExportToS3AndLoad(t *testing.T) {
	b := migrateBookstore(t, 200)
	srv := s3test.New(t, "exports")
	s3args := []string{"--s3-endpoint", srv.URL, "--s3-path-style"}
	dir := t.TempDir()
	exportArgs := append([]string{"export", "--mapping", bookstoreMapping, "--pg", b.pg, "--to", "s3://exports/bookstore",
		"--file-size", "96KiB", "--compression", "zstd", "--state", filepath.Join(dir, "export.state.json"), "--quiet"}, s3args...)
	out, errOut, code := runCLI(t, exportArgs...)
	if code != 0 {
		t.Fatalf("export exited %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("export:\n%s", out)
	m := readManifest(t, srv, "exports", "bookstore")
	direct := scanCanonical(t, b.ddb, b.table)
	if !m.Complete || m.Items != int64(len(direct)) || len(m.Files) < 3 || m.Compression != "ZSTD" {
		t.Fatalf("manifest: complete %v, %d items (the run wrote %d), %d files, %s", m.Complete, m.Items, len(direct), len(m.Files), m.Compression)
	}
	if !strings.Contains(out, "manifest: s3://exports/bookstore/manifest.json, content hash "+m.ContentHash) {
		t.Errorf("the output does not name the manifest:\n%s", out)
	}

	// plan's import path bills exactly the bytes the export wrote.
	p, _ := planJSON(t, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table, "--price-per-gb-import", "0.25", "--file-size", "96KiB")
	ip := p.Capacity.Import
	if ip.UncompressedBytes != m.UncompressedBytes || ip.PricePerGB != 0.25 || math.Abs(ip.EstimatedCostUSD-float64(m.UncompressedBytes)/(1<<30)*0.25) > 1e-12 {
		t.Errorf("plan's import path %+v; the export holds %d uncompressed bytes", ip, m.UncompressedBytes)
	}
	// plan counts the files of the export at its --file-size: at least as
	// many as the export wrote, since files run over to a row's end.
	if want := (m.UncompressedBytes + 96<<10 - 1) / (96 << 10); ip.FileSize != 96<<10 || ip.Files != want || ip.Files < int64(len(m.Files)) || ip.FileLimit != "" {
		t.Errorf("plan counts %d files of %d bytes (limit %q); want %d, and the export has %d", ip.Files, ip.FileSize, ip.FileLimit, want, len(m.Files))
	}
	if want := map[bool]string{true: "import", false: "write"}[ip.EstimatedCostUSD < p.Capacity.EstimatedCostUSD]; p.Capacity.Cheaper != want {
		t.Errorf("plan says %s is cheaper: writes $%g, import $%g", p.Capacity.Cheaper, p.Capacity.EstimatedCostUSD, ip.EstimatedCostUSD)
	}

	// Exporting again to the same place needs --fresh.
	_, errOut, code = runCLI(t, exportArgs...)
	if code != exitUsage || !strings.Contains(errOut, "already holds a complete export") || !strings.Contains(errOut, "--fresh") {
		t.Errorf("a second export exited %d:\n%s", code, errOut)
	}

	loaded := migratetest.TableName(t, "fromexport")
	out, errOut, code = runCLI(t, append([]string{"run", "--from-export", "s3://exports/bookstore", "--mapping", bookstoreMapping,
		"--endpoint", b.endpoint, "--table", loaded, "--create-table", "--quiet", "--state", filepath.Join(dir, "load.state.json")}, s3args...)...)
	if code != 0 {
		t.Fatalf("run --from-export exited %d\n%s\n%s", code, out, errOut)
	}
	sameItems(t, "table loaded from the export", scanCanonical(t, b.ddb, loaded), direct)
	v := verifyJSON(t, 0, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", loaded)
	if !v.Identical {
		t.Errorf("verify of the loaded table: %+v", v.Summary)
	}
	hashes := map[string]string{}
	for _, e := range m.Entities {
		hashes[e.Entity] = e.ContentHash
	}
	for _, e := range v.Entities {
		if hashes[e.Entity] != e.ExpectedHash || e.ExpectedHash != e.ActualHash {
			t.Errorf("entity %s: manifest hash %s, verify's expected %s, actual %s", e.Entity, hashes[e.Entity], e.ExpectedHash, e.ActualHash)
		}
	}

	// Four parallel readers, the large tables split, write the same table.
	if _, err := b.conn.Exec(t.Context(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	parallel := migratetest.TableName(t, "parallel")
	if out, errOut, code := runCLI(t, "run", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", parallel, "--create-table",
		"--quiet", "--readers", "4", "--range-rows", "300", "--state", filepath.Join(dir, "parallel.json")); code != 0 {
		t.Fatalf("run --readers 4 exited %d\n%s\n%s", code, out, errOut)
	}
	if v := verifyJSON(t, 0, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", parallel); !v.Identical {
		t.Errorf("verify after run --readers 4: %+v", v.Summary)
	}

	// Two machines, each given half of the files, load the same table.
	shared := migratetest.TableName(t, "shared")
	for i, share := range []string{"1/2", "2/2"} {
		args := append([]string{"run", "--from-export", "s3://exports/bookstore", "--files", share, "--mapping", bookstoreMapping,
			"--endpoint", b.endpoint, "--table", shared, "--quiet", "--state", filepath.Join(dir, "share"+share[:1]+".json")}, s3args...)
		if i == 0 {
			args = append(args, "--create-table")
		}
		if out, errOut, code := runCLI(t, args...); code != 0 {
			t.Fatalf("run --files %s exited %d\n%s\n%s", share, code, out, errOut)
		}
		if got := len(scanCanonical(t, b.ddb, shared)); i == 0 && (got == 0 || got >= len(direct)) {
			t.Errorf("the first share loaded %d of %d items", got, len(direct))
		}
	}
	if v := verifyJSON(t, 0, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", shared); !v.Identical {
		t.Errorf("verify after two shares: %+v", v.Summary)
	}

	// import: the request, and a refusal for a table that exists.
	out, errOut, code = runCLI(t, append([]string{"import", "--from", "s3://exports/bookstore", "--mapping", bookstoreMapping, "--table", "BookstoreImported", "--dry-run"}, s3args...)...)
	if code != 0 || !strings.Contains(out, `"S3KeyPrefix": "bookstore/data/"`) || !strings.Contains(out, `"InputCompressionType": "ZSTD"`) ||
		!strings.Contains(out, `"TableName": "BookstoreImported"`) || !strings.Contains(out, `"BillingMode": "PAY_PER_REQUEST"`) {
		t.Errorf("import --dry-run exited %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = runCLI(t, append([]string{"import", "--from", "s3://exports/bookstore", "--mapping", bookstoreMapping, "--endpoint", b.endpoint, "--table", loaded}, s3args...)...)
	if code != exitFailure || !strings.Contains(errOut, "creates new tables only") || !strings.Contains(errOut, "migrate run --from-export s3://exports/bookstore") {
		t.Errorf("import into an existing table exited %d:\n%s", code, errOut)
	}
}

// The real binary exporting to S3 is killed with SIGKILL at several
// moments and resumed each time; the files it ends with are byte for byte
// those of an uninterrupted export.
func TestExportKillResume(t *testing.T) {
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := seed.Load(t.Context(), conn, seed.Config{Scale: 300, Seed: 5})
	if err == nil {
		_, err = conn.Exec(t.Context(), "ANALYZE") // for --readers to split tables
	}
	// Rows of the tables read (addresses are embedded).
	rows := counts.Customers + counts.Orders + counts.OrderItems + counts.Authors + counts.Books
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	srv := s3test.New(t, "exports")
	dir := t.TempDir()
	cmd := func(prefix string, extra ...string) *exec.Cmd {
		args := append([]string{"export", "--mapping", bookstoreMapping, "--to", "s3://exports/" + prefix, "--file-size", "32KiB",
			"--s3-endpoint", srv.URL, "--s3-path-style", "--state", filepath.Join(dir, prefix+".state.json"), "--quiet"}, extra...)
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "MIGRATE_PG_URL="+pg)
		return c
	}
	f := &fixture{}
	if res := f.run(t, cmd("clean")); res.code != 0 {
		t.Fatalf("clean export exited %d\n%s", res.code, res.output())
	}
	clean := readManifest(t, srv, "exports", "clean")
	if len(clean.Files) < 20 {
		t.Fatalf("the clean export has %d files: too few to kill it halfway", len(clean.Files))
	}

	// Each request to S3 takes 15 ms more: the export takes a few seconds.
	srv.Delay.Store(int64(15 * time.Millisecond))
	rng := rand.New(rand.NewPCG(11, 5))
	const kills = 4
	killed := 0
	for attempt := 0; ; attempt++ {
		if attempt > kills+3 {
			t.Fatalf("no complete export after %d attempts", attempt)
		}
		var extra []string
		puts := srv.Requests("PUT") // before this attempt
		if loadState(t, filepath.Join(dir, "killed.state.json")) != nil {
			extra = append(extra, "--resume")
		}
		c := cmd("killed", extra...)
		if err := start(c); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		switch killed {
		case 0: // before anything is committed
			time.Sleep(50 * time.Millisecond)
		case 1: // at a random moment
			time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		case 2, 3: // once this attempt uploaded objects of its own (3, then 1), recorded in the checkpoint or not
			// Not "once the checkpoint moved": it moves in leaps, and
			// may next move at the end of the export.
			n := puts + 4 - killed
			waitUntil(t, c, fmt.Sprintf("%d PUT requests", n), func() bool { return srv.Requests("PUT") >= n })
		}
		if killed < kills {
			c.Process.Signal(syscall.SIGKILL)
		}
		res := wait(c)
		if !res.signaled {
			if res.code != 0 {
				t.Fatalf("attempt %d exited %d\n%s", attempt, res.code, res.output())
			}
			if killed < kills {
				t.Fatalf("attempt %d completed before it could be killed (%v)", attempt, res.elapsed)
			}
			break
		}
		killed++
		st := loadState(t, filepath.Join(dir, "killed.state.json"))
		var done int64
		if st != nil {
			done = st.Rows()
		}
		t.Logf("kill %d after %v: %d of %d rows checkpointed, %d objects in S3", killed, time.Since(began).Round(time.Millisecond), done, rows, len(srv.Keys(t, "exports", "killed/data/")))
	}
	srv.Delay.Store(0)
	got := readManifest(t, srv, "exports", "killed")
	killParallel(t, bin, pg, srv, dir, clean)
	if len(got.Snapshots) < 2 {
		t.Errorf("the resumed export records %d snapshots", len(got.Snapshots))
	}
	if got.ContentHash != clean.ContentHash || got.Items != clean.Items || len(got.Files) != len(clean.Files) {
		t.Errorf("after kills: %d items in %d files, hash %s; clean: %d in %d, %s", got.Items, len(got.Files), got.ContentHash, clean.Items, len(clean.Files), clean.ContentHash)
	}
	for i := range min(len(got.Files), len(clean.Files)) {
		g, c := got.Files[i], clean.Files[i]
		if g.Name != c.Name || g.SHA256 != c.SHA256 || g.Items != c.Items {
			t.Errorf("file %d: %s %d items %.12s, clean %s %d items %.12s", i, g.Name, g.Items, g.SHA256, c.Name, c.Items, c.SHA256)
		}
	}
	// The objects themselves, not just what the manifests say.
	names := srv.Keys(t, "exports", "killed/data/")
	if len(names) != len(clean.Files) {
		t.Errorf("%d data objects, the clean export has %d", len(names), len(clean.Files))
	}
	for _, name := range names {
		rel := strings.TrimPrefix(name, "killed/")
		if !slices.Equal(object(t, srv, name), object(t, srv, "clean/"+rel)) {
			t.Errorf("%s differs from the clean export's", rel)
		}
	}
}

func object(t *testing.T, srv *s3test.Server, key string) []byte {
	t.Helper()
	out, err := srv.Client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("exports"), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An export read by four parallel readers, with the large tables split
// into ranges, holds the same items as one read by one reader, and its
// manifest has the same content hash.
func TestExportReadersIndependent(t *testing.T) {
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := seed.Load(t.Context(), conn, seed.Config{Scale: 300, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	items := map[int][]string{}
	manifests := map[int]*export.Manifest{}
	for _, readers := range []int{1, 4} {
		to := filepath.Join(dir, fmt.Sprint("readers", readers))
		state := filepath.Join(dir, fmt.Sprint("readers", readers, ".state.json"))
		out, errOut, code := runCLI(t, "export", bookstoreMapping, "--pg", pg, "--to", to, "--file-size", "64KiB", "--quiet",
			"--state", state, "--readers", fmt.Sprint(readers), "--range-rows", "300")
		if code != 0 {
			t.Fatalf("export --readers %d exited %d\n%s\n%s", readers, code, out, errOut)
		}
		st, err := export.NewStore(export.Where{Dir: to}, nil, export.UploadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		src, err := export.Open(t.Context(), st)
		if err != nil {
			t.Fatal(err)
		}
		manifests[readers] = src.Manifest
		for _, f := range src.Files() {
			for it, err := range src.Items(t.Context(), f.Name, 0) {
				if err != nil {
					t.Fatal(err)
				}
				data, err := transform.MarshalItem(it.Attrs)
				if err != nil {
					t.Fatal(err)
				}
				items[readers] = append(items[readers], string(data))
			}
		}
		slices.Sort(items[readers])
		ranges := 0
		for _, s := range loadState(t, state).Sources {
			if s.Table != "" {
				ranges++
			}
		}
		if readers == 4 && ranges < 4 {
			t.Errorf("--readers 4 read %d ranges; the test wants the tables split", ranges)
		}
		t.Logf("--readers %d: %d items in %d files, %d ranges", readers, len(items[readers]), len(src.Manifest.Files), ranges)
	}
	sameItems(t, "export with 4 readers", items[4], items[1])
	m1, m4 := manifests[1], manifests[4]
	if m1.ContentHash != m4.ContentHash || m1.Items != m4.Items || m1.UncompressedBytes != m4.UncompressedBytes || m1.Items == 0 {
		t.Errorf("manifests: 1 reader %d items, hash %s; 4 readers %d items, hash %s", m1.Items, m1.ContentHash, m4.Items, m4.ContentHash)
	}
	if !slices.Equal(m1.Entities, m4.Entities) {
		t.Errorf("per entity: %+v vs %+v", m1.Entities, m4.Entities)
	}
}

// killParallel kills an export by four readers (tables split into ranges)
// twice and resumes it with two: the files differ from a one-reader
// export's, the items and the content hash do not.
func killParallel(t *testing.T, bin, pg string, srv *s3test.Server, dir string, clean *export.Manifest) {
	t.Helper()
	state := filepath.Join(dir, "parallel.state.json")
	srv.Delay.Store(int64(15 * time.Millisecond))
	defer srv.Delay.Store(0)
	for attempt := 0; ; attempt++ {
		args := []string{"export", bookstoreMapping, "--to", "s3://exports/parallel", "--file-size", "32KiB", "--s3-endpoint", srv.URL,
			"--s3-path-style", "--state", state, "--quiet", "--readers", "4", "--range-rows", "300"}
		if attempt > 0 {
			args = append(args, "--resume", "--readers", "2")
		}
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "MIGRATE_PG_URL="+pg)
		if err := start(c); err != nil {
			t.Fatal(err)
		}
		if attempt < 2 {
			waitForRows(t, state, int64(1000+1500*attempt), c)
			c.Process.Signal(syscall.SIGKILL)
		}
		res := wait(c)
		if !res.signaled {
			if res.code != 0 || attempt < 2 {
				t.Fatalf("parallel attempt %d exited %d\n%s", attempt, res.code, res.output())
			}
			break
		}
		t.Logf("parallel export killed with %d rows checkpointed", loadState(t, state).Rows())
	}
	got := readManifest(t, srv, "exports", "parallel")
	if got.ContentHash != clean.ContentHash || got.Items != clean.Items {
		t.Errorf("parallel export after kills: %d items, hash %s; the clean one: %d, %s", got.Items, got.ContentHash, clean.Items, clean.ContentHash)
	}
	ranges := 0
	for _, s := range loadState(t, state).Sources {
		if s.Table != "" {
			ranges++
		}
	}
	if ranges < 4 {
		t.Errorf("the parallel export read %d ranges", ranges)
	}
}
