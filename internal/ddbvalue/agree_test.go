package ddbvalue_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// produce converts a number the ways transform does: numeric text
// (extract.Decimal), text with as: number, a double and a bigint. Each
// result is an N value or a refusal.
func produce(s string, f float64, i int64) []types.AttributeValue {
	var out []types.AttributeValue
	for _, c := range []struct {
		v  any
		t  pgkind.Type
		as mapping.Conversion
	}{
		{extract.Decimal(s), pgkind.Type{Name: "numeric", Kind: pgkind.Numeric}, mapping.AsDefault},
		{s, pgkind.Type{Name: "text", Kind: pgkind.Text}, mapping.AsNumber},
		{f, pgkind.Type{Name: "double precision", Kind: pgkind.Float}, mapping.AsDefault},
		{i, pgkind.Type{Name: "bigint", Kind: pgkind.Int}, mapping.AsDefault},
	} {
		av, present, err := transform.AttributeValue(c.v, c.t, c.as, mapping.NullOmit)
		if err == nil && present {
			out = append(out, av)
		}
	}
	return out
}

// The comparisons engine/query.go (big.Float, 256 bits) and prove
// (big.Rat) used before ddbvalue, kept here as oracles.
func oldQueryCompare(a, b string) (int, bool) {
	x, _, errX := big.ParseFloat(a, 10, 256, big.ToNearestEven)
	y, _, errY := big.ParseFloat(b, 10, 256, big.ToNearestEven)
	if errX != nil || errY != nil {
		return 0, false
	}
	return x.Cmp(y), true
}

func oldProveCompare(a, b string) (int, bool) {
	x, okX := new(big.Rat).SetString(a)
	y, okY := new(big.Rat).SetString(b)
	if !okX || !okY {
		return 0, false
	}
	return x.Cmp(y), true
}

// FuzzProducersAndConsumersAgree: a number transform writes is one every
// consumer takes the same way. It is canonical (what DynamoDB gives
// back), it has a size by DynamoDB's rules that load and the size
// computation agree on, it survives every JSON form the code writes and
// reads (the request body, export's canonical DYNAMODB_JSON, JSONItem),
// diff's key encoding gives it back, it compares equal to itself and to
// its source text, and two such numbers order the same way in query,
// prove and the key order, and as the math/big comparisons query and
// prove used before.
func FuzzProducersAndConsumersAgree(f *testing.F) {
	seeds := []struct {
		a, b string
		f    float64
		i    int64
	}{
		{"0", "-0", 0, 0},
		{"19.90", "19.9", 19.9, 19},
		{"-1.5e3", "-1500", -1500, -1500},
		{"99999999999999999999999999999999999999", "99999999999999999999999999999999999998", 1e125, math.MaxInt64},
		{"1e-130", "2E-130", 5e-324, math.MinInt64},
		{"9.9999999999999999999999999999999999999e125", "1e125", math.MaxFloat64, -1},
		{"0.000100", "1e-4", 1e-4, 100},
		{"-0.5", "-.5", -0.5, -5},
		{"12345678901234567890123456789012345678", "1.2345678901234567890123456789012345678e37", 1.2345678901234567e37, 12345678},
		{"NaN", "1/2", math.NaN(), 0},
		{"0x10", "1_000", math.Inf(1), 7},
		{" 42 ", "+42", 42, 42},
	}
	for _, s := range seeds {
		f.Add(s.a, s.b, s.f, s.i)
	}
	f.Fuzz(func(t *testing.T, a, b string, fl float64, i int64) {
		as, bs := produce(a, fl, i), produce(b, -fl, -i)
		for _, av := range append(append([]types.AttributeValue(nil), as...), bs...) {
			consume(t, av)
		}
		// The source text, where transform took it, is the number written.
		for _, src := range []string{a, b} {
			n, err := transform.Number(src)
			if err != nil {
				continue
			}
			if c, err := ddbvalue.CompareNumbers(src, n); err != nil || c != 0 {
				t.Errorf("CompareNumbers(%q, its canonical %q) = %d, %v", src, n, c, err)
			}
		}
		for _, x := range as {
			for _, y := range bs {
				order(t, x.(*types.AttributeValueMemberN).Value, y.(*types.AttributeValueMemberN).Value)
			}
		}
		text(t, a, b)
	})
}

