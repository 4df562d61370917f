package extract_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

const typesDDL = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TABLE "Odd ""Table""" (
  id          bigint PRIMARY KEY,
  i2          smallint, i4 integer, i8 bigint, d posint,
  n           numeric, n2 numeric(10,2), f4 real, f8 double precision,
  t text, vc varchar(10), c3 char(3), u uuid, e mood, b boolean,
  dt date, ts timestamp, tstz timestamptz,
  by bytea, j json, jb jsonb,
  ta text[], ia integer[], na numeric[], i2d integer[][],
  iv interval, ip inet, m money
);
CREATE TABLE child (id bigint PRIMARY KEY, parent bigint NOT NULL, n numeric, tstz timestamptz, by bytea, ta text[], f8 double precision, dt date);
INSERT INTO "Odd ""Table""" VALUES
 (1, -32768, 2147483647, -9223372036854775808, 5,
  '123456789012345678901234567890.123456789012345678901234567890', 19.90, 1.5, 0.1,
  'héllo # ''quoted''', 'abc', 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'happy', true,
  '2024-02-29', '2024-05-01 10:00:00.000001', '2024-05-01 12:00:00.5+02',
  '\x00ff10', '{"a": 1.10, "b": [1e2, null]}', '{"big": 12345678901234567890, "s": "x"}',
  '{"a","b c",NULL,""}', '{1,NULL,3}', '{1.50,NULL}', '{{1,2},{3,4}}',
  '1 year 2 mons 3 days 04:05:06', '10.0.0.1/8', 1234.56),
 (2, NULL, NULL, NULL, NULL, 'NaN', NULL, 'NaN', '-Infinity', '', NULL, NULL, NULL, NULL, false,
  'infinity', '-infinity', 'infinity', '', 'null', '[]', '{}', '{}', NULL, NULL, NULL, NULL, NULL);
INSERT INTO child VALUES
 (10, 1, 0.000000000000000000000000000001, '2024-01-01 00:00:00+00', '\x01', '{"x,y","{z}"}', 2.5, '2020-01-01'),
 (11, 1, -1e20, '1999-12-31 23:59:59.999999+00', NULL, '{}', 'NaN', NULL),
 (12, 2, NULL, NULL, NULL, NULL, NULL, NULL);
