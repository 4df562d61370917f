package ddbvalue

import "testing"

// Number's allocation-free path gives what the general one gives.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "-0.00", "19.90", "19.00", "0.50", "007", "-007.10", "100", "-5.5", "1.", ".5", "1e3", " 1", "+1",
		"12345678901234567890123456789012345678", "0.000000000000000000000000000000000001", "1.2.3", "-", "", "--1", "0.0", "10.01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := plainNumber(s)
		if !ok {
			return
		}
		d, text, err := parseDecimal(s)
		if err == nil {
			err = d.check(text)
		}
		if want := d.String(); err != nil || fast != want {
			t.Fatalf("plainNumber(%q) = %q, Number's general path gives %q, %v", s, fast, d.String(), err)
		}
	})
}
