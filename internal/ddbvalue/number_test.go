package ddbvalue

import (
	"cmp"
	"errors"
	"strings"
	"testing"
)

func TestNumber(t *testing.T) {
	t.Parallel()
	max38 := strings.Repeat("9", 38)
	tests := []struct{ in, want, err string }{
		{in: "0", want: "0"},
		{in: "-0", want: "0"},
		{in: "-0.000", want: "0"},
		{in: "0e99", want: "0"},
		{in: "19.90", want: "19.9"},
		{in: "007", want: "7"},
		{in: "-007.50", want: "-7.5"},
		{in: "+7", want: "7"},
		{in: ".5", want: "0.5"},
		{in: "5.", want: "5"},
		{in: " 42 ", want: "42"},
		{in: "1e3", want: "1000"},
		{in: "1.5E-3", want: "0.0015"},
		{in: "15e-1", want: "1.5"},
		{in: "1E+2", want: "100"},
		{in: max38, want: max38},
		{in: "-" + max38, want: "-" + max38},
		{in: "0." + max38, want: "0." + max38},
		{in: max38 + "000", want: max38 + "000"}, // trailing zeros are not significant
		{in: "1" + strings.Repeat("0", 37) + "1", err: "39 significant digits"},
		{in: "9.99e125", want: "999" + strings.Repeat("0", 123)},
		{in: "9.9999999999999999999999999999999999999e125", want: max38 + strings.Repeat("0", 88)},
		{in: "1e126", err: "1e+126 is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125)"},
		{in: "1e-130", want: "0." + strings.Repeat("0", 129) + "1"},
		{in: "1e-131", err: "outside the range"},
		{in: "-2.5e-200", err: "-2.5e-200 is outside the range"},
		{in: "NaN", err: `"NaN" is not a number DynamoDB can hold`},
		{in: "Infinity", err: "not a number"},
		{in: "0x10", err: "not a number"},
		{in: "1/2", err: "not a number"},
		{in: "1_000", err: "not a number"},
		{in: "", err: "not a number"},
		{in: "-", err: "not a number"},
		{in: ".", err: "not a number"},
		{in: "1.2.3", err: "not a number"},
		{in: "1e", err: `"1e" is not a number`},
		{in: "1e5000000000", err: "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Number(tt.in)
			if tt.err != "" {
				var ne *NumberError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ne) {
					t.Fatalf("Number(%q) = %q, %v; want a *NumberError with %q", tt.in, got, err, tt.err)
				}
				if CanonicalNumber(tt.in) != tt.in {
					t.Errorf("CanonicalNumber(%q) = %q, want the text itself", tt.in, CanonicalNumber(tt.in))
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Number(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if again, err := Number(got); err != nil || again != got {
				t.Errorf("Number(%q) = %q, %v: the canonical form is not a fixed point", got, again, err)
			}
		})
	}
}

func TestNumberErrorHint(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1e126":                 "1e+126 is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125; use text)",
		strings.Repeat("1", 39): strings.Repeat("1", 39) + " has 39 significant digits; DynamoDB numbers hold at most 38 (use text)",
	} {
		_, err := Number(in)
		var ne *NumberError
		if !errors.As(err, &ne) {
			t.Fatalf("Number(%q) error %v is not a *NumberError", in, err)
		}
		ne.Hint = "use text"
		if got := ne.Error(); got != want {
			t.Errorf("with a hint: %q, want %q", got, want)
		}
	}
}

