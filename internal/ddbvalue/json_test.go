package ddbvalue

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sample is an item with every type, nested, and strings that need
// escaping.
func sample() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK":    &types.AttributeValueMemberS{Value: "CUSTOMER#42"},
		"esc":   &types.AttributeValueMemberS{Value: "a\"b\\c\n\t\x00\x7f<&>\u2028é😀"},
		"n":     &types.AttributeValueMemberN{Value: "1.50"},
		"b":     &types.AttributeValueMemberB{Value: []byte{0, 1, 0xFF}},
		"t":     &types.AttributeValueMemberBOOL{Value: true},
		"f":     &types.AttributeValueMemberBOOL{},
		"null":  &types.AttributeValueMemberNULL{Value: true},
		"ss":    &types.AttributeValueMemberSS{Value: []string{"b", "a", "b"}},
		"ns":    &types.AttributeValueMemberNS{Value: []string{"10", "9", "1e1"}},
		"bs":    &types.AttributeValueMemberBS{Value: [][]byte{{2}, {1}}},
		"empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberN{Value: "-0.0"},
				&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberS{}}},
			}},
		}},
	}
}

// TestJSONRoundTrip writes an item in each JSON form the code writes and
// reads it back: the wire form (what the writer sends), the canonical form
// (export files, verify's hashes) and JSONItem (golden files, reports).
func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	item := sample()
	wire, size, err := AppendItem(nil, item)
	if err != nil {
		t.Fatal(err)
	}
	if want := ItemSize(item); size != want {
		t.Errorf("AppendItem size %d, ItemSize %d", size, want)
	}
	canonical := AppendCanonicalItem(nil, item)
	viaMaps, err := MarshalItem(CanonicalItem(item))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(canonical, viaMaps) {
		t.Errorf("AppendCanonicalItem and MarshalItem(CanonicalItem) differ:\n%s\n%s", canonical, viaMaps)
	}
	for name, data := range map[string][]byte{"wire": wire, "canonical": canonical} {
		if !json.Valid(data) {
			t.Fatalf("%s: not JSON: %s", name, data)
		}
		got, err := UnmarshalItem(data)
		if err != nil {
			t.Fatalf("%s: UnmarshalItem: %v", name, err)
		}
		if !EqualItems(got, item) {
			t.Errorf("%s: read back as\n%#v", name, got)
		}
		if again := AppendCanonicalItem(nil, got); !bytes.Equal(again, canonical) {
			t.Errorf("%s: canonical form changed in the round trip:\n%s\n%s", name, again, canonical)
		}
	}
	// The SDK's own escaping differs from encoding/json's on <, > and &.
	if !strings.Contains(string(wire), `<&>`) || strings.Contains(string(canonical), `<&>`) {
		t.Errorf("escaping: wire %s, canonical %s", wire, canonical)
	}
}

func TestCanonicalForm(t *testing.T) {
	t.Parallel()
	item := map[string]types.AttributeValue{
		"z":  &types.AttributeValueMemberN{Value: "1.50"},
		"a":  &types.AttributeValueMemberNS{Value: []string{"10", "1e1", "9"}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"b", "a", "b"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{0xFB}, {0x01}}},
		"nu": &types.AttributeValueMemberNULL{Value: true},
	}
	want := `{"a":{"NS":["10","9"]},"bs":{"BS":["+w==","AQ=="]},"nu":{"NULL":true},"ss":{"SS":["a","b"]},"z":{"N":"1.5"}}`
	if got := string(AppendCanonicalItem(nil, item)); got != want {
		t.Errorf("canonical\n got %s\nwant %s", got, want)
	}
}

func TestDecodeItemErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":{"NULL":false}}`:       "NULL must be true",
		`{"a":{"X":"1"}}`:            `unknown type tag "X"`,
		`{"a":{"S":1}}`:              `type tag "S" with a float64`,
		`{"a":{"S":"x","N":"1"}}`:    "exactly one type tag",
		`{"a":"x"}`:                  "exactly one type tag",
		`{"a":{"B":"!"}}`:            "illegal base64",
		`{"a":{"NS":[1]}}`:           "NS holds a float64",
		`{"a":{"L":[{"S":"x"},{}]}}`: "exactly one type tag",
		`null`:                       "not a DynamoDB JSON item",
	} {
		_, err := UnmarshalItem([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnmarshalItem(%s) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestAppendStringSDKEscaping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":       `"plain"`,
		"q\"b\\":      `"q\"b\\"`,
		"\n\r\t\x01":  `"\n\r\t\u0001"`,
		"\x7f":        `"\u007f"`,
		"<&>":         `"<&>"`,
		"\u2028":      `"\u2028"`,
		"\xff":        "\"\uFFFD\"",
		"abcdefgh\"x": `"abcdefgh\"x"`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}
