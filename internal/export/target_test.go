package export

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/s3test"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

const testMapping = `table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{id}", sk: "PROFILE" }
    attributes: { name: name }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{id:8}" }
    attributes: { total: total }
`

func testMappingOf(t *testing.T) *mapping.Mapping {
	t.Helper()
	m, err := mapping.Parse("shop.yaml", []byte(testMapping))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// every attribute type, nested, to prove the line format round-trips.
func richItem() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": s("CUSTOMER#1"), "SK": s("PROFILE"),
		"n":    n("19.90"),
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 0xff}},
		"t":    &types.AttributeValueMemberBOOL{Value: true},
		"f":    &types.AttributeValueMemberBOOL{Value: false},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"10", "2.50"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{9}, {1, 2}}},
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("1"), &types.AttributeValueMemberL{}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"city": s("Zürich <&> \"quoted\"\n"), "empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		}},
		"emoji": s("李小龙 😀 \u2028"),
	}
}

func TestLineRoundTrip(t *testing.T) {
	t.Parallel()
	item := richItem()
	enc := new(ddbvalue.CanonicalEncoder)
	line, sum := appendLine(enc, nil, item)
	if !bytes.HasPrefix(line, []byte(`{"Item":{`)) || !bytes.HasSuffix(line, []byte("}}\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("line %q is not one {\"Item\":...} line", line)
	}
	want, err := diff.Hash(item)
	if err != nil {
		t.Fatal(err)
	}
	if sum != want {
		t.Errorf("line hash %x, verify's hash %x", sum, want)
	}
	if got := capacity.ImportLineBytes(item); got != len(line) {
		t.Errorf("plan counts %d bytes for the line, export writes %d", got, len(line))
	}
	back, err := decodeLine(trimLine(line))
	if err != nil {
		t.Fatal(err)
	}
	if !ddbvalue.EqualItems(item, back) {
		t.Errorf("round trip changed the item:\n%s", line)
	}
	// The same item gives the same bytes, whatever the map order.
	again, _ := appendLine(enc, nil, back) // in the order enc remembers
	if want := diff.AppendCanonical([]byte(`{"Item":`), item); !bytes.Equal(line, append(want, "}\n"...)) {
		t.Errorf("line %s, canonical JSON %s", line, want)
	}
	if !bytes.Equal(line, again) {
		t.Errorf("not deterministic:\n%s\n%s", line, again)
	}
	for _, bad := range []string{`{}`, `{"Item":{"a":{"S":"x","N":"1"}}}`, `{"Item":{"a":{"Q":"x"}}}`, `{"Item":{"a":{"B":"%%"}}}`, `not json`,
		`{"Item":{"a":{"NULL":false}}}`, `{"Item":{"a":{"L":[{"NULL":false}]}}}`, `{"Item":{"a":{"NULL":"true"}}}`} {
		if _, err := decodeLine([]byte(bad)); err == nil {
			t.Errorf("decodeLine(%s) succeeded", bad)
		}
	}
	// NULL false is refused by name: DynamoDB has no such value.
	if _, err := decodeLine([]byte(`{"Item":{"a":{"NULL":false}}}`)); err == nil || !strings.Contains(err.Error(), `attribute "a": {"NULL": false} is not a DynamoDB value: NULL must be true`) {
		t.Errorf("NULL false: %v", err)
	}
}

// bundle is a Target over a store, and what it needs.
type bundle struct {
	m     *mapping.Mapping
	store Store
	s3    *s3test.Server // nil for a directory
	dir   string
}

func newLocal(t *testing.T) *bundle {
	dir := t.TempDir()
	st, err := NewStore(Where{Dir: dir}, nil, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{m: testMappingOf(t), store: st, dir: dir}
}

func newS3(t *testing.T) *bundle {
	srv := s3test.New(t, "bucket")
	w, err := ParseWhere("s3://bucket/exports/shop/")
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStore(w, srv.Client, UploadOptions{PartSize: 5 << 20, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{m: testMappingOf(t), store: st, s3: srv}
}

func (b *bundle) target(t *testing.T, mod func(*TargetConfig)) *Target {
	t.Helper()
	cfg := TargetConfig{Mapping: b.m, Store: b.store}
	if mod != nil {
		mod(&cfg)
	}
	tgt, err := NewTarget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}

// settle counts acknowledgements and refusals, with a checkpoint counter
// that Atomically groups.
type settle struct {
	acked, failed int
	groups        []int // acks per Atomically call
}

func (st *settle) start() contract.TargetStart {
	return contract.TargetStart{SnapshotTime: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), Atomically: func(f func()) {
		before := st.acked
		f()
		st.groups = append(st.groups, st.acked-before)
	}}
}

// items makes count items: customers with two orders each, so three items per
// "row" of a customer's source key. pad adds that many random bytes.
func items(count, pad int, st *settle) []contract.Item {
	var out []contract.Item
	for i := range count {
		row := fmt.Sprintf("id=%d", i/3)
		attrs := map[string]types.AttributeValue{"PK": s(fmt.Sprintf("CUSTOMER#%d", i/3)), "type": s("Customer")}
		entity := "Customer"
		if i%3 == 0 {
			attrs["SK"] = s("PROFILE")
			attrs["GSI1PK"], attrs["GSI1SK"] = s(fmt.Sprintf("EMAIL#%d", i)), s("C")
		} else {
			attrs["SK"], attrs["type"], entity = s(fmt.Sprintf("ORDER#%08d", i)), s("Order"), "Order"
			attrs["total"] = n(fmt.Sprintf("%d.50", i))
		}
		if pad > 0 {
			b := make([]byte, pad/2)
			rand.Read(b)
			attrs["pad"] = s(hex.EncodeToString(b))
		}
		out = append(out, contract.Item{Attrs: attrs, Origin: contract.Origin{Entity: entity, Table: "public.customers", SourceKey: row},
			Ack: func() { st.acked++ }, Fail: func(*contract.ItemError) { st.failed++ }})
	}
	return out
}

func feed(its []contract.Item) <-chan contract.Item {
	ch := make(chan contract.Item, len(its))
	for _, it := range its {
		ch <- it
	}
	close(ch)
	return ch
}

// readAll reads every item of the committed files back through a Source.
func readAll(t *testing.T, b *bundle, tgt *Target) (*Source, []map[string]types.AttributeValue) {
	t.Helper()
	if _, err := tgt.Finish(t.Context(), Summary{Table: "Shop"}); err != nil {
		t.Fatal(err)
	}
	src, err := Open(t.Context(), b.store)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]types.AttributeValue
	for _, f := range src.Files() {
		for it, err := range src.Items(t.Context(), f.Name, 0) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Attrs)
		}
	}
	return src, out
}

