package transform_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

func TestNumber(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want, err string }{
		{in: "0", want: "0"},
		{in: "19.90", want: "19.9"},
		{in: "-0.000", want: "0"},
		{in: "007", want: "7"},
		{in: "1234567.89", want: "1234567.89"},
		{in: "12345678901234567890", want: "12345678901234567890"},
		{in: "0.10", want: "0.1"},
		{in: "1e3", want: "1000"},
		{in: "1.5E-3", want: "0.0015"},
		{in: "-42", want: "-42"},
		{in: "99999999999999999999999999999999999999", want: "99999999999999999999999999999999999999"},
		{in: "123456789012345678901234567890123456789", err: "39 significant digits"},
		{in: "1000000000000000000000000000000000000000000000", want: "1000000000000000000000000000000000000000000000"},
		{in: "1e126", err: "outside the range"},
		{in: "1e-131", err: "outside the range"},
		{in: "9.99e125", want: "999" + strings.Repeat("0", 123)},
		{in: "NaN", err: "not a number"},
		{in: "Infinity", err: "not a number"},
		{in: "", err: "not a number"},
		{in: "1.2.3", err: "not a number"},
	}
	for _, tc := range cases {
		got, err := transform.Number(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Number(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Number(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestKeyText(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 5, 1, 9, 3, 4, 120000000, time.FixedZone("CEST", 7200))
	cases := []struct {
		name  string
		v     any
		k     pgkind.Kind
		width int
		want  string
		err   string
	}{
		{"int", int64(42), pgkind.Int, 0, "42", ""},
		{"padded", int64(42), pgkind.Int, 6, "000042", ""},
		{"too wide", int64(1234567), pgkind.Int, 6, "", "more than 6 digits"},
		{"negative padded", int64(-1), pgkind.Int, 4, "", "negative value"},
		{"timestamptz to UTC fixed", ts, pgkind.Timestamptz, 0, "2024-05-01T07:03:04.120000Z", ""},
		{"date", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), pgkind.Date, 0, "2024-05-01", ""},
		{"decimal kept as written", extract.Decimal("19.90"), pgkind.Numeric, 0, "19.90", ""},
		{"NaN decimal", extract.Decimal("NaN"), pgkind.Numeric, 0, "", "not a number"},
		{"separator in value", "a#b", pgkind.Text, 0, "", `contains the key separator "#"`},
		{"empty", "", pgkind.Text, 0, "", "empty string"},
		{"null", nil, pgkind.Text, 0, "", "NULL"},
		{"infinity", extract.Infinity{Sign: 1}, pgkind.Date, 0, "", "infinity cannot be part of a key"},
		{"bool", true, pgkind.Bool, 0, "true", ""},
		// Key text sorts in time order only with four-digit years: year
		// 10000 would sort before 2024, BC dates in reverse.
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), pgkind.Timestamp, 0, "9999-12-31T23:59:59.999999Z", ""},
		{"1 BC is year 0000", time.Date(0, 3, 15, 0, 0, 0, 0, time.UTC), pgkind.Date, 0, "0000-03-15", ""},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), pgkind.Date, 0, "", "10000-01-01 is outside years 0000-9999, where key text sorts in time order"},
		{"44 BC", time.Date(-43, 3, 15, 12, 0, 0, 0, time.UTC), pgkind.Timestamptz, 0, "", "0044-03-15 12:00:00Z BC is outside years 0000-9999"},
		{"timestamp in year 10000 after UTC", time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("-02", -7200)), pgkind.Timestamptz, 0, "", "10000-01-01 01:00:00Z is outside"},
	}
	for _, tc := range cases {
		got, err := transform.KeyText(tc.v, tc.k, tc.width, "#")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestAttributeValue(t *testing.T) {
	t.Parallel()
	typ := func(k pgkind.Kind) pgkind.Type { return pgkind.Type{Kind: k} }
	arr := func(e pgkind.Kind) pgkind.Type { return pgkind.Type{Kind: pgkind.Array, Elem: e} }
	ts := time.Date(2024, 5, 1, 7, 3, 4, 123456000, time.UTC)
	cases := []struct {
		name string
		v    any
		t    pgkind.Type
		as   mapping.Conversion
		null mapping.NullMode
		want string // canonical JSON; "" = omitted
		err  string
	}{
		{name: "int", v: int64(-5), t: typ(pgkind.Int), want: `{"N":"-5"}`},
		{name: "int as string", v: int64(5), t: typ(pgkind.Int), as: mapping.AsString, want: `{"S":"5"}`},
		{name: "numeric exact", v: extract.Decimal("12345678901234567890.123456789"), t: typ(pgkind.Numeric), want: `{"N":"12345678901234567890.123456789"}`},
		{name: "numeric too precise", v: extract.Decimal("1234567890123456789012345678901234567890"), t: typ(pgkind.Numeric), err: "significant digits"},
		{name: "numeric too precise as string", v: extract.Decimal("1234567890123456789012345678901234567891"), t: typ(pgkind.Numeric), as: mapping.AsString, want: `{"S":"1234567890123456789012345678901234567891"}`},
		{name: "numeric NaN", v: extract.Decimal("NaN"), t: typ(pgkind.Numeric), err: "no NaN or Infinity (declare as: string"},
		{name: "float", v: 0.1, t: typ(pgkind.Float), want: `{"N":"0.1"}`},
		{name: "float NaN", v: math.NaN(), t: typ(pgkind.Float), err: "no NaN or Infinity"},
		{name: "float inf", v: math.Inf(-1), t: typ(pgkind.Float), err: "no NaN or Infinity"},
		// A real prints at its own width, as PostgreSQL shows it: widened
		// to 64 bits 0.1 would be 0.10000000149011612.
		{name: "real", v: float32(0.1), t: typ(pgkind.Float), want: `{"N":"0.1"}`},
		{name: "real max", v: float32(math.MaxFloat32), t: typ(pgkind.Float), want: `{"N":"340282350000000000000000000000000000000"}`},
		{name: "real max as string", v: float32(math.MaxFloat32), t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"3.4028235e+38"}`},
		{name: "real subnormal", v: float32(math.SmallestNonzeroFloat32), t: typ(pgkind.Float), want: `{"N":"0.000000000000000000000000000000000000000000001"}`},
		{name: "real as string fixed", v: float32(123456), t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"123456"}`},
		{name: "real as string exponent", v: float32(1234567), t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"1.234567e+06"}`},
		{name: "real negative zero as string", v: float32(math.Copysign(0, -1)), t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"-0"}`},
		{name: "real NaN", v: float32(math.NaN()), t: typ(pgkind.Float), err: "no NaN or Infinity"},
		{name: "real array", v: []any{float32(0.1), nil, []any{float32(-3.4e38)}}, t: arr(pgkind.Float), want: `{"L":[{"N":"0.1"},{"NULL":true},{"L":[{"N":"-340000000000000000000000000000000000000"}]}]}`},
		{name: "real set", v: []any{float32(0.1), float32(0.2)}, t: arr(pgkind.Float), as: mapping.AsSet, want: `{"NS":["0.1","0.2"]}`},
		{name: "real array as string", v: []any{float32(0.1), nil}, t: arr(pgkind.Float), as: mapping.AsString, want: `{"S":"[0.1,null]"}`},
		{name: "double as string like PostgreSQL", v: 1234567.0, t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"1234567"}`},
		{name: "double as string exponent", v: 1e15, t: typ(pgkind.Float), as: mapping.AsString, want: `{"S":"1e+15"}`},
		{name: "double out of range", v: 1e300, t: typ(pgkind.Float), err: "1e+300 is outside the range"},
		{name: "bool", v: true, t: typ(pgkind.Bool), want: `{"BOOL":true}`},
		{name: "timestamptz", v: ts, t: typ(pgkind.Timestamptz), want: `{"S":"2024-05-01T07:03:04.123456Z"}`},
		{name: "epoch seconds", v: ts, t: typ(pgkind.Timestamptz), as: mapping.AsEpochSecond, want: `{"N":"1714546984.123456"}`},
		{name: "epoch millis", v: ts, t: typ(pgkind.Timestamptz), as: mapping.AsEpochMilli, want: `{"N":"1714546984123.456"}`},
		{name: "date", v: time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC), t: typ(pgkind.Date), want: `{"S":"2020-02-29"}`},
		{name: "infinite date", v: extract.Infinity{Sign: 1}, t: typ(pgkind.Date), err: "declare as: string"},
		{name: "infinite date as string", v: extract.Infinity{Sign: -1}, t: typ(pgkind.Date), as: mapping.AsString, want: `{"S":"-infinity"}`},
		{name: "bytea", v: []byte{0, 1, 255}, t: typ(pgkind.Bytea), want: `{"B":"AAH/"}`},
		{name: "empty string kept", v: "", t: typ(pgkind.Text), want: `{"S":""}`},
		{name: "null omitted", v: nil, t: typ(pgkind.Text), want: ""},
		{name: "null kept", v: nil, t: typ(pgkind.Text), null: mapping.NullKeep, want: `{"NULL":true}`},
		{name: "json exact numbers", v: extract.JSON(`{"a":[1,19.990,12345678901234567890],"b":null,"c":"x"}`), t: typ(pgkind.JSON),
			want: `{"M":{"a":{"L":[{"N":"1"},{"N":"19.99"},{"N":"12345678901234567890"}]},"b":{"NULL":true},"c":{"S":"x"}}}`},
		{name: "json as string", v: extract.JSON(`{"a":1}`), t: typ(pgkind.JSON), as: mapping.AsString, want: `{"S":"{\"a\":1}"}`},
		{name: "text array list", v: []any{"a", nil, "b"}, t: arr(pgkind.Text), want: `{"L":[{"S":"a"},{"NULL":true},{"S":"b"}]}`},
		{name: "text array set dedup", v: []any{"b", "a", "b"}, t: arr(pgkind.Text), as: mapping.AsSet, want: `{"SS":["a","b"]}`},
		{name: "empty set omitted", v: []any{}, t: arr(pgkind.Text), as: mapping.AsSet, want: ""},
		{name: "empty list kept", v: []any{}, t: arr(pgkind.Text), want: `{"L":[]}`},
		{name: "set with null", v: []any{"a", nil}, t: arr(pgkind.Text), as: mapping.AsSet, err: "sets cannot hold NULL"},
		{name: "number set", v: []any{extract.Decimal("1.50"), extract.Decimal("2")}, t: arr(pgkind.Numeric), as: mapping.AsSet, want: `{"NS":["1.5","2"]}`},
		{name: "2-d array", v: []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}, t: arr(pgkind.Int),
			want: `{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"N":"4"}]}]}`},
		{name: "text as number", v: "0042.50", t: typ(pgkind.Text), as: mapping.AsNumber, want: `{"N":"42.5"}`},
		{name: "text as number bad", v: "abc", t: typ(pgkind.Text), as: mapping.AsNumber, err: "not a number"},
	}
	for _, tc := range cases {
		av, ok, err := transform.AttributeValue(tc.v, tc.t, tc.as, cmpOr(tc.null, mapping.NullOmit))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := ""
		if ok {
			got = canon(t, av)
		}
		if got != tc.want {
			t.Errorf("%s: = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// An empty bytea is an empty binary value, never a nil one: DynamoDB takes
// a nil B for no value at all and refuses the item ("Supplied
// AttributeValue is empty").
func TestEmptyBytea(t *testing.T) {
	t.Parallel()
	for _, v := range [][]byte{{}, nil} {
		av, ok, err := transform.AttributeValue(v, pgkind.Type{Kind: pgkind.Bytea}, mapping.AsDefault, mapping.NullOmit)
		b, isB := av.(*types.AttributeValueMemberB)
		if err != nil || !ok || !isB || b.Value == nil || len(b.Value) != 0 {
			t.Errorf("AttributeValue(%#v) = %#v, %v, %v; want an empty, non-nil B", v, av, ok, err)
		}
	}
}

// Values nested deeper than DynamoDB's 32 levels (the item being the first)
// are row errors naming the column, not items DynamoDB refuses later.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	nested := func(levels int) extract.JSON {
		return extract.JSON(strings.Repeat("[", levels) + "1" + strings.Repeat("]", levels))
	}
	deepMap := func(levels int) extract.JSON {
		return extract.JSON(strings.Repeat(`{"k":`, levels) + "1" + strings.Repeat("}", levels))
	}
	cases := []struct {
		v    extract.JSON
		want string // "" = accepted
	}{
		{nested(31), ""},
		{deepMap(31), ""},
		{nested(32), "the value nests 32 levels of lists and maps, 33 with the item around it; DynamoDB allows 32"},
		{deepMap(40), "nests 40 levels"},
		{nested(64), "nests 64 levels"},
		{extract.JSON(`{"a": 1, "b": ` + string(nested(31)) + `}`), "nests 32 levels"},
	}
	for _, tc := range cases {
		err := transform.CheckNestingForTest(tc.v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.20s…: %v", tc.v, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.20s…: error %v, want %q", tc.v, err, tc.want)
		}
	}
}

func cmpOr(a, b mapping.NullMode) mapping.NullMode {
	if a == "" {
		return b
	}
	return a
}

func canon(t *testing.T, av types.AttributeValue) string {
	b, err := transform.MarshalItem(map[string]types.AttributeValue{"x": av})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.TrimSuffix(strings.TrimPrefix(s, `{"x":`), "}")
}
