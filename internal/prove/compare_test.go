package prove

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func TestSameValue(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 5, 1, 10, 0, 0, 500000000, time.UTC)
	num := pgkind.Type{Name: "numeric", Kind: pgkind.Numeric}
	cases := []struct {
		name string
		av   types.AttributeValue
		v    any
		t    pgkind.Type
		want bool
	}{
		{"decimal by value", n("19.9"), extract.Decimal("19.90"), num, true},
		{"decimal differs", n("19.9"), extract.Decimal("19.91"), num, false},
		{"decimal kept as text", s("19.90"), extract.Decimal("19.90"), num, true},
		{"big integer", n("9223372036854775807"), int64(math.MaxInt64), pgkind.Type{Kind: pgkind.Int}, true},
		{"float exactly", n("0.1"), 0.1, pgkind.Type{Kind: pgkind.Float}, true},
		{"NaN as text", s("NaN"), math.NaN(), pgkind.Type{Kind: pgkind.Float}, true},
		{"NaN is no number", n("0"), math.NaN(), pgkind.Type{Kind: pgkind.Float}, false},
		{"instant as text", s("2024-05-01T10:00:00.500000Z"), ts, pgkind.Type{Kind: pgkind.Timestamptz}, true},
		{"instant as epoch millis", n("1714557600500"), ts, pgkind.Type{Kind: pgkind.Timestamptz}, true},
		{"instant as epoch seconds", n("1714557600.5"), ts, pgkind.Type{Kind: pgkind.Timestamptz}, true},
		{"another instant", s("2024-05-01T10:00:00.500001Z"), ts, pgkind.Type{Kind: pgkind.Timestamptz}, false},
		{"date", s("2024-05-01"), time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), pgkind.Type{Kind: pgkind.Date}, true},
		{"NULL is absent", nil, nil, num, true},
		{"NULL is NULL", &types.AttributeValueMemberNULL{Value: true}, nil, num, true},
		{"absent is not a value", nil, "x", pgkind.Type{Kind: pgkind.Text}, false},
		{"uuid in any case", s("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", pgkind.Type{Kind: pgkind.UUID}, true},
		{"json as a map", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": n("1.10")}}, extract.JSON(`{"a": 1.1}`), pgkind.Type{Kind: pgkind.JSON}, true},
		{"array as a set", &types.AttributeValueMemberSS{Value: []string{"b", "a"}}, []any{"a", "b", "a"}, pgkind.Type{Kind: pgkind.Array, Elem: pgkind.Text}, true},
		{"array as a list, in order", &types.AttributeValueMemberL{Value: []types.AttributeValue{s("b"), s("a")}}, []any{"a", "b"}, pgkind.Type{Kind: pgkind.Array, Elem: pgkind.Text}, false},
		{"bool", &types.AttributeValueMemberBOOL{Value: true}, true, pgkind.Type{Kind: pgkind.Bool}, true},
		{"decimal with exponent and trailing zeros", n("1.5e3"), extract.Decimal("1500.000"), num, true},
		{"38-digit neighbours differ", n("99999999999999999999999999999999999998"), extract.Decimal("99999999999999999999999999999999999999"), num, false},
		{"instant before 1970 as epoch seconds", n("-0.5"), time.Date(1969, 12, 31, 23, 59, 59, 500000000, time.UTC), pgkind.Type{Kind: pgkind.Timestamptz}, true},
		{"instant before 1970 as epoch millis", n("-1750"), time.Date(1969, 12, 31, 23, 59, 58, 250000000, time.UTC), pgkind.Type{Kind: pgkind.Timestamptz}, true},
		{"instant before 1970, a second off", n("-0.75"), time.Date(1969, 12, 31, 23, 59, 58, 250000000, time.UTC), pgkind.Type{Kind: pgkind.Timestamptz}, false},
		// Text that is not a DynamoDB number (transform's as: number refuses
		// it) equals no N value: math/big read 1/2 and 0x10 as numbers.
		{"text 1/2 is no number", n("0.5"), "1/2", pgkind.Type{Kind: pgkind.Text}, false},
		{"text 0x10 is no number", n("16"), "0x10", pgkind.Type{Kind: pgkind.Text}, false},
		{"text number by value", n("16"), "16.0", pgkind.Type{Kind: pgkind.Text}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got, _ := sameValue(tc.av, tc.v, tc.t); got != tc.want {
				t.Errorf("sameValue(%v, %#v) = %v, want %v", avText(tc.av), tc.v, got, tc.want)
			}
		})
	}
}

func TestCompareAnswers(t *testing.T) {
	t.Parallel()
	k := keyAttrs{pk: "PK", sk: "SK"}
	cols := []extract.ResultColumn{{Name: "id", Type: pgkind.Type{Kind: pgkind.Int}}}
	item := func(sk, id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": s("P"), "SK": s(sk), "id": n(id)}
	}
	items := []map[string]types.AttributeValue{item("A", "1"), item("B", "2")}
	rows := [][]any{{int64(1)}, {int64(2)}}
	reversed := [][]any{{int64(2)}, {int64(1)}}
	if d := compareAnswers(items, cols, rows, true, k); d != "" {
		t.Errorf("same answers differ: %s", d)
	}
	if d := compareAnswers(items, cols, reversed, true, k); d != `answer 1, item PK={"S":"P"} SK={"S":"A"}: id is {"N":"1"}, SQL says 2` {
		t.Errorf("order: %q", d)
	}
	if d := compareAnswers(items, cols, reversed, false, k); d != "" {
		t.Errorf("unordered: %q", d)
	}
	if d := compareAnswers(items, cols, rows[:1], true, k); d != `DynamoDB returned 2 items, SQL 1 rows; first extra item PK={"S":"P"} SK={"S":"B"}` {
		t.Errorf("count: %q", d)
	}
	if d := compareAnswers(items, cols, [][]any{{int64(2)}, {int64(3)}}, false, k); d != `row 2 (id=3) has no equal item; the nearest, item PK={"S":"P"} SK={"S":"A"}: id is {"N":"1"}, SQL says 3` {
		t.Errorf("unordered difference: %q", d)
	}
}

// The sample depends on the seed and the data, not on the order rows
// arrive in; another seed gives another sample.
func TestSamplerIgnoresOrder(t *testing.T) {
	t.Parallel()
	pick := func(seed uint64, reverse bool) []int64 {
		sm := &sampler{k: 10, seed: seed}
		for i := range 1000 {
			v := int64(i)
			if reverse {
				v = int64(999 - i)
			}
			sm.offer([]any{v})
		}
		var out []int64
		for _, vals := range sm.sorted() {
			out = append(out, vals[0].(int64))
		}
		return out
	}
	a, b, c := pick(1, false), pick(1, true), pick(2, false)
	if !slices.Equal(a, b) || len(a) != 10 {
		t.Errorf("order changed the sample: %v vs %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same sample %v", a)
	}
}

func TestMissingValues(t *testing.T) {
	t.Parallel()
	var x extremes
	for _, v := range []any{int64(5), int64(40), int64(7)} {
		x.add(v)
	}
	if got := missingValue(int64(7), pgkind.Type{Kind: pgkind.Int}, x, 0); got != int64(41) {
		t.Errorf("missing int %v, want 41", got)
	}
	if got := missingValue("a@b", pgkind.Type{Kind: pgkind.Text}, x, 1); got != "a@bzzmissing1" {
		t.Errorf("missing text %v", got)
	}
}
