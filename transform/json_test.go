package transform

import (
	"strings"
	"testing"
)

// A key given twice is found whichever way the text is decoded, also when
// strings hold colons, quotes and backslashes that a scan of the text must
// not count.
func TestJSONDuplicateKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text, err string
	}{
		{`{"a": 1, "b": {"c": "x:y", "d": "\": \\"}}`, ""},
		{`{"a:": "\\\\", "b": [{"c": 1}, {"c": 2}]}`, ""},
		{`{"a": 1, "a": 2}`, `key "a" twice`},
		{`[{"k": "\"", "k": ":"}]`, `key "k" twice`},
		{`{"o": {"x": 1, "x": 1}}`, `key "x" twice`},
	}
	for _, tc := range cases {
		_, err := jsonValue(tc.text)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.text, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.err)
		}
	}
}

const benchDoc = `{"id": 12345, "name": "a customer name", "tags": ["x", "y", "z"], "address": {"city": "Springfield", "zip": "12345", "lines": ["1 Main St", "Apt 2"]}, "score": 19.90, "active": true, "meta": null}`

// BenchmarkJSONValue: the maps' way, with its member count, against the
// tokens' way that a key given twice takes.
func BenchmarkJSONValue(b *testing.B) {
	b.Run("maps", func(b *testing.B) {
		for b.Loop() {
			if _, err := jsonValue(benchDoc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tokens", func(b *testing.B) {
		for b.Loop() {
			if _, err := jsonTokenValue(benchDoc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
