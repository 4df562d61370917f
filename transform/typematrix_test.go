package transform_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/golden"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	"github.com/pgdynamo/migrate/transform"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

// How a case's values are checked against PostgreSQL's text rendering of
// them (col::text, element by element for arrays). The rule belongs to the
// PostgreSQL type, never to how the tool classifies it, so that a type the
// tool misreads cannot pass by being checked its own way.
type rule int

const (
	ruleText   rule = iota // S equal to the text
	ruleNumber             // N (or S) denoting the number the text denotes
	ruleMoney              // ruleNumber after "$" and thousands separators
	ruleFloat              // ruleNumber; as: string, the very text
	ruleBool               // BOOL; as: string, the text ("true", "false")
	ruleBytea              // B with the bytes of "\x..." text; as: string, base64
	ruleJSON               // M, L, S, N, BOOL or NULL, the same JSON value
	ruleTime               // S, the same date or instant, astronomical years
)

// matrixCase is one PostgreSQL type: a table m_<name> with v of the type,
// a a one-dimensional and a2 a two-dimensional array of it, one row per
// value (a = {value,NULL}, a2 = {{value},{NULL}}) and one row of empty
// arrays.
type matrixCase struct {
	name   string // table suffix and label
	typ    string // the column's SQL type
	rule   rule
	readme string // the first cell of the README's type table that covers it
	values []string
}

