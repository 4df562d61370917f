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
		{in: "{a b}", wantErr: `offset 3: invalid character 'b' in placeholder (quote names with other characters: {"Order ID"})`},
		{in: "{a:0}", wantErr: `offset 0: invalid width "0" in {a:0}: want a number of digits from 1 to 40`},
		{in: `O#{"Order ID"}#{"say ""hi"""}`, cols: []string{"Order ID", `say "hi"`}, prefix: "O#"},
		{in: `{customers.country}#{c."x.y"|lower}#{"dotted.name"}`, cols: []string{"customers.country", `c."x.y"`, "dotted.name"}},
		{in: "{name|nfkc|upper}#{n|decimal:10.2}", cols: []string{"name", "n"}},
		{in: `{"a}`, wantErr: `offset 1: unclosed quote in placeholder (write "" for a quote inside a quoted name)`},
		{in: `{""}`, wantErr: `offset 1: empty quoted name ""`},
		{in: "{a.}", wantErr: `offset 3: invalid character '}' where a column name belongs (quote names with other characters: {"Order ID"})`},
		{in: "{a|}", wantErr: `offset 3: invalid character '}' where a function name belongs (quote names with other characters: {"Order ID"})`},
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

// FuzzParseCondition checks that any where clause either parses or fails
// with an offset inside it, without panicking.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"end_date IS NULL", "a = 1 AND (b <> 'x''y' OR NOT c)", `"Order ID" IN (1, 2.5, -3e2)`,
		"x BETWEEN '2024-01-01' AND '2025-01-01'", "a IS NOT TRUE", "(((", "a <", "'unclosed", `"`, "a ! b", "c.d.e >= .5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := mapping.ParseCondition(s)
		if err != nil {
			te, ok := err.(*mapping.TemplateError)
			if !ok || te.Offset < 0 || te.Offset > len(s) {
				t.Fatalf("bad error %v for %q", err, s)
			}
			return
		}
		c.Operands(func(o *mapping.Operand) {
			if o.Offset < 0 || o.Offset >= len(s) {
				t.Fatalf("operand offset %d outside %q", o.Offset, s)
			}
		})
	})
}

func TestParseCondition(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, wantErr string }{
		{in: "end_date IS NULL"},
		{in: "a = 1 AND (b <> 'it''s' OR NOT flag) AND c.\"x y\" IN ('p', 'q')"},
		{in: "n NOT BETWEEN -1.5 AND 2e3"},
		{in: "", wantErr: "offset 0: empty condition"},
		{in: "a = ", wantErr: "offset 4: unexpected end of condition: want a column or a value"},
		{in: "(a = 1", wantErr: `offset 6: unexpected end of condition: want ")" to close the "(" at offset 0`},
		{in: "a IS MAYBE", wantErr: `offset 5: unexpected "MAYBE" after IS: want NULL, TRUE or FALSE`},
		{in: "a ! 1", wantErr: `offset 2: "!" alone is not an operator: write <> or NOT`},
		{in: "a = 'x", wantErr: "offset 4: unclosed string (double the quote to write one inside)"},
		{in: "a = 1 b", wantErr: `offset 6: unexpected "b": want AND, OR or the end of the condition`},
		{in: "a; DROP TABLE x", wantErr: `offset 1: unexpected character ';' (quote names with other characters: "Order ID"; text literals take single quotes)`},
		{in: "a IN (1 2)", wantErr: `offset 8: unexpected "2" in IN list: want "," or ")"`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			_, err := mapping.ParseCondition(tc.in)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
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
	for _, s := range []string{"", "A", "CUSTOMER#{id}", "{a}#{b:10}", "{{x}}", "{", "}", "{a:99}", "{é}",
		`{"Order ID"}`, `{"say ""hi"""|lower}`, `{c.rep."x.y"|nfkc|upper}`, `{n|decimal:10.2}#{m|signed:5}`, `{"}"}`, `{a|}`, `{"a""}`, `{ a . b }`} {
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
			back += "{" + p.Ref()
			if p.Width > 0 {
				back += ":" + itoa(p.Width)
			}
			for _, f := range p.Funcs {
				back += "|" + mapping.QuoteName(f.Name)
				if f.Arg != "" {
					back += ":" + f.Arg
				}
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
			if a.Literal != b.Literal || a.Column != b.Column || a.Width != b.Width || a.Ref() != b.Ref() || len(a.Funcs) != len(b.Funcs) {
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
