package golden

import "testing"

func TestFirstLineDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nx\n", "a\nb\n", "line 2:\n got: x\nwant: b"},
		{"a\n", "a\nb\n", "line 2:\n got: \nwant: b"},
	} {
		if d := FirstLineDiff(tc.got, tc.want); d != tc.diff {
			t.Errorf("FirstLineDiff(%q, %q) = %q, want %q", tc.got, tc.want, d, tc.diff)
		}
	}
}
