package ddbvalue

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestCompareKeys(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	b := func(v ...byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: v} }
	tests := []struct {
		name string
		a, b types.AttributeValue
		want int
	}{
		{"S by bytes: upper case first", s("Z"), s("a"), -1},
		{"S prefix first", s("ORDER#1"), s("ORDER#10"), -1},
		{"S UTF-8 bytes, not UTF-16 units", s("\uFFFD"), s("😀"), -1},
		{"S é after z", s("é"), s("z"), 1},
		{"S equal", s("x"), s("x"), 0},
		{"N by value, not text", n("9"), n("10"), -1},
		{"N negative", n("-10"), n("-9"), -1},
		{"N trailing zeros", n("1.50"), n("1.5"), 0},
		{"N exponents", n("1e2"), n("99.9"), 1},
		{"N 38-digit neighbours", n("99999999999999999999999999999999999998"), n("99999999999999999999999999999999999999"), -1},
		{"N tiny above zero", n("0"), n("1e-130"), -1},
		{"N a text that is no number sorts first", n("abc"), n("-1e125"), -1},
		{"N two such texts by bytes", n("abc"), n("abd"), -1},
		{"B by bytes", b(0x00, 0xFF), b(0x01), -1},
		{"B unsigned", b(0x7F), b(0x80), -1},
		{"B prefix first", b(1), b(1, 0), -1},
		{"types differ", s("1"), n("1"), 0},
		{"not a key type", &types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CompareKeys(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareKeys = %d, want %d", got, tt.want)
			}
			if got := CompareKeys(tt.b, tt.a); got != -tt.want {
				t.Errorf("CompareKeys reversed = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestAppendKeyPart(t *testing.T) {
	t.Parallel()
	enc := func(av types.AttributeValue) []byte {
		b, ok := AppendKeyPart(nil, av)
		if !ok {
			t.Fatalf("AppendKeyPart(%#v) refused a key value", av)
		}
		return b
	}
	if got, want := enc(&types.AttributeValueMemberS{Value: "a\x00b"}), []byte("Sa\x00\xFFb\x00\x01"); !bytes.Equal(got, want) {
		t.Errorf("S with a NUL: %q, want %q", got, want)
	}
	if got, want := enc(&types.AttributeValueMemberN{Value: "15e-1"}), []byte("N1.5\x00\x01"); !bytes.Equal(got, want) {
		t.Errorf("N: %q, want %q (canonical)", got, want)
	}
	if !bytes.Equal(enc(&types.AttributeValueMemberN{Value: "1.50"}), enc(&types.AttributeValueMemberN{Value: "1.5"})) {
		t.Error("one DynamoDB number, two encodings")
	}
	if bytes.Equal(enc(&types.AttributeValueMemberS{Value: "1"}), enc(&types.AttributeValueMemberN{Value: "1"})) {
		t.Error("S 1 and N 1 encode alike")
	}
	if got, ok := AppendKeyPart([]byte("x"), &types.AttributeValueMemberBOOL{}); ok || string(got) != "x" {
		t.Errorf("BOOL: %q, %v; want dst untouched and false", got, ok)
	}
}

func TestTypeName(t *testing.T) {
	t.Parallel()
	for want, av := range map[string]types.AttributeValue{
		"S": &types.AttributeValueMemberS{}, "N": &types.AttributeValueMemberN{}, "B": &types.AttributeValueMemberB{},
		"BOOL": &types.AttributeValueMemberBOOL{}, "NULL": &types.AttributeValueMemberNULL{}, "M": &types.AttributeValueMemberM{},
		"L": &types.AttributeValueMemberL{}, "SS": &types.AttributeValueMemberSS{}, "NS": &types.AttributeValueMemberNS{},
		"BS": &types.AttributeValueMemberBS{}, "*types.UnknownUnionMember": &types.UnknownUnionMember{},
	} {
		if got := TypeName(av); got != want {
			t.Errorf("TypeName(%T) = %q, want %q", av, got, want)
		}
	}
}
