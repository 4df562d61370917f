package mapping_test

import (
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		cols    []string
		prefix  string
		wantErr string
	}{
		{in: "PROFILE", prefix: "PROFILE"},
		{in: "CUSTOMER#{customer_id}", cols: []string{"customer_id"}, prefix: "CUSTOMER#"},
		{in: "{a}#{b:10}#{a}", cols: []string{"a", "b"}, prefix: ""},
		{in: "X{{literal}}#{id}", cols: []string{"id"}, prefix: "X{literal}#"},
		{in: "A#{", wantErr: `offset 2: unclosed "{"`},
		{in: "A#}", wantErr: `offset 2: unmatched "}" (write "}}" for a literal brace)`},
		{in: "{}", wantErr: "offset 0: empty placeholder {}"},
		{in: "{a b}", wantErr: `offset 0: invalid character ' ' in placeholder "a b"`},
		{in: "{a:0}", wantErr: `offset 0: invalid width "0" in {a:0}: want a number of digits from 1 to 40`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			tpl, err := mapping.ParseTemplate(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tpl.Columns(); !equal(got, tc.cols) {
				t.Errorf("columns = %v, want %v", got, tc.cols)
			}
			if got := tpl.Prefix(); got != tc.prefix {
				t.Errorf("prefix = %q, want %q", got, tc.prefix)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzParseTemplate checks that any input either parses into parts that
// print back to an equivalent template, or fails with an offset inside it.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "A", "CUSTOMER#{id}", "{a}#{b:10}", "{{x}}", "{", "}", "{a:99}", "{é}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := mapping.ParseTemplate(s)
		if err != nil {
			te, ok := err.(*mapping.TemplateError)
			if !ok || te.Offset < 0 || te.Offset > len(s) {
				t.Fatalf("bad error %v for %q", err, s)
			}
			return
		}
		// Re-render with placeholders and parse again: same parts.
		var back string
		for _, p := range tpl.Parts {
			if p.Column == "" {
				for i := 0; i < len(p.Literal); i++ {
					switch c := p.Literal[i]; c {
					case '{':
						back += "{{"
					case '}':
						back += "}}"
					default:
						back += string([]byte{c})
					}
				}
				continue
			}
			back += "{" + p.Column
			if p.Width > 0 {
				back += ":" + itoa(p.Width)
			}
			back += "}"
		}
		tpl2, err := mapping.ParseTemplate(back)
		if err != nil {
			t.Fatalf("re-parse of %q (from %q): %v", back, s, err)
		}
		if len(tpl2.Parts) != len(tpl.Parts) {
			t.Fatalf("parts differ for %q: %d vs %d", s, len(tpl.Parts), len(tpl2.Parts))
		}
		for i := range tpl.Parts {
			a, b := tpl.Parts[i], tpl2.Parts[i]
			if a.Literal != b.Literal || a.Column != b.Column || a.Width != b.Width {
				t.Fatalf("part %d differs for %q: %+v vs %+v", i, s, a, b)
			}
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