// TestCompareNumbers lists numbers in DynamoDB's ascending order; every
// pair must compare as their positions do.
func TestCompareNumbers(t *testing.T) {
	t.Parallel()
	max38 := strings.Repeat("9", 38)
	ordered := [][]string{ // each group: equal values
		{"-" + max38 + "e88", "-9.9999999999999999999999999999999999999e125"},
		{"-1e125"},
		{"-" + max38},
		{"-" + strings.Repeat("9", 37) + "8"},
		{"-100", "-1e2", "-100.000"},
		{"-99.99"},
		{"-10"},
		{"-9.5", "-95e-1"},
		{"-2"},
		{"-1.5"},
		{"-1", "-1.0", "-01", "-10e-1"},
		{"-0.5"},
		{"-1e-130"},
		{"0", "-0", "0.000", "+0", "0e5"},
		{"1e-130", "0." + strings.Repeat("0", 129) + "1"},
		{"2e-130"},
		{"0.001", "1e-3"},
		{"0.0100", "0.01"},
		{"0.1"},
		{"0.5", ".5"},
		{"0.99999999999999999999999999999999999999"},
		{"1", "1.0", "001", "1e0", "+1"},
		{"1.00000000000000000000000000000000000001"},
		{"1.5"},
		{"2"},
		{"9"},
		{"10", "1e1", "10.0"},
		{"12"},
		{"100", "1e2"},
		{strings.Repeat("9", 37) + "8"},
		{max38},
		{"1" + strings.Repeat("0", 38), "1e38"},
		{"1e125"},
		{max38 + "e88"},
	}
	for i, gi := range ordered {
		for j, gj := range ordered {
			want := cmp.Compare(i, j)
			for _, a := range gi {
				for _, b := range gj {
					got, err := CompareNumbers(a, b)
					if err != nil || got != want {
						t.Errorf("CompareNumbers(%q, %q) = %d, %v; want %d", a, b, got, err, want)
					}
					if ca, cb := CanonicalNumber(a), CanonicalNumber(b); (ca == cb) != (want == 0) {
						t.Errorf("CanonicalNumber(%q) = %q, CanonicalNumber(%q) = %q; want them equal iff the numbers are", a, ca, b, cb)
					}
				}
			}
		}
	}
	if _, err := CompareNumbers("1", "0x10"); err == nil {
		t.Error(`CompareNumbers("1", "0x10") compared a text that is not a DynamoDB number`)
	}
}

// TestNumberSize follows "Item sizes and formats": 1 byte plus 1 per two
// significant digits paired on the decimal point, plus 1 if negative, at
// most 21; leading and trailing zeros trimmed.
func TestNumberSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"0", 1}, {"-0.00", 1},
		{"7", 2}, {"42", 2}, {"123", 3}, {"1000", 2}, {"0007", 2},
		{"-42", 3},
		{"123.45", 4}, // 01 23 . 45
		{"1.50", 3},   // 01 . 50
		{"12.5", 3},   // 12 . 50
		{"0.001", 2},  // . 00 10
		{"1E-130", 2}, {"1e125", 2}, {"15e-1", 3},
		{strings.Repeat("9", 38), 20},
		{"-" + strings.Repeat("9", 37) + ".9", 21}, // capped
		{"9." + strings.Repeat("9", 37), 21},       // 09 . then 19 pairs: 1 + 20
		{"abc", 3}, {"", 0},                        // not numbers: their length
	}
	for _, tt := range tests {
		if got := NumberSize(tt.in); got != tt.want {
			t.Errorf("NumberSize(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzNumberSize: NumberSize reads digits in place; it must agree with
// the size computed from ParseDecimal.
func FuzzNumberSize(f *testing.F) {
	for _, s := range []string{"0", "-0.00", "1", "10", "100", "12.5", ".5", "5.", "-1.50e3", "1E-130", "9.99e125",
		"", ".", "-", "1..2", "1e", "abc", "00012300", "+7", "1e+5", "123456789012345678901234567890123456789", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s)
		if d, err := ParseDecimal(s); err == nil {
			if d.Digits == "" {
				want = 1
			} else {
				lo, hi := d.Exp, d.Magnitude()
				want = 1 + floorDiv2(hi) - floorDiv2(lo) + 1
				if d.Neg {
					want++
				}
				want = min(want, 21)
			}
		}
		if got := NumberSize(s); got != want {
			t.Errorf("NumberSize(%q) = %d, want %d", s, got, want)
		}
	})
}