`

func setup(t *testing.T) (*pgx.Conn, *extract.Snapshot, *mapping.Catalog) {
	t.Helper()
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, typesDDL); err != nil {
		t.Fatal(err)
	}
	conn, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close(context.Background()) })
	cat, err := snap.Catalog(ctx, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	return conn, snap, cat
}

func TestCatalogKinds(t *testing.T) {
	_, _, cat := setup(t)
	tb := cat.Lookup("public", `Odd "Table"`)
	if tb == nil {
		t.Fatalf("table with quotes in its name not in catalog: %v", cat.Tables)
	}
	want := map[string]string{
		"i2": "int", "d": "int", "n": "numeric", "f4": "float", "c3": "text", "u": "uuid", "e": "text",
		"b": "bool", "dt": "date", "ts": "timestamp", "tstz": "timestamptz", "by": "bytea", "j": "json",
		"jb": "json", "ta": "array/text", "i2d": "array/int", "na": "array/numeric", "iv": "other", "ip": "other", "m": "numeric",
	}
	for col, k := range want {
		c := tb.Column(col)
		if c == nil {
			t.Errorf("no column %s", col)
			continue
		}
		got := c.Type.Kind.String()
		if c.Type.Kind == pgkind.Array {
			got += "/" + c.Type.Elem.String()
		}
		if got != k {
			t.Errorf("column %s (%s): kind %s, want %s", col, c.Type.Name, got, k)
		}
	}
	if !reflect.DeepEqual(tb.PrimaryKey, []string{"id"}) || !tb.Column("id").NotNull {
		t.Errorf("primary key %v", tb.PrimaryKey)
	}
}

func TestRowsExactValues(t *testing.T) {
	_, snap, cat := setup(t)
	tb := cat.Lookup("public", `Odd "Table"`)
	q := extract.Query{Schema: "public", Table: tb.Name, Columns: tb.Columns, OrderBy: []string{"id"}}
	var rows []extract.Row
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	get := func(r extract.Row, col string) any {
		for i, c := range q.Columns {
			if c.Name == col {
				return r.Values[i]
			}
		}
		t.Fatalf("no column %s", col)
		return nil
	}
	tstz := time.Date(2024, 5, 1, 10, 0, 0, 500000000, time.UTC)
	want1 := map[string]any{
		"i2": int64(-32768), "i4": int64(2147483647), "i8": int64(-9223372036854775808), "d": int64(5),
		"n":  extract.Decimal("123456789012345678901234567890.123456789012345678901234567890"),
		"n2": extract.Decimal("19.90"), "f4": float32(1.5), "f8": 0.1,
		"t": "héllo # 'quoted'", "vc": "abc", "c3": "ab" /* char(n) padding is not significant: the text cast drops it */, "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "e": "happy", "b": true,
		"dt": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "ts": time.Date(2024, 5, 1, 10, 0, 0, 1000, time.UTC), "tstz": tstz,
		"by": []byte{0, 255, 16}, "j": extract.JSON(`{"a": 1.10, "b": [1e2, null]}`), "jb": extract.JSON(`{"s": "x", "big": 12345678901234567890}`),
		"ta": []any{"a", "b c", nil, ""}, "ia": []any{int64(1), nil, int64(3)}, "na": []any{extract.Decimal("1.50"), nil},
		"i2d": []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}},
		"iv":  "P1Y2M3DT4H5M6S", "ip": "10.0.0.1/8", "m": extract.Decimal("1234.56"),
	}
	for col, w := range want1 {
		if got := get(rows[0], col); !reflect.DeepEqual(got, w) {
			t.Errorf("row 1 %s = %#v, want %#v", col, got, w)
		}
	}
	want2 := map[string]any{
		"i2": nil, "n": extract.Decimal("NaN"), "t": "", "b": false,
		"dt": extract.Infinity{Sign: 1}, "ts": extract.Infinity{Sign: -1}, "tstz": extract.Infinity{Sign: 1},
		"by": []byte{}, "j": extract.JSON("null"), "jb": extract.JSON("[]"), "ta": []any{}, "ia": []any{}, "na": nil,
	}
	for col, w := range want2 {
		got := get(rows[1], col)
		if col == "by" {
			// an empty bytea is not NULL
			if b, ok := got.([]byte); !ok || len(b) != 0 {
				t.Errorf("row 2 by = %#v, want empty non-nil bytes", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("row 2 %s = %#v, want %#v", col, got, w)
		}
	}
	if f := get(rows[1], "f4").(float32); f == f {
		t.Errorf("f4 NaN read as %v", f)
	}
}

func TestEmbedAndJoinDecoding(t *testing.T) {
	_, snap, cat := setup(t)
	parent := cat.Lookup("public", `Odd "Table"`)
	child := cat.Lookup("public", "child")
	q := extract.Query{
		Schema: "public", Table: parent.Name, OrderBy: []string{"id"},
		Columns: []mapping.Column{*parent.Column("id")},
		Joins: []extract.Join{{Schema: "public", Table: "child", On: []extract.JoinOn{{Column: "id", Ref: -1, RefColumn: "i2"}},
			Columns: []mapping.Column{*child.Column("n")}}},
		Embeds: []extract.Embed{{Schema: "public", Table: "child", On: []extract.JoinOn{{Column: "parent", Ref: -1, RefColumn: "id"}},
			Columns: child.Columns, OrderBy: []string{"id"}, Limit: 5}},
	}
	var got []extract.Row
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || len(got[0].Values) != q.Width() {
		t.Fatalf("rows %v", got)
	}
	if got[0].Values[1] != nil {
		t.Errorf("LEFT JOIN without a parent gave %#v, want nil", got[0].Values[1])
	}
	kids := got[0].Values[2].([]extract.Row)
	if len(kids) != 2 {
		t.Fatalf("children %v", kids)
	}
	want := []any{int64(10), int64(1), extract.Decimal("0.000000000000000000000000000001"),
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), []byte{1}, []any{"x,y", "{z}"}, 2.5, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	if !reflect.DeepEqual(kids[0].Values, want) {
		t.Errorf("child 10 = %#v\nwant %#v", kids[0].Values, want)
	}
	k2 := kids[1].Values
	if k2[2] != extract.Decimal("-100000000000000000000") || k2[3] != time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC) || k2[4] != nil || fmt.Sprint(k2[6]) != "NaN" {
		t.Errorf("child 11 = %#v", k2)
	}
	if kids2 := got[1].Values[2].([]extract.Row); len(kids2) != 1 || kids2[0].Values[2] != nil {
		t.Errorf("row 2 children %#v", kids2)
	}
}

func TestKeysetResume(t *testing.T) {
	_, snap, cat := setup(t)
	tb := cat.Lookup("public", "child")
	q := extract.Query{Schema: "public", Table: "child", Columns: tb.Columns, OrderBy: []string{"parent", "id"}, After: []any{int64(1), int64(10)}}
	var ids []any
	for r, err := range snap.Rows(t.Context(), q) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Values[0])
	}
	if !reflect.DeepEqual(ids, []any{int64(11), int64(12)}) {
		t.Errorf("after (1,10): %v", ids)
	}
}
