package load

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Expected sizes follow "DynamoDB item sizes and formats" in the DynamoDB
// developer guide: names + values; S by UTF-8 bytes; N 1 byte + 1 per two
// significant digits (+1 if negative); B raw bytes; BOOL/NULL 1; M/L 3 bytes
// + 1 per element; sets the sum of their elements.
func TestItemSize(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"empty item", map[string]types.AttributeValue{}, 0},
		{"ascii string", map[string]types.AttributeValue{"PK": s("CUSTOMER#42")}, 2 + 11},
		{"utf8 string counts bytes", map[string]types.AttributeValue{"name": s("Zoë 東京")}, 4 + len("Zoë 東京")},
		{"utf8 attribute name", map[string]types.AttributeValue{"prénom": s("a")}, 7 + 1},
		{"empty string", map[string]types.AttributeValue{"a": s("")}, 1},
		{"number one digit", map[string]types.AttributeValue{"n": n("7")}, 1 + 2},
		{"number two digits", map[string]types.AttributeValue{"n": n("42")}, 1 + 2},
		{"number three digits", map[string]types.AttributeValue{"n": n("123")}, 1 + 3},
		{"number trailing zeros trimmed", map[string]types.AttributeValue{"n": n("1000")}, 1 + 2},
		{"number leading zeros trimmed", map[string]types.AttributeValue{"n": n("0007")}, 1 + 2},
		{"number zero", map[string]types.AttributeValue{"n": n("0")}, 1 + 1},
		{"number negative", map[string]types.AttributeValue{"n": n("-42")}, 1 + 3},
		{"number decimal aligned on the point", map[string]types.AttributeValue{"n": n("123.45")}, 1 + 4},
		{"number decimal trailing zeros", map[string]types.AttributeValue{"n": n("1.50")}, 1 + 3}, // base-100 pairs "01" "50"
		{"number small fraction", map[string]types.AttributeValue{"n": n("0.001")}, 1 + 2},
		{"number exponent", map[string]types.AttributeValue{"n": n("1E-130")}, 1 + 2},
		{"number 38 digits", map[string]types.AttributeValue{"n": n(strings.Repeat("9", 38))}, 1 + 20},
		{"number cap", map[string]types.AttributeValue{"n": n("-" + strings.Repeat("9", 37) + ".9")}, 1 + 21},
		{"binary raw bytes", map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 3}}}, 1 + 4},
		{"bool", map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{"null", map[string]types.AttributeValue{"x": &types.AttributeValueMemberNULL{Value: true}}, 1 + 1},
		{"string set", map[string]types.AttributeValue{"ss": &types.AttributeValueMemberSS{Value: []string{"ab", "cde"}}}, 2 + 5},
		{"number set", map[string]types.AttributeValue{"ns": &types.AttributeValueMemberNS{Value: []string{"1", "123"}}}, 2 + 2 + 3},
		{"binary set", map[string]types.AttributeValue{"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}}, 2 + 3},
		{"empty map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}, 1 + 3},
		{"empty list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{}}, 1 + 3},
		{
			"map: names, values, 1 byte per element",
			map[string]types.AttributeValue{"addr": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"city": s("Oslo"), "zip": n("150"),
			}}},
			4 + 3 + (4 + 4 + 1) + (3 + 3 + 1),
		},
		{
			"list: values, 1 byte per element",
			map[string]types.AttributeValue{"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("bc")}}},
			4 + 3 + (1 + 1) + (2 + 1),
		},
		{
			"nested list in map",
			map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberBOOL{Value: false}}},
			}}},
			1 + 3 + (1 + (3 + 1 + 1) + 1),
		},
		{
			"several attributes",
			map[string]types.AttributeValue{"PK": s("A#1"), "SK": s("B"), "n": n("10")},
			(2 + 3) + (2 + 1) + (1 + 2),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ItemSize(tt.item); got != tt.want {
				t.Errorf("ItemSize = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCanonicalNumber(t *testing.T) {
	t.Parallel()
	same := [][]string{
		{"1", "1.0", "01", "1e0", "10E-1", "+1"},
		{"0", "-0", "0.000", "0e5"},
		{"-12.5", "-125e-1", "-12.50"},
		{"1500", "1.5e3", "15E2"},
	}
	for _, group := range same {
		want, ok := canonicalNumber(group[0])
		if !ok {
			t.Fatalf("canonicalNumber(%q) failed", group[0])
		}
		for _, s := range group[1:] {
			if got, _ := canonicalNumber(s); got != want {
				t.Errorf("canonicalNumber(%q) = %q, want %q (as %q)", s, got, want, group[0])
			}
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "abc", "1e", "0x10"} {
		if _, ok := canonicalNumber(bad); ok {
			t.Errorf("canonicalNumber(%q) accepted an invalid number", bad)
		}
	}
}

func TestWriteUnits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ size, want int }{{0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {400 * 1024, 400}} {
		if got := WriteUnits(tt.size); got != tt.want {
			t.Errorf("WriteUnits(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
	indexes := []Index{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}, {Name: "GSI2", PartitionKey: "GSI2PK"}}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{"PK": s("a"), "SK": s("b"), "GSI1PK": s("x"), "GSI1SK": s("y"), "big": s(strings.Repeat("z", 2000))}
	if got := ItemWriteUnits(item, indexes); got != 2*2 {
		t.Errorf("ItemWriteUnits with one GSI = %d, want 4", got)
	}
	delete(item, "GSI1SK") // no longer in GSI1 (sparse)
	if got := ItemWriteUnits(item, indexes); got != 2 {
		t.Errorf("ItemWriteUnits without index keys = %d, want 2", got)
	}
	item["GSI2PK"] = s("q")
	if got := ItemWriteUnits(item, indexes); got != 4 {
		t.Errorf("ItemWriteUnits in GSI2 = %d, want 4", got)
	}
}

// numberSize reads digits in place; it must agree with the size computed
// from parseNumber.
func FuzzNumberSize(f *testing.F) {
	for _, s := range []string{"0", "-0.00", "1", "10", "100", "12.5", ".5", "5.", "-1.50e3", "1E-130", "9.99e125",
		"", ".", "-", "1..2", "1e", "abc", "00012300", "+7", "1e+5", "123456789012345678901234567890123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s)
		if d, ok := parseNumber(s); ok {
			if d.digits == "" {
				want = 1
			} else {
				lo, hi := d.exp, d.exp+len(d.digits)-1
				want = 1 + floorDiv2(hi) - floorDiv2(lo) + 1
				if d.neg {
					want++
				}
				want = min(want, 21)
			}
		}
		if got := numberSize(s); got != want {
			t.Errorf("numberSize(%q) = %d, want %d", s, got, want)
		}
	})
}
