package ddbvalue

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Expected sizes follow "Item sizes and formats" in the DynamoDB
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

func TestMeasureItemErrors(t *testing.T) {
	t.Parallel()
	var nilS *types.AttributeValueMemberS
	nested := map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{nilS}}}}}
	if _, err := MeasureItem(nested); !errors.Is(err, ErrNilValue) {
		t.Errorf("a nil value two levels down: %v, want ErrNilValue", err)
	}
	if n, err := MeasureItem(map[string]types.AttributeValue{"u": &types.UnknownUnionMember{Tag: "X"}, "a": &types.AttributeValueMemberS{Value: "bc"}}); !errors.Is(err, ErrUnknownValue) || n != 1+1+2 {
		t.Errorf("an unknown member: %d, %v; want 4 and ErrUnknownValue", n, err)
	}
}