// typeSetup creates the types the cases use that are not built in.
const typeSetup = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN smallpos AS posint CHECK (VALUE < 100);
CREATE DOMAIN real_d AS real;
CREATE DOMAIN code AS text CHECK (VALUE <> '');
CREATE TYPE pair AS (n integer, s text);
`

var matrixCases = []matrixCase{
	{"int2", "smallint", ruleNumber, "`smallint`", []string{"-32768", "0", "32767"}},
	{"int4", "integer", ruleNumber, "`integer`", []string{"-2147483648", "2147483647"}},
	{"int8", "bigint", ruleNumber, "`bigint`", []string{"-9223372036854775808", "9223372036854775807"}},
	{"float4", "real", ruleFloat, "`real`", []string{
		"0.1", "'-0'", "3.4028235e38", "-3.4028235e38", "1.1754944e-38", "1e-45", "123456", "1234567", "0.0001", "0.00001",
		"'NaN'", "'Infinity'", "'-Infinity'"}},
	{"float8", "double precision", ruleFloat, "`double precision`", []string{
		"0.1", "'-0'", "123456789012345", "1234567890123456", "1e125", "1e-130", "1.7976931348623157e308",
		"2.2250738585072014e-308", "5e-324", "'NaN'", "'Infinity'", "'-Infinity'"}},
	{"numeric", "numeric", ruleNumber, "`numeric`", []string{
		"0", "-0.0", "19.90", "12345678901234567890123456789012345678", "123456789012345678901234567890123456789",
		"0.00000000000000000000000000000000000001", "1e-130", "1e-131", "9.99e125", "1e126", "'NaN'", "'Infinity'", "'-Infinity'"}},
	{"numeric_10_2", "numeric(10,2)", ruleNumber, "`numeric`", []string{"19.90", "-99999999.99", "0.00"}},
	{"money", "money", ruleMoney, "`money`", []string{"-92233720368547758.08", "92233720368547758.07", "1234.56", "0"}},
	{"text", "text", ruleText, "`text`", []string{"''", "'héllo'", `E'tab\tnew\nline'`, `'''q'' "dq" {b} ,c \ NULL'`, "'NULL'"}},
	{"varchar", "varchar(10)", ruleText, "`varchar`", []string{"''", "'abc  '"}},
	{"bpchar", "char(5)", ruleText, "`char(n)`", []string{"''", "'ab'", "'abcde'"}},
	{"char", `"char"`, ruleText, "`\"char\"`", []string{"'a'", "''"}},
	{"name", "name", ruleText, "`name`", []string{"'pg_class'", "'Odd Name'"}},
	{"bytea", "bytea", ruleBytea, "`bytea`", []string{`'\x'`, `'\x00ff10'`}},
	{"bool", "boolean", ruleBool, "`boolean`", []string{"true", "false"}},
	{"uuid", "uuid", ruleText, "`uuid`", []string{"'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'"}},
	{"json", "json", ruleJSON, "`json`", []string{
		`'{"a": 1.10, "b": [1e2, null, "x", true], "c": {}}'`, `'"s"'`, `'null'`, `'[]'`,
		`'12345678901234567890123456789012345678901'`, `'{"a": 1, "a": 2}'`}},
	{"jsonb", "jsonb", ruleJSON, "`jsonb`", []string{`'{"a": 1.10, "b": [1e2, null]}'`, `'{"k": "\u00e9"}'`}},
	{"xml", "xml", ruleText, "`xml`", []string{`'<a x="1">t</a>'`}},
	{"date", "date", ruleTime, "`date`", []string{"'2024-02-29'", "'0001-01-01'", "'0044-03-15 BC'", "'4713-01-01 BC'", "'5874897-12-31'", "'infinity'", "'-infinity'"}},
	{"time", "time", ruleText, "`time`", []string{"'00:00:00'", "'23:59:59.999999'", "'24:00:00'"}},
	{"timetz", "timetz", ruleText, "`timetz`", []string{"'10:00:00+02'", "'23:59:59.999999-15:59'"}},
	{"timestamp", "timestamp", ruleTime, "`timestamp`", []string{
		"'2024-05-01 10:00:00.000001'", "'0044-03-15 12:00:00 BC'", "'4713-01-01 00:00:00 BC'", "'294276-12-31 23:59:59.999999'", "'infinity'", "'-infinity'"}},
	{"timestamptz", "timestamptz", ruleTime, "`timestamptz`", []string{
		"'2024-05-01 12:00:00.5+02'", "'0044-03-15 12:00:00+00 BC'", "'294276-12-31 23:59:59.999999+00'", "'infinity'", "'-infinity'"}},
	{"interval", "interval", ruleText, "`interval`", []string{"'1 year 2 mons 3 days 04:05:06.789'", "'-1 days +02:00:00'", "'0'", "'178000000 years'"}},
	{"inet", "inet", ruleText, "`inet`", []string{"'10.0.0.1/8'", "'::1'", "'192.168.0.1'"}},
	{"cidr", "cidr", ruleText, "`cidr`", []string{"'10.0.0.0/8'", "'2001:db8::/32'"}},
	{"macaddr", "macaddr", ruleText, "`macaddr`", []string{"'08:00:2B:01:02:03'"}},
	{"macaddr8", "macaddr8", ruleText, "`macaddr8`", []string{"'08:00:2b:01:02:03:04:05'"}},
	{"bit", "bit(4)", ruleText, "`bit`", []string{"B'1010'"}},
	{"varbit", "varbit", ruleText, "`varbit`", []string{"B''", "B'101'"}},
	{"tsvector", "tsvector", ruleText, "`tsvector`", []string{"'a fat cat'", "''"}},
	{"tsquery", "tsquery", ruleText, "`tsquery`", []string{"'fat & (rat | !cat)'"}},
	{"point", "point", ruleText, "geometric", []string{"'(1,2)'", "'(1e300,-0.5)'"}},
	{"line", "line", ruleText, "geometric", []string{"'{1,2,3}'"}},
	{"lseg", "lseg", ruleText, "geometric", []string{"'[(1,2),(3,4)]'"}},
	{"box", "box", ruleText, "geometric", []string{"'(3,4),(1,2)'"}},
	{"path", "path", ruleText, "geometric", []string{"'[(1,2),(3,4)]'", "'((1,2),(3,4),(5,6))'"}},
	{"polygon", "polygon", ruleText, "geometric", []string{"'((0,0),(1,1),(1,0))'"}},
	{"circle", "circle", ruleText, "geometric", []string{"'<(1,2),3>'"}},
	{"pg_lsn", "pg_lsn", ruleText, "`pg_lsn`", []string{"'16/B374D848'"}},
	{"int4range", "int4range", ruleText, "range", []string{"'[1,10)'", "'empty'", "'(,5]'"}},
	{"numrange", "numrange", ruleText, "range", []string{"'(1.50,2.5]'"}},
	{"tstzrange", "tstzrange", ruleText, "range", []string{"'[2024-01-01 00:00:00+00,infinity)'"}},
	{"daterange", "daterange", ruleText, "range", []string{"'[2024-01-01,2024-02-01)'"}},
	{"int4multirange", "int4multirange", ruleText, "multirange", []string{"'{[1,3),[5,7)}'", "'{}'"}},
	{"enum", "mood", ruleText, "enums", []string{"'happy'"}},
	{"domain_int", "posint", ruleNumber, "domains over them", []string{"5", "2147483647"}},
	{"domain_domain", "smallpos", ruleNumber, "domains over them", []string{"7"}},
	{"domain_real", "real_d", ruleFloat, "`real`", []string{"0.1", "3.4028235e38"}},
	{"domain_text", "code", ruleText, "`text`", []string{"'x'"}},
	{"oid", "oid", ruleNumber, "`oid`", []string{"0", "4294967295"}},
	{"regclass", "regclass", ruleText, "other types", []string{"'pg_class'"}},
	{"xid", "xid", ruleText, "other types", []string{"'4294967295'"}},
	{"xid8", "xid8", ruleText, "other types", []string{"'18446744073709551615'"}},
	{"tid", "tid", ruleText, "other types", []string{"'(0,1)'"}},
	{"pg_snapshot", "pg_snapshot", ruleText, "other types", []string{"'10:20:10,14,15'"}},
	{"jsonpath", "jsonpath", ruleText, "other types", []string{`'$.a[*] ? (@ > 1)'`}},
	{"composite", "pair", ruleText, "composite", []string{`ROW(1, 'a b,"c"')`, "ROW(NULL, NULL)"}},
}

// TestTypeMatrix reads every case's rows through extract from a real
// PostgreSQL, transforms them as a run does (plain, and with as: string),
// and checks each value written against PostgreSQL's own text of it. A
// value is exact, or refused before writing (a row error saying which
// as: rescues it); anything else fails. Arrays of the kinds as: set takes
// are also written as sets. Each value is also read as an
// embedded child (through JSON) and decoded from its text as sync decodes
// a replicated row (extract.Values). The outcomes are written to
// testdata/typematrix.golden (go test ./transform -run TestTypeMatrix
// -update), and the README's type table is checked against them.
func TestTypeMatrix(t *testing.T) {
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	var ddl strings.Builder
	ddl.WriteString(typeSetup)
	for _, c := range matrixCases {
		fmt.Fprintf(&ddl, "CREATE TABLE m_%s (id integer PRIMARY KEY, v %s, a %s[], a2 %s[][], s %s[]);\n", c.name, c.typ, c.typ, c.typ, c.typ)
		for i, lit := range c.values {
			v := fmt.Sprintf("(%s)::%s", lit, c.typ)
			fmt.Fprintf(&ddl, "INSERT INTO m_%s VALUES (%d, %s, ARRAY[%s, NULL], ARRAY[ARRAY[%s], ARRAY[NULL::%s]], ARRAY[%s, %s]);\n", c.name, i+1, v, v, v, c.typ, v, v)
		}
		fmt.Fprintf(&ddl, "INSERT INTO m_%s VALUES (%d, NULL, '{}', '{}', '{}');\n", c.name, len(c.values)+1)
	}
	migratetest.Exec(t, url, ddl.String())

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
	// PostgreSQL's rendering, in its default settings but for the
	// interval style the README documents (ISO 8601) and UTC, so that
	// timestamptz text names the instant without a local offset.
	ref, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close(context.Background()) })
	if _, err := ref.Exec(ctx, "SET IntervalStyle = iso_8601; SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	out.WriteString("# Generated by TestTypeMatrix (go test ./transform -run TestTypeMatrix -update).\n" +
		"# Per type: what a value becomes (plain, as: string, as an embedded child, as: set), checked against PostgreSQL's col::text.\n" +
		"# Arrays: a = {value,NULL}, a2 = {{value},{NULL}}, s = {value,value} (as: set); the last row of each type has empty arrays.\n")
	outcomes := map[string]map[string]bool{} // README row -> DynamoDB types written plainly
	for _, c := range matrixCases {
		fmt.Fprintf(&out, "\n## %s (%s)\n", c.typ, c.name)
		plain := runMatrixCase(t, ctx, c, cat, snap, ref, &out)
		if outcomes[c.readme] == nil {
			outcomes[c.readme] = map[string]bool{}
		}
		for k := range plain {
			outcomes[c.readme][k] = true
		}
	}
	golden.Check(t, "../testdata/typematrix.golden", out.Bytes())
	checkReadmeTypes(t, "../README.md", outcomes)
}

// pgRow is PostgreSQL's text of one row: v, and the elements of a and a2
// in storage order with their dimensions, and of s.
type pgRow struct {
	id       int
	v        *string
	a, a2, s []*string
	ad, a2d  string // array_dims, "" for an empty or NULL array
}

func runMatrixCase(t *testing.T, ctx context.Context, c matrixCase, cat *mapping.Catalog, snap *extract.Snapshot, ref *pgx.Conn, golden io.Writer) map[string]bool {
	t.Helper()
	table := "m_" + c.name
	yaml := fmt.Sprintf(`table: Matrix
keys: { partition: PK, sort: SK }
entities:
  Plain:
    from: %[1]s
    key: { pk: "R#{id}", sk: PLAIN }
    attributes: { v: v, a: a, a2: a2 }
  Text:
    from: %[1]s
    key: { pk: "R#{id}", sk: TEXT }
    attributes:
      v: { column: v, as: string }
      a: { column: a, as: string }
      a2: { column: a2, as: string }
  Embed:
    from: %[1]s
    key: { pk: "R#{id}", sk: EMBED }
    attributes: { id: id }
    embed:
      child:
        from: %[1]s
        join: { id: id }
        as: list
        order: [id]
        max: 1
        attributes: { v: v, a: a, a2: a2 }
  EmbedText:
    from: %[1]s
    key: { pk: "R#{id}", sk: EMBEDTEXT }
    attributes: { id: id }
    embed:
      child:
        from: %[1]s
        join: { id: id }
        as: list
        order: [id]
        max: 1
        attributes:
          v: { column: v, as: string }
          a: { column: a, as: string }
          a2: { column: a2, as: string }
`, table)
	// as: set, where validate allows it: s = {value,value}, one member.
	if col := cat.Lookup("public", table).Column("s"); col != nil && slices.Contains(setKinds, col.Type.Elem) {
		yaml += fmt.Sprintf(`  Set:
    from: %s
    key: { pk: "R#{id}", sk: SET }
    attributes: { s: { column: s, as: set } }
`, table)
	}
	m, err := mapping.Parse("matrix.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("%s: parse: %v", c.name, err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		t.Errorf("%s: validate refuses: %v", c.name, ds)
		return nil
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if len(plan.Sources) != 1 {
		t.Fatalf("%s: %d sources", c.name, len(plan.Sources))
	}
	src := plan.Sources[0]

	// PostgreSQL's text of every value.
	rows, err := ref.Query(ctx, fmt.Sprintf(`SELECT id, v::text,
  (SELECT json_agg(e) FROM (SELECT unnest(a)::text AS e) AS u), coalesce(array_dims(a), ''),
  (SELECT json_agg(e) FROM (SELECT unnest(a2)::text AS e) AS u), coalesce(array_dims(a2), ''),
  (SELECT json_agg(e) FROM (SELECT unnest(s)::text AS e) AS u)
FROM %s ORDER BY id`, table))
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	var want []pgRow
	for rows.Next() {
		var r pgRow
		var aj, a2j, sj *string
		if err := rows.Scan(&r.id, &r.v, &aj, &r.ad, &a2j, &r.a2d, &sj); err != nil {
			t.Fatal(err)
		}
		r.a, r.a2, r.s = jsonTexts(t, aj), jsonTexts(t, a2j), jsonTexts(t, sj)
		want = append(want, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	plainTypes := map[string]bool{}
	i := 0
	var read []extract.Row
	for row, err := range snap.Rows(ctx, src.Query) {
		if err != nil {
			t.Fatalf("%s: extract: %v", c.name, err)
		}
		read = append(read, row)
		if i >= len(want) {
			t.Fatalf("%s: more rows than PostgreSQL has", c.name)
		}
		w := want[i]
		i++
		label := "empty arrays"
		if w.id <= len(c.values) {
			label = c.values[w.id-1]
		}
		fmt.Fprintf(golden, "%s -> %s\n", label, deref(w.v))
		items, errs := src.Apply(row)
		for _, e := range errs {
			asString := strings.HasSuffix(e.Entity, "Text")
			// Refused before writing: it must name the column and,
			// without as: string, the as: that rescues it.
			if !slices.Contains([]string{"v", "a", "a2", "s"}, e.Column) {
				t.Errorf("%s %s %s: row error names no column: %v", c.name, label, e.Entity, e)
			}
			if !asString && !strings.Contains(e.Error(), "as: string") {
				t.Errorf("%s %s: row error does not say which as: rescues the value: %v", c.name, label, e)
			}
			fmt.Fprintf(golden, "  %-9s refused: %s\n", e.Entity, rowErrorText(e))
		}
		for _, it := range items {
			asString := strings.HasSuffix(it.Entity, "Text")
			attrs := it.Attrs
			if strings.HasPrefix(it.Entity, "Embed") {
				// The row as its own child: read through the embed's
				// JSON, another path than a column's.
				l, ok := it.Attrs["child"].(*types.AttributeValueMemberL)
				if !ok || len(l.Value) != 1 {
					t.Errorf("%s %s %s: child = %s", c.name, label, it.Entity, render(it.Attrs["child"]))
					continue
				}
				child, ok := l.Value[0].(*types.AttributeValueMemberM)
				if !ok {
					t.Errorf("%s %s %s: child = %s", c.name, label, it.Entity, render(it.Attrs["child"]))
					continue
				}
				attrs = child.Value
			}
			if it.Entity == "Set" {
				if err := sameSet(c.rule, w.s, it.Attrs["s"]); err != nil {
					t.Errorf("%s %s Set.s = %s: %v", c.name, label, render(it.Attrs["s"]), err)
				}
				fmt.Fprintf(golden, "  %-9s s=%s\n", it.Entity, render(it.Attrs["s"]))
				continue
			}
			check := func(attr string, ok func(types.AttributeValue) error) {
				av := attrs[attr]
				if err := ok(av); err != nil {
					t.Errorf("%s %s %s.%s = %s: %v", c.name, label, it.Entity, attr, render(av), err)
				}
			}
			check("v", func(av types.AttributeValue) error { return sameAsPG(c.rule, w.v, av, asString) })
			check("a", func(av types.AttributeValue) error { return sameArray(c.rule, w.a, w.ad, av, asString) })
			check("a2", func(av types.AttributeValue) error { return sameArray(c.rule, w.a2, w.a2d, av, asString) })
			fmt.Fprintf(golden, "  %-9s v=%s a=%s a2=%s\n", it.Entity, render(attrs["v"]), render(attrs["a"]), render(attrs["a2"]))
			if it.Entity == "Plain" {
				if av := attrs["v"]; av != nil {
					plainTypes[ddbvalue.TypeName(av)] = true
				}
			}
		}
	}
	if i != len(want) {
		t.Errorf("%s: %d rows read, PostgreSQL has %d", c.name, i, len(want))
	}
	checkValuesPath(t, ctx, c, snap, ref, src.Query, read)
	return plainTypes
}

// checkValuesPath: sync decodes rows from their text, as logical
// replication sends it, through extract.Values; every value must decode
// to exactly what the table read gave.
func checkValuesPath(t *testing.T, ctx context.Context, c matrixCase, snap *extract.Snapshot, ref *pgx.Conn, q extract.Query, read []extract.Row) {
	t.Helper()
	var cols []string
	for _, col := range q.Columns {
		cols = append(cols, pgx.Identifier{col.Name}.Sanitize())
	}
	sql := fmt.Sprintf("SELECT %s FROM m_%s ORDER BY id", strings.Join(cols, ", "), c.name)
	res := ref.PgConn().ExecParams(ctx, sql, nil, nil, nil, []int16{pgx.TextFormatCode}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var tuples [][]*string
	for _, raw := range res.Rows {
		tuple := make([]*string, len(raw))
		for i, v := range raw {
			if v != nil {
				s := string(v)
				tuple[i] = &s
			}
		}
		tuples = append(tuples, tuple)
	}
	k := 0
	for r, err := range extract.Values(ctx, snap, q.Columns, tuples) {
		if err != nil {
			t.Errorf("%s: Values: %v", c.name, err)
			return
		}
		for j, col := range q.Columns {
			// %#v: NaN equals NaN, and a float32 is not a float64.
			if got, want := fmt.Sprintf("%#v", r.Values[j]), fmt.Sprintf("%#v", read[k].Values[j]); got != want {
				t.Errorf("%s row %d column %s: from text (sync) %s, table read %s", c.name, k+1, col.Name, got, want)
			}
		}
		k++
	}
	if k != len(read) {
		t.Errorf("%s: Values gave %d rows for %d", c.name, k, len(read))
	}
}

// setKinds are the element kinds validate allows as: set for.
var setKinds = []pgkind.Kind{pgkind.Text, pgkind.UUID, pgkind.Int, pgkind.Numeric, pgkind.Float, pgkind.Bytea}

// sameSet checks an as: set attribute against PostgreSQL's texts of the
// array's elements (all the same value here): one member, or the
// attribute left out for an empty array.
func sameSet(r rule, elems []*string, av types.AttributeValue) error {
	if len(elems) == 0 {
		if av != nil {
			return errors.New("an empty array must leave the attribute out")
		}
		return nil
	}
	var member types.AttributeValue
	switch av := av.(type) {
	case *types.AttributeValueMemberSS:
		if len(av.Value) == 1 {
			member = &types.AttributeValueMemberS{Value: av.Value[0]}
		}
	case *types.AttributeValueMemberNS:
		if len(av.Value) == 1 {
			member = &types.AttributeValueMemberN{Value: av.Value[0]}
		}
	case *types.AttributeValueMemberBS:
		if len(av.Value) == 1 {
			member = &types.AttributeValueMemberB{Value: av.Value[0]}
		}
	}
	if member == nil {
		return fmt.Errorf("want a set of one member (PostgreSQL has %d equal elements)", len(elems))
	}
	return sameAsPG(r, elems[0], member, false)
}

// rowErrorText is a row error without the parts that name the test's
// table and key, which the golden file's context already gives.
func rowErrorText(e *transform.RowError) string {
	var parts []string
	for _, p := range e.Problems {
		parts = append(parts, p.String())
	}
	if len(parts) == 0 {
		return e.Err.Error()
	}
	return strings.Join(parts, "; ")
}

func jsonTexts(t *testing.T, s *string) []*string {
	t.Helper()
	if s == nil {
		return nil
	}
	var out []*string
	if err := json.Unmarshal([]byte(*s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

// sameAsPG checks one value written against PostgreSQL's text of it (nil:
// NULL, which a run leaves out).
func sameAsPG(r rule, text *string, av types.AttributeValue, asString bool) error {
	if text == nil {
		if av == nil {
			return nil
		}
		if _, ok := av.(*types.AttributeValueMemberNULL); ok {
			return nil
		}
		return errors.New("PostgreSQL has NULL")
	}
	if av == nil {
		return fmt.Errorf("left out; PostgreSQL has %q", *text)
	}
	pg := *text
	// The very text, where the type is documented as S (numbers are N
	// unless as: string).
	numeric := r == ruleNumber || r == ruleMoney || r == ruleFloat
	if s, ok := av.(*types.AttributeValueMemberS); ok && s.Value == pg && r != ruleBytea && (asString || !numeric) {
		return nil
	}
	differs := fmt.Errorf("PostgreSQL has %q", pg)
	switch r {
	case ruleNumber, ruleMoney, ruleFloat:
		if r == ruleFloat && asString {
			// as: string is the very text, also as a number in an
			// array's JSON.
			if n, ok := av.(*types.AttributeValueMemberN); ok && n.Value == pg {
				return nil
			}
			return differs
		}
		if r == ruleMoney {
			pg = strings.NewReplacer("$", "", ",", "").Replace(pg)
		}
		want, ok := new(big.Rat).SetString(pg)
		if !ok {
			return differs
		}
		var got string
		switch av := av.(type) {
		case *types.AttributeValueMemberN:
			got = av.Value
		case *types.AttributeValueMemberS:
			if !asString {
				return differs
			}
			got = av.Value
		default:
			return differs
		}
		if g, ok := new(big.Rat).SetString(got); !ok || g.Cmp(want) != 0 {
			return differs
		}
		return nil
	case ruleBool:
		if b, ok := av.(*types.AttributeValueMemberBOOL); ok && !asString && strconv.FormatBool(b.Value) == pg {
			return nil
		}
		return differs
	case ruleBytea:
		want, err := hex.DecodeString(strings.TrimPrefix(pg, `\x`))
		if err != nil {
			return err
		}
		var got []byte
		switch av := av.(type) {
		case *types.AttributeValueMemberB:
			if asString {
				return differs
			}
			got = av.Value
		case *types.AttributeValueMemberS:
			if !asString {
				return differs
			}
			if got, err = base64.StdEncoding.DecodeString(av.Value); err != nil {
				return err
			}
		}
		if !bytes.Equal(got, want) || got == nil {
			return differs
		}
		return nil
	case ruleJSON:
		if asString {
			// The very text; in an array's JSON, compacted.
			var c bytes.Buffer
			if s, ok := av.(*types.AttributeValueMemberS); ok && json.Compact(&c, []byte(pg)) == nil && c.String() == s.Value {
				return nil
			}
			return differs
		}
		if err := sameJSON(json.NewDecoder(strings.NewReader(pg)), av); err != nil {
			return fmt.Errorf("%w (PostgreSQL has %s)", err, pg)
		}
		return nil
	case ruleTime:
		s, ok := av.(*types.AttributeValueMemberS)
		if !ok || s.Value != isoTime(pg) {
			return fmt.Errorf("PostgreSQL has %q, which is %s", pg, isoTime(pg))
		}
		return nil
	}
	return differs
}

// sameArray checks an array attribute against PostgreSQL's texts of its
// elements and its dimensions: plainly a list of lists, as: string the
// JSON text of one.
func sameArray(r rule, elems []*string, dims string, av types.AttributeValue, asString bool) error {
	if av == nil {
		return errors.New("left out")
	}
	if s, ok := av.(*types.AttributeValueMemberS); ok && asString {
		var err error
		if av, err = fromJSON(json.RawMessage(s.Value), max(1, strings.Count(dims, "[")), r); err != nil {
			return fmt.Errorf("as: string is not the JSON of an array: %w", err)
		}
	}
	var got []types.AttributeValue
	var shape []int
	var walk func(av types.AttributeValue, depth int) error
	walk = func(av types.AttributeValue, depth int) error {
		l, ok := av.(*types.AttributeValueMemberL)
		if !ok {
			return fmt.Errorf("not a list at depth %d", depth)
		}
		if len(shape) <= depth {
			shape = append(shape, len(l.Value))
		}
		if shape[depth] != len(l.Value) {
			return errors.New("ragged")
		}
		for _, e := range l.Value {
			if _, isList := e.(*types.AttributeValueMemberL); isList && depth+1 < strings.Count(dims, "[") {
				if err := walk(e, depth+1); err != nil {
					return err
				}
				continue
			}
			got = append(got, e)
		}
		return nil
	}
	if err := walk(av, 0); err != nil {
		return err
	}
	var gotDims string
	for _, n := range shape {
		if n > 0 {
			gotDims += fmt.Sprintf("[1:%d]", n)
		}
	}
	if gotDims != dims {
		return fmt.Errorf("dimensions %s, PostgreSQL has %q", gotDims, dims)
	}
	if len(got) != len(elems) {
		return fmt.Errorf("%d elements, PostgreSQL has %d", len(got), len(elems))
	}
	for i, e := range elems {
		if _, isNull := got[i].(*types.AttributeValueMemberNULL); isNull && e == nil {
			continue
		}
		if err := sameAsPG(r, e, got[i], asString); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// fromJSON turns an array's as: string JSON into the values its
// elements stand for: levels of lists (the array's dimensions), then
// elements, a json element as its JSON text (compacted, as encoding/json
// writes it).
func fromJSON(raw json.RawMessage, levels int, r rule) (types.AttributeValue, error) {
	if levels > 0 {
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, err
		}
		l := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		for _, e := range elems {
			av, err := fromJSON(e, levels-1, r)
			if err != nil {
				return nil, err
			}
			l.Value = append(l.Value, av)
		}
		return l, nil
	}
	if r == ruleJSON && string(raw) != "null" {
		return &types.AttributeValueMemberS{Value: string(raw)}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberS{Value: strconv.FormatBool(v)}, nil
	case json.Number:
		return &types.AttributeValueMemberN{Value: v.String()}, nil
	case string:
		return &types.AttributeValueMemberS{Value: v}, nil
	}
	return &types.AttributeValueMemberS{Value: string(raw)}, nil
}

// sameJSON compares JSON text, token by token, with the value written: an
// object's keys one by one, so that a key given twice (json keeps both)
// cannot pass as the map that kept one.
func sameJSON(dec *json.Decoder, av types.AttributeValue) error {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			m, ok := av.(*types.AttributeValueMemberM)
			if !ok {
				return errors.New("an object written as another type")
			}
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("key %q is in the object twice, the map holds one", key)
				}
				seen[key] = true
				if err := sameJSON(dec, m.Value[key]); err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
			}
			if len(seen) != len(m.Value) {
				return fmt.Errorf("the map has %d keys, the object %d", len(m.Value), len(seen))
			}
		case '[':
			l, ok := av.(*types.AttributeValueMemberL)
			if !ok {
				return errors.New("an array written as another type")
			}
			n := 0
			for dec.More() {
				if n >= len(l.Value) {
					return errors.New("the list is shorter")
				}
				if err := sameJSON(dec, l.Value[n]); err != nil {
					return fmt.Errorf("[%d]: %w", n, err)
				}
				n++
			}
			if n != len(l.Value) {
				return errors.New("the list is longer")
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case nil:
		if _, ok := av.(*types.AttributeValueMemberNULL); !ok {
			return errors.New("null written as another value")
		}
	case bool:
		if b, ok := av.(*types.AttributeValueMemberBOOL); !ok || b.Value != tok {
			return errors.New("a boolean written as another value")
		}
	case string:
		if s, ok := av.(*types.AttributeValueMemberS); !ok || s.Value != tok {
			return errors.New("a string written as another value")
		}
	case json.Number:
		n, ok := av.(*types.AttributeValueMemberN)
		if !ok {
			return errors.New("a number written as another type")
		}
		want, _ := new(big.Rat).SetString(tok.String())
		got, _ := new(big.Rat).SetString(n.Value)
		if want == nil || got == nil || want.Cmp(got) != 0 {
			return fmt.Errorf("number %s written as %s", tok, n.Value)
		}
	}
	return nil
}

var pgTimeText = regexp.MustCompile(`^(\d{4,})-(\d\d)-(\d\d)(?: (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(\+00)?)?( BC)?$`)

// isoTime is the documented DynamoDB text of a date or timestamp
// PostgreSQL prints as text (ISO DateStyle, UTC): YYYY-MM-DD, or
// YYYY-MM-DDTHH:MM:SS.ffffffZ with six fractional digits, years
// astronomically numbered (1 BC is 0000, 44 BC -0043) and at least four
// digits. infinity and -infinity stay words (as: string only).
func isoTime(pg string) string {
	m := pgTimeText.FindStringSubmatch(pg)
	if m == nil {
		return pg
	}
	y, _ := strconv.Atoi(m[1])
	if m[7] != "" {
		y = 1 - y
	}
	out := fmt.Sprintf("%04d-%s-%s", y, m[2], m[3])
	if y < 0 {
		out = fmt.Sprintf("-%04d-%s-%s", -y, m[2], m[3])
	}
	if m[4] == "" {
		return out
	}
	return out + "T" + m[4] + "." + (m[5] + "000000")[:6] + "Z"
}

// render prints a value compactly for the golden file: N as its digits,
// S quoted, B as b"base64", lists in brackets, maps in braces by key.
func render(av types.AttributeValue) string {
	switch av := av.(type) {
	case nil:
		return "-"
	case *types.AttributeValueMemberS:
		return strconv.Quote(av.Value)
	case *types.AttributeValueMemberN:
		return av.Value
	case *types.AttributeValueMemberB:
		return `b"` + base64.StdEncoding.EncodeToString(av.Value) + `"`
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(av.Value)
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberL:
		parts := make([]string, len(av.Value))
		for i, e := range av.Value {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberSS:
		parts := make([]string, len(av.Value))
		for i, e := range av.Value {
			parts[i] = strconv.Quote(e)
		}
		return "SS<" + strings.Join(parts, ",") + ">"
	case *types.AttributeValueMemberNS:
		return "NS<" + strings.Join(av.Value, ",") + ">"
	case *types.AttributeValueMemberBS:
		parts := make([]string, len(av.Value))
		for i, e := range av.Value {
			parts[i] = `b"` + base64.StdEncoding.EncodeToString(e) + `"`
		}
		return "BS<" + strings.Join(parts, ",") + ">"
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(av.Value))
		for k := range av.Value {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ":" + render(av.Value[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("%T", av)
}

// checkReadmeTypes checks the README's type table against what the
// matrix wrote: every case's row exists, and names each DynamoDB type its
// values became without as:.
func checkReadmeTypes(t *testing.T, path string, outcomes map[string]map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Types: PostgreSQL to DynamoDB")
	if !ok {
		t.Fatal("README has no Types section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{} // first cell -> second cell
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows[strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[2])
	}
	for readme, kinds := range outcomes {
		var cell string
		for first, second := range rows {
			if strings.Contains(first, readme) {
				cell += " " + second
			}
		}
		if cell == "" {
			t.Errorf("README type table: no row names %s", readme)
			continue
		}
		words := regexp.MustCompile(`[A-Z]+`).FindAllString(cell, -1)
		for k := range kinds {
			if !slices.Contains(words, k) {
				t.Errorf("README type table: the row of %s says %q, but its values are written as %s", readme, cell, k)
			}
		}
	}
	if t.Failed() {
		t.Logf("README rows: %v", rows)
	}
}

// TestArrayLowerBounds: an array whose subscripts do not start at 1 would
// lose its bounds in a list; it is refused, by column, not shifted.
func TestArrayLowerBounds(t *testing.T) {
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	migratetest.Exec(t, url, `CREATE TABLE b (id integer PRIMARY KEY, a integer[], t text[]);
INSERT INTO b VALUES (1, '[0:1]={1,2}', '{x}'), (2, '{1,2}', '[2:2][1:1]={{y}}');`)
	conn, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close(context.Background())
	cat, err := snap.Catalog(ctx, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("b.yaml", []byte(`table: Bounds
keys: { partition: PK, sort: SK }
entities:
  B:
    from: b
    key: { pk: "B#{id}", sk: B }
    attributes: { a: a, t: { column: t, as: string } }
`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for row, err := range snap.Rows(ctx, plan.Sources[0].Query) {
		if err != nil {
			t.Fatal(err)
		}
		items, errs := plan.Sources[0].Apply(row)
		if len(items) != 0 {
			t.Errorf("an item written: %v", render(&types.AttributeValueMemberM{Value: items[0].Attrs}))
		}
		for _, e := range errs {
			got = append(got, e.Column+": "+rowErrorText(e))
		}
	}
	want := []string{
		"a: column a: attribute a: the array's subscripts are [0:1], not from 1: a list cannot keep them and no as: does (array_lower is not 1)",
		"t: column t: attribute t: the array's subscripts are [2:2][1:1], not from 1: a list cannot keep them and no as: does (array_lower is not 1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("row errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