func TestTargetWritesFilesOfSizeAtRowBoundaries(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		name string
		new  func(*testing.T) *bundle
	}{{"local", newLocal}, {"s3", newS3}} {
		for _, comp := range []string{CompressionGzip, CompressionZstd, CompressionNone} {
			t.Run(store.name+"/"+comp, func(t *testing.T) {
				t.Parallel()
				b := store.new(t)
				tgt := b.target(t, func(c *TargetConfig) { c.Compression, c.FileSize, c.BlockItems = comp, 20_000, 50 })
				var st settle
				if err := tgt.Start(t.Context(), st.start()); err != nil {
					t.Fatal(err)
				}
				in := items(3000, 0, &st)
				stats, err := tgt.Write(t.Context(), feed(in))
				if err != nil {
					t.Fatal(err)
				}
				if st.acked != 3000 || stats.Total.Written != 3000 || st.failed != 0 {
					t.Fatalf("acked %d, written %d, failed %d", st.acked, stats.Total.Written, st.failed)
				}
				files := tgt.Files()
				if len(files) < 5 || len(st.groups) != len(files) {
					t.Fatalf("%d files, %d ack groups: want several files, acknowledged one group each", len(files), len(st.groups))
				}
				var sum int64
				for i, f := range files {
					if want := fmt.Sprintf("data/part-%06d%s", i+1, extension[comp]); f.Name != want {
						t.Errorf("file %d is %s, want %s", i, f.Name, want)
					}
					if f.Items%3 != 0 {
						t.Errorf("%s has %d items: a row was split between files", f.Name, f.Items)
					}
					if i < len(files)-1 && f.UncompressedBytes < 20_000 {
						t.Errorf("%s: %d bytes, under the file size", f.Name, f.UncompressedBytes)
					}
					if int64(st.groups[i]) != f.Acknowledged || f.Acknowledged != f.Items {
						t.Errorf("%s: %d items, %d acknowledged, acks grouped %d", f.Name, f.Items, f.Acknowledged, st.groups[i])
					}
					sum += f.Items
				}
				if sum != 3000 {
					t.Errorf("files hold %d items", sum)
				}
				src, got := readAll(t, b, tgt)
				m := src.Manifest
				if m.Items != 3000 || len(m.Files) != len(files) || m.Compression != importCompression[comp] || m.MappingSHA256 != b.m.Digest {
					t.Errorf("manifest: %d items, %d files, %s, %s", m.Items, len(m.Files), m.Compression, m.MappingSHA256)
				}
				var want diff.Sum
				for _, it := range in {
					h, _ := diff.Hash(it.Attrs)
					want.Add(h)
				}
				if m.ContentHash != want.String() {
					t.Errorf("manifest content hash %s, the items' %s", m.ContentHash, want)
				}
				if len(got) != 3000 {
					t.Fatalf("read back %d items", len(got))
				}
				var back diff.Sum
				for _, it := range got {
					h, _ := diff.Hash(it)
					back.Add(h)
				}
				if back != want {
					t.Error("the items read back differ from the items written")
				}
				if b.s3 != nil {
					keys := b.s3.Keys(t, "bucket", "exports/shop/")
					if len(keys) != 2*len(files)+1 {
						t.Errorf("objects: %v", keys)
					}
				}
			})
		}
	}
}