// text checks a string transform writes from a text column: its size is
// its UTF-8 length, it survives every JSON form, and two strings order by
// their bytes in the key order and the key encoding alike. PostgreSQL
// text is valid UTF-8 (JSON cannot carry anything else), so others are
// not a text transform is given.
func text(t *testing.T, a, b string) {
	t.Helper()
	if !utf8.ValidString(a) || !utf8.ValidString(b) {
		return
	}
	var ss []*types.AttributeValueMemberS
	for _, v := range []string{a, b} {
		av, present, err := transform.AttributeValue(v, pgkind.Type{Name: "text", Kind: pgkind.Text}, mapping.AsDefault, mapping.NullOmit)
		if err != nil || !present {
			t.Fatalf("transform refused text %q: %v", v, err)
		}
		s, ok := av.(*types.AttributeValueMemberS)
		if !ok || s.Value != v {
			t.Fatalf("transform made %#v of text %q", av, v)
		}
		ss = append(ss, s)
		item := map[string]types.AttributeValue{"s": s, "m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{v: s}}}
		want := 1 + len(v) + 1 + 3 + 1 + 2*len(v)
		if got := load.ItemSize(item); got != want {
			t.Errorf("load.ItemSize of text %q = %d, want %d", v, got, want)
		}
		wire, _, err := ddbvalue.AppendItem(nil, item)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"request body": wire, "canonical": ddbvalue.AppendCanonicalItem(nil, item)} {
			back, err := ddbvalue.UnmarshalItem(data)
			if err != nil || !ddbvalue.EqualItems(back, item) {
				t.Errorf("%s of text %q: %s read back as %v, %v", name, v, data, back, err)
			}
		}
	}
	c := ddbvalue.CompareKeys(ss[0], ss[1])
	if want := strings.Compare(a, b); c != want {
		t.Errorf("CompareKeys(S %q, S %q) = %d, bytes order %d", a, b, c, want)
	}
	ka, _ := ddbvalue.AppendKeyPart(nil, ss[0])
	kb, _ := ddbvalue.AppendKeyPart(nil, ss[1])
	if bytes.Equal(ka, kb) != (c == 0) {
		t.Errorf("S %q and S %q compare %d, key parts %q and %q", a, b, c, ka, kb)
	}
}

