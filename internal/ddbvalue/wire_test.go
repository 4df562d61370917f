package ddbvalue

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// jsonStringReference is AppendString one byte at a time: the SDK's
// escaping rules, plainly.
func jsonStringReference(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out = append(out, '\\', c)
			case c == '\n':
				out = append(out, `\n`...)
			case c == '\r':
				out = append(out, `\r`...)
			case c == '\t':
				out = append(out, `\t`...)
			case c < 0x20 || c == 0x7F:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, "\uFFFD"...)
		case r == '\u2028':
			out = append(out, `\u2028`...)
		case r == '\u2029':
			out = append(out, `\u2029`...)
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(append(out, '"'))
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "é", "abcdefgh", "abcdefghé", "abcdefgh\"", "\x7f", "0123456789\x00", "\xff\xfe", "\u2028x\u2029",
		"CUSTOMER#12345", "ORDER#2024-05-01T10:00:00.500000Z#000000012345", "12 Rue de la Paix, Zürich", "😀😀😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := string(AppendString(nil, s))
		if want := jsonStringReference(s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("AppendString(%q) = %s: not JSON", s, got)
		}
	})
}

// The canonical form's strings are encoding/json's, byte for byte.
func FuzzAppendStdString(f *testing.F) {
	for _, s := range []string{"", "a", "<a&b>", "abcdefgh<", "\b\f\x7f", "\xff\xfe", "\u2028x\u2029", "abcdefgh\"", "ünï ✓ 李"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendStdString(nil, s); string(got) != string(want) {
			t.Fatalf("appendStdString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}
