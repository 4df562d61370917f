package transform

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

func part(t *testing.T, tpl string) mapping.Part {
	t.Helper()
	p, err := mapping.ParseTemplate(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return p.Parts[0]
}

// The fixed-width encodings must sort as the numbers do: byte order of
// the key text is numeric order, negatives included.
func TestSignedEncodingSortsNumerically(t *testing.T) {
	t.Parallel()
	p := part(t, "{n|signed:19}")
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []int64{0, 1, -1, 9, -9, 10, -10, math.MaxInt64, math.MinInt64 + 1, math.MinInt64}
	for range 2000 {
		vals = append(vals, rng.Int64()>>rng.IntN(63)*int64(1-2*rng.IntN(2)))
	}
	type enc struct {
		v int64
		s string
	}
	var got []enc
	for _, v := range vals {
		s, err := PartText(KeyValue{V: v, Kind: pgkind.Int}, p, "#")
		if err != nil {
			t.Fatalf("%d: %v", v, err)
		}
		got = append(got, enc{v, s})
	}
	slices.SortFunc(got, func(a, b enc) int { return strings.Compare(a.s, b.s) })
	for i := 1; i < len(got); i++ {
		if got[i-1].v > got[i].v {
			t.Fatalf("%d (%s) sorts before %d (%s)", got[i-1].v, got[i-1].s, got[i].v, got[i].s)
		}
	}
}

func TestDecimalEncodingSortsNumerically(t *testing.T) {
	t.Parallel()
	p := part(t, "{n|decimal:5.3}")
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"0", "-0", "0.000", "-0.001", "0.001", "99999.999", "-99999.999", "1", "-1", "1.5", "-1.5", "10", "-10.000"}
	for range 2000 {
		n := rng.Int64N(199999999) - 99999999
		texts = append(texts, extract.FormatDecimal(big.NewInt(n), -int32(rng.IntN(4))))
	}
	type enc struct {
		r *big.Rat
		s string
	}
	var got []enc
	for _, text := range texts {
		r, _ := new(big.Rat).SetString(text)
		s, err := PartText(KeyValue{V: extract.Decimal(text), Kind: pgkind.Numeric}, p, "#")
		if err != nil {
			if r.Cmp(big.NewRat(100000, 1)) >= 0 || r.Cmp(big.NewRat(-100000, 1)) <= 0 {
				continue
			}
			t.Fatalf("%s: %v", text, err)
		}
		if len(strings.TrimPrefix(s, "-")) != 9 {
			t.Fatalf("%s encodes as %q, not 9 characters after the sign", text, s)
		}
		got = append(got, enc{r, s})
	}
	slices.SortFunc(got, func(a, b enc) int { return strings.Compare(a.s, b.s) })
	for i := 1; i < len(got); i++ {
		if got[i-1].r.Cmp(got[i].r) > 0 {
			t.Fatalf("%s (%s) sorts before %s (%s)", got[i-1].r.FloatString(3), got[i-1].s, got[i].r.FloatString(3), got[i].s)
		}
		if got[i-1].r.Cmp(got[i].r) == 0 && got[i-1].s != got[i].s {
			t.Fatalf("equal values encode differently: %q and %q", got[i-1].s, got[i].s)
		}
	}
}

func TestPartTextErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tpl  string
		v    any
		k    pgkind.Kind
		want string
	}{
		{"{n|signed:3}", int64(1000), pgkind.Int, "signed: 1000 has more than 3 digits (raise the width)"},
		{"{n|signed:3}", int64(-1000), pgkind.Int, "signed: -1000 has more than 3 digits (raise the width)"},
		{"{n|decimal:2.1}", extract.Decimal("1.25"), pgkind.Numeric, "decimal: 1.25 has more than 1 fraction digits (raise the scale; values are never rounded)"},
		{"{n|decimal:2.1}", extract.Decimal("NaN"), pgkind.Numeric, "decimal: NaN has no fixed-width decimal form"},
		{"{d|year}", extract.Infinity{Sign: 1}, pgkind.Date, "year: infinity has no year"},
		{"{s|lower}", "", pgkind.Text, "empty string cannot be part of a key"},
		{"{s|lower}", "A#B", pgkind.Text, `value "a#b" contains the key separator "#"`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.tpl, tc.v), func(t *testing.T) {
			t.Parallel()
			_, err := PartText(KeyValue{V: tc.v, Kind: tc.k}, part(t, tc.tpl), "#")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// |year, |month and |day in a number key hold any year, numbered as
// PostgreSQL's extract(year ...) does (1 BC is -1): numbers sort right
// where four-digit text would not. A string key still refuses them.
func TestDatePartsInNumberKeys(t *testing.T) {
	t.Parallel()
	tpl, err := mapping.ParseTemplate("{d|year}")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), "2024"},
		{time.Date(12345, 5, 1, 0, 0, 0, 0, time.UTC), "12345"},
		{time.Date(0, 5, 1, 0, 0, 0, 0, time.UTC), "-1"},     // 1 BC
		{time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC), "-44"}, // 44 BC
	}
	for _, tc := range cases {
		values := func(int) (KeyValue, error) { return KeyValue{V: tc.t, Kind: pgkind.Date}, nil }
		av, ok, _, err := RenderKey(tpl, mapping.KeyNumber, "#", false, values)
		if err != nil || !ok {
			t.Fatalf("%v: %v", tc.t, err)
		}
		if got := av.(*types.AttributeValueMemberN).Value; got != tc.want {
			t.Errorf("%v: N %s, want %s", tc.t, got, tc.want)
		}
	}
	month := part(t, "{d|month}")
	mv, err := typedKey(KeyValue{V: time.Date(12345, 11, 1, 0, 0, 0, 0, time.UTC), Kind: pgkind.Date}, month, mapping.KeyNumber)
	if err != nil || mv.(*types.AttributeValueMemberN).Value != "11" {
		t.Errorf("month of 12345-11-01 in a number key: %v, %v", mv, err)
	}
	_, err = PartText(KeyValue{V: time.Date(12345, 5, 1, 0, 0, 0, 0, time.UTC), Kind: pgkind.Date}, part(t, "{d|year}"), "#")
	if err == nil || !strings.Contains(err.Error(), "a number key holds any year") {
		t.Errorf("year 12345 in a string key: %v, want a refusal", err)
	}
}