// consume checks one N value transform produced against every consumer.
func consume(t *testing.T, av types.AttributeValue) {
	t.Helper()
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("transform made a %s of a number", ddbvalue.TypeName(av))
	}
	if c, err := ddbvalue.Number(n.Value); err != nil || c != n.Value {
		t.Fatalf("transform wrote %q, whose canonical form is %q, %v", n.Value, c, err)
	}
	d, err := ddbvalue.ParseDecimal(n.Value)
	if err != nil || len(d.Digits) > ddbvalue.MaxDigits || d.Digits != "" && (d.Magnitude() > ddbvalue.MaxExponent || d.Magnitude() < ddbvalue.MinExponent) {
		t.Fatalf("transform wrote %q, beyond DynamoDB's numbers: %+v, %v", n.Value, d, err)
	}
	size := ddbvalue.NumberSize(n.Value)
	if size < 1 || size > 21 {
		t.Errorf("NumberSize(%q) = %d, outside 1..21", n.Value, size)
	}
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "n": n,
		"ns": &types.AttributeValueMemberNS{Value: []string{n.Value}},
		"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": n}}}
	want := 2 + 1 + (1 + size) + (2 + size) + (1 + 3 + 1 + 1 + size)
	if got := load.ItemSize(item); got != want {
		t.Errorf("load.ItemSize = %d, want %d for N %q", got, want, n.Value)
	}
	wire, wireSize, err := ddbvalue.AppendItem(nil, item)
	if err != nil || wireSize != want {
		t.Errorf("AppendItem size %d, %v; want %d", wireSize, err, want)
	}
	canonical := ddbvalue.AppendCanonicalItem(nil, item)
	var enc ddbvalue.CanonicalEncoder
	for range 2 { // the second time from its remembered order
		if got := enc.AppendItem(nil, item); !bytes.Equal(got, canonical) {
			t.Errorf("CanonicalEncoder: %s, AppendCanonicalItem %s", got, canonical)
		}
	}
	viaMaps, err := json.Marshal(transform.JSONItem(item))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"request body": wire, "canonical": canonical, "JSONItem": viaMaps} {
		back, err := ddbvalue.UnmarshalItem(data)
		if err != nil {
			t.Fatalf("%s %s: %v", name, data, err)
		}
		if !ddbvalue.EqualItems(back, item) || back["n"].(*types.AttributeValueMemberN).Value != n.Value {
			t.Errorf("%s: %s read back as %v", name, data, back)
		}
		if again := ddbvalue.AppendCanonicalItem(nil, back); !bytes.Equal(again, canonical) {
			t.Errorf("%s: canonical JSON changed: %s, was %s", name, again, canonical)
		}
	}
	h1, _ := diff.Hash(item)
	if h2, _ := diff.Hash(ddbvalue.CanonicalItem(item)); h1 != h2 {
		t.Errorf("diff.Hash differs for the canonical item of N %q", n.Value)
	}
	key, err := diff.KeyOf(item, "n", "")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := diff.DecodeKey(key); err != nil || k.PK != n.Value {
		t.Errorf("diff.DecodeKey(KeyOf(N %q)) = %q, %v", n.Value, k.PK, err)
	}
	if c := ddbvalue.CompareKeys(n, &types.AttributeValueMemberN{Value: n.Value}); c != 0 {
		t.Errorf("CompareKeys(N %q, itself) = %d", n.Value, c)
	}
}

// order checks that two numbers transform wrote order alike everywhere.
func order(t *testing.T, x, y string) {
	t.Helper()
	nx, ny := &types.AttributeValueMemberN{Value: x}, &types.AttributeValueMemberN{Value: y}
	c := ddbvalue.CompareKeys(nx, ny)
	if r := ddbvalue.CompareKeys(ny, nx); r != -c {
		t.Errorf("CompareKeys(%q, %q) = %d but reversed %d", x, y, c, r)
	}
	if cn, err := ddbvalue.CompareNumbers(x, y); err != nil || cn != c {
		t.Errorf("CompareNumbers(%q, %q) = %d, %v; CompareKeys %d", x, y, cn, err, c)
	}
	if old, ok := oldQueryCompare(x, y); !ok || old != c {
		t.Errorf("query's old big.Float order of %q and %q: %d (%v), ddbvalue %d", x, y, old, ok, c)
	}
	if old, ok := oldProveCompare(x, y); !ok || old != c {
		t.Errorf("prove's old big.Rat order of %q and %q: %d (%v), ddbvalue %d", x, y, old, ok, c)
	}
	// Equal numbers are one key: the same key bytes, the same canonical
	// text; different ones never.
	kx, _ := ddbvalue.AppendKeyPart(nil, nx)
	ky, _ := ddbvalue.AppendKeyPart(nil, ny)
	if bytes.Equal(kx, ky) != (c == 0) || (ddbvalue.CanonicalNumber(x) == ddbvalue.CanonicalNumber(y)) != (c == 0) {
		t.Errorf("%q and %q compare %d, but their keys are %q and %q", x, y, c, kx, ky)
	}
	if ddbvalue.Equal(nx, ny) != (c == 0) {
		t.Errorf("Equal(%q, %q) = %v, compare %d", x, y, !(c == 0), c)
	}
}
