package affect_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	"github.com/pgdynamo/migrate/transform"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

// streamedSchema has a column of every type whose stream text is decoded
// without a read (extract.StreamDecodable), a character(n) and an inet,
// which are always read back, and rows of values at the edges of each.
const streamedSchema = `
CREATE TABLE hostile (id bigint PRIMARY KEY, i2 smallint, i4 int, i8 bigint, n numeric, n2 numeric(12,3),
  f4 real, f8 double precision, b bool, by bytea, d date, ts timestamp, tz timestamptz,
  t text, vc varchar(10), nm name, u uuid, j json, jb jsonb);
ALTER TABLE hostile REPLICA IDENTITY FULL;
CREATE TABLE padded (id int PRIMARY KEY, c character(5), ip inet);
ALTER TABLE padded REPLICA IDENTITY FULL;
CREATE TABLE toasted (id int PRIMARY KEY, n int, big text);
`

// streamedRows are the rows inserted; each is one VALUES tuple.
var streamedRowsSQL = []string{
	`(1, 0, 0, 0, 0, 0, 0, 0, false, '\x', '2024-02-29', '2024-01-01 00:00:00', '2024-01-01 00:00:00+00', '', '', '', '00000000-0000-0000-0000-000000000000', 'null', 'null')`,
	`(2, -32768, -2147483648, -9223372036854775808, '-0.000', '-12345.678', '-0', '-0', true, '\x00ff10', '0044-03-15 BC', '1999-12-31 23:59:59.999999', '2024-06-01 12:00:00.5+05:30', 'quote''s "x" \ back', 'abc  ', 'some_name', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": 1,  "a": [1, 2]}', '{"b": 1,  "a": [1, 2]}')`,
	`(3, 32767, 2147483647, 9223372036854775807, '123456789012345678901234567890.12345678', '999999999.999', '3.4028235e38', '9.99e125', NULL, '\xdeadbeef', '10000-01-01', '0001-01-01 00:00:00', '1970-01-01 00:00:00+00', E'line\nbreak\ttab 日本語 🎉', 'ü', 'x', NULL, '"str"', '"str"')`,
	`(4, NULL, NULL, NULL, '1e-20', NULL, '1e-45', '-1e-130', NULL, NULL, '2000-01-01', '2000-01-01 00:00:00.000001', '2262-04-11 23:47:16.854775+00', NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(7, NULL, NULL, NULL, NULL, NULL, NULL, '5e-324', NULL, NULL, 'infinity', 'infinity', '-infinity', NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(5, 1, 2, 3, '0.1', '0.100', '0.1', '0.1', true, NULL, '-infinity', '-infinity', 'infinity', 'x', 'y', 'z', NULL, '[]', '{}')`,
	`(6, 7, 7, 7, 'NaN', NULL, 'NaN', 'Infinity', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
}

const streamedMapping = `table: Streamed
keys: { partition: PK, sort: SK }
entityAttribute: type
entities:
  Hostile:
    from: hostile
    key: { pk: "H#{id}", sk: "H" }
    attributes: { i2: i2, i4: i4, i8: i8, n: n, n2: n2, f4: f4, f8: f8, b: b, by: by, d: d, ts: ts, tz: tz, t: t, vc: vc, nm: nm, u: u, j: j, jb: jb }
  Padded:
    from: padded
    key: { pk: "P#{id}", sk: "P#{c}" }
    attributes: { c: c, ip: ip }
  Toasted:
    from: toasted
    key: { pk: "T#{id}", sk: "T" }
    attributes: { n: n, big: big }
`

// TestStreamedRowsRenderAsRead streams inserts and updates of rows with
// values at the edges of every decodable type through a real slot, and
// checks that each row rendered from the stream gives exactly the items
// (or the row error) the same row read back gives; that an update leaving
// a TOASTed value unchanged, a character(n) and an inet are read back; and
// that a round of streamed rows needs no read.
func TestStreamedRowsRenderAsRead(t *testing.T) {
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, streamedSchema); err != nil {
		t.Fatal(err)
	}
	cat, err := extract.ReadCatalog(ctx, conn, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("streamed.yaml", []byte(streamedMapping))
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	g, err := affect.New(plan, cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range plan.Sources {
		if !g.Streamed(src) {
			t.Fatalf("source %s is not streamed", src.Name)
		}
	}
	tables := []replicate.Table{{Schema: "public", Name: "hostile"}, {Schema: "public", Name: "padded"}, {Schema: "public", Name: "toasted"}}
	if _, err := replicate.EnsurePublication(ctx, conn, "pub_streamed", tables); err != nil {
		t.Fatal(err)
	}
	repl, err := replicate.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.CreateSlot(ctx, repl, "slot_streamed"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		repl.Close(context.Background())
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := replicate.DropSlot(context.Background(), conn, "slot_streamed")
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("drop slot: %v", err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	// Each phase's changes are compared with the rows as they are after
	// it: every row changes once a phase.
	phases := [][]string{{}, {
		`UPDATE hostile SET n2 = coalesce(n2, 0) - 1, t = coalesce(t, '') || '+', f8 = -f8, ts = ts + interval '1 microsecond' WHERE ts <> 'infinity' OR ts IS NULL`,
		`UPDATE hostile SET n2 = coalesce(n2, 0) - 1 WHERE ts = 'infinity'`,
		`UPDATE padded SET ip = '10.0.0.1/8'`,
	}, {
		// 12,800 characters that do not compress: stored out of line,
		// then left unchanged by the update after it, which the stream
		// sends without them (default identity): read back.
		`INSERT INTO toasted SELECT 1, 0, string_agg(md5(i::text), '') FROM generate_series(1, 400) i`,
	}, {
		`UPDATE toasted SET n = 1`,
	}}
	for _, r := range streamedRowsSQL {
		phases[0] = append(phases[0], "INSERT INTO hostile VALUES "+r)
	}
	phases[0] = append(phases[0], `INSERT INTO padded VALUES (1, 'ab', '192.168.0.1'), (2, 'abcde', '::1')`)

	stream, err := replicate.Start(ctx, repl, replicate.StreamConfig{Slot: "slot_streamed", Publication: "pub_streamed", StatusEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	msgs := make(chan replicate.Message, 100)
	ran := make(chan error, 1)
	go func() { ran <- stream.Run(rctx, msgs) }()
	defer func() {
		// Before the cleanup closes the connection the stream reads.
		cancel()
		<-ran
	}()

	readBack, rendered := 0, 0
	for p, stmts := range phases {
		for _, sql := range stmts {
			if _, err := conn.Exec(ctx, sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		var changes []*replicate.Change
		commits := 0
		timeout := time.After(20 * time.Second)
		for commits < len(stmts) {
			select {
			case m := <-msgs:
				switch m.Kind {
				case replicate.KindChange:
					changes = append(changes, m.Change)
				case replicate.KindCommit:
					commits++
				}
			case <-timeout:
				t.Fatalf("phase %d: timed out after %d commits", p, commits)
			}
		}
		for _, c := range changes {
			b := g.NewBatch()
			if err := b.Add(c); err != nil {
				t.Fatalf("phase %d: add %s: %v", p, affect.Describe(c), err)
			}
			src := g.OwnSource(c.Rel.Table)
			last := b.LastStreamed(src)
			wantRead := c.Rel.Name == "padded" || c.Rel.Name == "toasted" && c.Op == replicate.Update
			if last == nil {
				readBack++
				if !wantRead {
					t.Errorf("phase %d: %s was read back, not rendered from the stream", p, affect.Describe(c))
				}
				if !b.NeedsRead() {
					t.Errorf("phase %d: %s is read back, but the batch needs no read", p, affect.Describe(c))
				}
				continue
			}
			if wantRead {
				t.Errorf("phase %d: %s was rendered from the stream", p, affect.Describe(c))
			}
			if b.NeedsRead() {
				t.Errorf("phase %d: %s needs a read", p, affect.Describe(c))
			}
			got := *last
			id := got.Values[slices.IndexFunc(src.Query.Columns, func(c mapping.Column) bool { return c.Name == "id" })]
			want := readRow(t, conn, src, id)
			gotItems, gotErrs := src.Apply(got)
			wantItems, wantErrs := src.Apply(want)
			if len(wantErrs) > 0 {
				t.Logf("phase %d, row %v: %v", p, id, wantErrs)
			} else {
				rendered++
			}
			if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
				t.Errorf("phase %d, row %d: errors from the stream %v, read back %v", p, id, gotErrs, wantErrs)
			}
			if !reflect.DeepEqual(gotItems, wantItems) {
				t.Errorf("phase %d, row %d: items from the stream differ from the row read back:\n stream %#v\n   read %#v\n values %#v\n    and %#v", p, id, gotItems, wantItems, got.Values, want.Values)
			}
		}
	}
	// padded: 2 inserts and 2 updates; toasted: the update.
	if readBack != 5 {
		t.Errorf("%d changes read back, want 5", readBack)
	}
	// hostile rows 1-4 and toasted in phase 0 to 2: rows 5-7 hold values
	// DynamoDB cannot (the row errors are compared above).
	if rendered != 4+4+1 {
		t.Errorf("%d changes rendered into items, want 9", rendered)
	}
}

// readRow reads one row of src by its id, in a snapshot as a round reads
// it.
func readRow(t *testing.T, conn *pgx.Conn, src *transform.Source, id any) extract.Row {
	t.Helper()
	snap, err := extract.Begin(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close(context.Background())
	pos := slices.IndexFunc(src.Query.Columns, func(c mapping.Column) bool { return c.Name == "id" })
	for row, err := range snap.Rows(t.Context(), src.Query) {
		if err != nil {
			t.Fatal(err)
		}
		if row.Values[pos] == id {
			return row
		}
	}
	t.Fatalf("row %v of %s not found", id, src.Name)
	return extract.Row{}
}