// Items are interleaved by partition key within a block: consecutive
// lines rarely share one, although the input is sorted by it.
func TestTargetInterleavesPartitions(t *testing.T) {
	t.Parallel()
	b := newLocal(t)
	tgt := b.target(t, func(c *TargetConfig) { c.Compression = CompressionNone })
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Write(t.Context(), feed(items(3000, 0, &st))); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(b.dir, "data", "part-000001.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	same := 0
	for i := 1; i < len(lines); i++ {
		if pkOf(lines[i]) == pkOf(lines[i-1]) {
			same++
		}
	}
	// Sorted input has two in three neighbours in one partition.
	if same > len(lines)/20 {
		t.Errorf("%d of %d neighbouring lines share a partition key", same, len(lines))
	}
}

func pkOf(line string) string {
	_, rest, _ := strings.Cut(line, `"PK":{"S":"`)
	pk, _, _ := strings.Cut(rest, `"`)
	return pk
}

// Refused items get the writer's errors; with StopOnFail the file holds
// exactly the rows before the first bad one, and nothing is stored after.
func TestTargetRefusals(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("StopOnFail=%v", stop), func(t *testing.T) {
			t.Parallel()
			b := newLocal(t)
			tgt := b.target(t, func(c *TargetConfig) { c.StopOnFail = stop })
			var st settle
			if err := tgt.Start(t.Context(), st.start()); err != nil {
				t.Fatal(err)
			}
			in := items(30, 0, &st)
			in[16].Attrs["SK"] = s(strings.Repeat("k", 1025)) // row id=5, its second item
			in[25].Attrs["SK"] = in[24].Attrs["SK"]           // row id=8: a duplicate key
			_, err := tgt.Write(t.Context(), feed(in))
			var ie *contract.ItemError
			if !errors.As(err, &ie) || !errors.Is(err, load.ErrKeyTooLong) {
				t.Fatalf("Write: %v, want the key error", err)
			}
			files := tgt.Files()
			var stored int64
			for _, f := range files {
				stored += f.Items
			}
			if stop {
				// Rows 0-4 (15 items) are stored; row 5's first item and
				// everything after are neither stored nor acknowledged.
				if st.failed != 1 || st.acked != 15 || stored != 15 {
					t.Errorf("failed %d, acked %d, stored %d; want 1, 15, 15", st.failed, st.acked, stored)
				}
				return
			}
			if !errors.Is(err, load.ErrDuplicateKey) {
				t.Errorf("Write: %v, want the duplicate too", err)
			}
			if st.failed != 2 || st.acked != 28 || stored != 28 {
				t.Errorf("failed %d, acked %d, stored %d; want 2, 28, 28", st.failed, st.acked, stored)
			}
		})
	}
}

// A file large enough goes up as a multipart upload; an aborted one leaves
// no object, and a new export's Start aborts uploads a crash left behind.
func TestS3MultipartUpload(t *testing.T) {
	t.Parallel()
	b := newS3(t)
	tgt := b.target(t, func(c *TargetConfig) { c.Compression, c.FileSize = CompressionNone, 18<<20 })
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Write(t.Context(), feed(items(30_000, 700, &st))); err != nil {
		t.Fatal(err)
	}
	files := tgt.Files()
	if len(files) != 2 || files[0].UncompressedBytes < 18<<20 {
		t.Fatalf("files: %+v", files)
	}
	// A file of a part (5 MiB here) or more goes up in parts, a smaller
	// one as a PutObject: the part size holds from one part on, not from
	// the transfer manager's own 16 MiB.
	multipart := 0
	for _, f := range files {
		if f.Bytes >= 5<<20 {
			multipart++
		}
	}
	if got := b.s3.Requests("POST ?uploads"); got != multipart {
		t.Errorf("%d multipart uploads started, want %d (the files of 5 MiB or more)", got, multipart)
	}
	if got := b.s3.Requests("PUT ?uploadId ?partNumber"); got < 4 {
		t.Errorf("%d parts uploaded, want at least 4 of 5 MiB", got)
	}
	_, got := readAll(t, b, tgt)
	if len(got) != 30_000 {
		t.Errorf("read back %d items", len(got))
	}

	// An upload given up halfway leaves no object, and is aborted in S3.
	pf, err := b.store.create(t.Context(), "data/part-000099.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(pf, rand.Reader, 20<<20); err != nil {
		t.Fatal(err)
	}
	pf.abort()
	for _, k := range b.s3.Keys(t, "bucket", "exports/shop/data/") {
		if strings.Contains(k, "000099") {
			t.Errorf("aborted upload left %s", k)
		}
	}
	if b.s3.Requests("DELETE ?uploadId") != 1 {
		t.Errorf("the given-up upload was not aborted in S3")
	}

	// A crash leaves an upload with parts; the next export's Start aborts it.
	bucket, key := aws.String("bucket"), aws.String("exports/shop/data/part-000100.json")
	mpu, err := b.s3.Client.CreateMultipartUpload(t.Context(), &s3.CreateMultipartUploadInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.s3.Client.UploadPart(t.Context(), &s3.UploadPartInput{Bucket: bucket, Key: key, UploadId: mpu.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(make([]byte, 5<<20))}); err != nil {
		t.Fatal(err)
	}
	fresh := st.start()
	fresh.Fresh = true
	if err := b.target(t, nil).Start(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	left, err := b.s3.Client.ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Uploads) != 0 || b.s3.Requests("DELETE ?uploadId") != 2 {
		t.Errorf("unfinished uploads after Start: %d", len(left.Uploads))
	}
}

// Start refuses a destination that holds an export unless Fresh, and then
// deletes it; it refuses objects it did not write under data/.
func TestStartRefusesOrReplacesAnExport(t *testing.T) {
	t.Parallel()
	b := newLocal(t)
	var st settle
	first := b.target(t, nil)
	if err := first.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Write(t.Context(), feed(items(30, 0, &st))); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Finish(t.Context(), Summary{}); err != nil {
		t.Fatal(err)
	}
	second := b.target(t, nil)
	err := second.Start(t.Context(), st.start())
	if !errors.Is(err, contract.ErrState) || !strings.Contains(err.Error(), "--fresh") {
		t.Fatalf("Start over an export: %v", err)
	}
	fresh := st.start()
	fresh.Fresh = true
	if err := second.Start(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"data", "parts"} {
		if entries, _ := os.ReadDir(filepath.Join(b.dir, dir)); len(entries) != 0 {
			t.Errorf("%s/ still holds %d files", dir, len(entries))
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, manifestName)); err == nil {
		t.Error("the old manifest is still there")
	}
	if err := os.WriteFile(filepath.Join(b.dir, "data", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.target(t, nil).Start(t.Context(), fresh); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Start with a foreign file under data/: %v", err)
	}
}

// A resumed export keeps the files the state file covers and deletes the
// ones committed after; counts that fall between files are refused.
func TestStartResumesAtTheCheckpoint(t *testing.T) {
	t.Parallel()
	b := newLocal(t)
	var st settle
	first := b.target(t, func(c *TargetConfig) { c.FileSize, c.BlockItems = MinFileSize, 10 })
	if err := first.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Write(t.Context(), feed(items(300, 200, &st))); err != nil {
		t.Fatal(err)
	}
	files := first.Files()
	if len(files) < 4 {
		t.Fatalf("%d files", len(files))
	}
	// The state file saw the first two files.
	done := map[string]int64{}
	for _, f := range files[:2] {
		for _, e := range f.Entities {
			done[e.Entity] += e.Items
		}
	}
	resume := st.start()
	resume.Resumed, resume.Done = true, done
	second := b.target(t, nil)
	if err := second.Start(t.Context(), resume); err != nil {
		t.Fatal(err)
	}
	if kept := second.Files(); len(kept) != 2 || kept[1].SHA256 != files[1].SHA256 {
		t.Errorf("kept %d files", len(kept))
	}
	entries, _ := os.ReadDir(filepath.Join(b.dir, "data"))
	records, _ := os.ReadDir(filepath.Join(b.dir, "parts"))
	if len(entries) != 2 || len(records) != 2 {
		t.Errorf("%d data files and %d records left, want 2 each", len(entries), len(records))
	}
	// One item more than two files hold: no file boundary.
	done["Customer"]++
	resume.Done = done
	err := b.target(t, nil).Start(t.Context(), resume)
	if !errors.Is(err, contract.ErrState) || !strings.Contains(err.Error(), "file boundary") {
		t.Errorf("Start at no boundary: %v", err)
	}
	// Another mapping.
	other := testMappingOf(t)
	other.Digest = strings.Repeat("0", 64)
	done["Customer"]--
	resume.Done = done
	tgt, err := NewTarget(TargetConfig{Mapping: other, Store: b.store})
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.Start(t.Context(), resume); err == nil || !strings.Contains(err.Error(), "another mapping") {
		t.Errorf("Start with another mapping: %v", err)
	}
}

func TestSourceDetectsChangedFiles(t *testing.T) {
	t.Parallel()
	b := newLocal(t)
	tgt := b.target(t, func(c *TargetConfig) { c.Compression = CompressionNone })
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Write(t.Context(), feed(items(30, 0, &st))); err != nil {
		t.Fatal(err)
	}
	src, _ := readAll(t, b, tgt)
	path := filepath.Join(b.dir, "data", "part-000001.json")
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(lines[:len(lines)-2], nil), 0o644); err != nil { // the last line dropped
		t.Fatal(err)
	}
	var read int
	var last error
	for _, err := range src.Items(t.Context(), "data/part-000001.json", 3) {
		if err != nil {
			last = err
			break
		}
		read++
	}
	if read != 26 || last == nil || !strings.Contains(last.Error(), "does not match the manifest") {
		t.Errorf("read %d items after line 3, then %v", read, last)
	}
}

func TestSelectSharesFiles(t *testing.T) {
	t.Parallel()
	src := &Source{Manifest: &Manifest{}}
	for i := range 7 {
		src.Manifest.Files = append(src.Manifest.Files, File{Name: fmt.Sprint(i)})
	}
	var all []string
	for k := 1; k <= 3; k++ {
		if err := src.Select(k, 3); err != nil {
			t.Fatal(err)
		}
		for _, f := range src.Taken() {
			all = append(all, f.Name)
		}
	}
	slices.Sort(all)
	if strings.Join(all, "") != "0123456" {
		t.Errorf("shares cover %v", all)
	}
	for _, kn := range [][2]int{{0, 3}, {4, 3}, {1, 0}} {
		if err := src.Select(kn[0], kn[1]); err == nil {
			t.Errorf("Select(%d, %d) accepted", kn[0], kn[1])
		}
	}
	// Share 9 of 10 of 7 files holds none: once, it loaded nothing and
	// exited 0. Share 7 of 10 holds the last file.
	err := src.Select(9, 10)
	if err == nil || !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), "the export has 7 file(s), so share 9 of 10 holds none; split it into at most 7 shares") {
		t.Errorf("Select(9, 10) of 7 files: %v", err)
	}
	if err := src.Select(7, 10); err != nil || len(src.Taken()) != 1 {
		t.Errorf("Select(7, 10) of 7 files: %v, %d files", err, len(src.Taken()))
	}
	// An export of an empty table has no file to share.
	empty := &Source{Manifest: &Manifest{}}
	if err := empty.Select(2, 3); err != nil {
		t.Errorf("Select(2, 3) of no files: %v", err)
	}
}

// testRow is a source row as the engine gives it: a pointer in
// Origin.Row, its key formatted only when asked for.
type testRow struct{ key string }

func (r *testRow) SourceKey() string { return r.key }

// Line buffers are reused once their lines are written, skipped or
// refused: items fed one at a time (chunks of an item or two, so many
// buffers), with duplicates skipped and items refused among them, come
// back exactly as the accepted items; and rows told apart by Origin.Row
// alone are never split between files.
func TestTargetLineBuffersAndRows(t *testing.T) {
	t.Parallel()
	b := newLocal(t)
	tgt := b.target(t, func(c *TargetConfig) {
		c.Compression, c.FileSize, c.BlockItems, c.OnDuplicate = CompressionNone, 20_000, 50, load.OnDuplicateSkip
	})
	var st settle
	if err := tgt.Start(t.Context(), st.start()); err != nil {
		t.Fatal(err)
	}
	in := items(6000, 40, &st)
	var want diff.Sum
	rows := map[string]*testRow{}
	dups, refused := 0, 0
	for i := range in {
		it := &in[i]
		key := it.Origin.SourceKey
		if rows[key] == nil {
			rows[key] = &testRow{key: key}
		}
		it.Origin.SourceKey, it.Origin.Row = "", rows[key]
		switch row := i / 3; {
		case i%3 == 2 && row%7 == 0: // the row's second order has its first's key
			it.Attrs["SK"] = in[i-1].Attrs["SK"]
			dups++
			continue
		case i%3 == 0 && row%11 == 0:
			it.Attrs["SK"] = s(strings.Repeat("k", 1025))
			refused++
			continue
		}
		h, _ := diff.Hash(it.Attrs)
		want.Add(h)
	}
	ch := make(chan contract.Item) // unbuffered: the encoders get an item or two at a time
	go func() {
		defer close(ch)
		for _, it := range in {
			ch <- it
		}
	}()
	stats, err := tgt.Write(t.Context(), ch)
	if !errors.Is(err, load.ErrKeyTooLong) {
		t.Fatalf("Write: %v, want the refused keys", err)
	}
	if st.failed != refused || st.acked != len(in)-refused || stats.Duplicates != int64(dups) {
		t.Fatalf("failed %d, acked %d, duplicates %d; want %d, %d, %d", st.failed, st.acked, stats.Duplicates, refused, len(in)-refused, dups)
	}
	if len(tgt.Files()) < 10 {
		t.Fatalf("%d files, want many", len(tgt.Files()))
	}
	_, got := readAll(t, b, tgt)
	var back diff.Sum
	for _, it := range got {
		h, _ := diff.Hash(it)
		back.Add(h)
	}
	if back != want || len(got) != len(in)-dups-refused {
		t.Fatalf("read back %d items, want %d; same items: %v", len(got), len(in)-dups-refused, back == want)
	}
	// Every row's items are in one file.
	src, err := Open(t.Context(), b.store)
	if err != nil {
		t.Fatal(err)
	}
	fileOf := map[string]string{}
	for _, f := range src.Files() {
		for it, err := range src.Items(t.Context(), f.Name, 0) {
			if err != nil {
				t.Fatal(err)
			}
			pk := it.Attrs["PK"].(*types.AttributeValueMemberS).Value
			if prev, ok := fileOf[pk]; ok && prev != f.Name {
				t.Fatalf("row %s is split between %s and %s", pk, prev, f.Name)
			}
			fileOf[pk] = f.Name
		}
	}
}
