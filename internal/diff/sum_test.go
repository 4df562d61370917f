package diff

import (
	"fmt"
	"testing"
)

// Sums of parts add up to the sum of the whole, and survive their text.
func TestSumOfSums(t *testing.T) {
	t.Parallel()
	var whole, part1, part2 Sum
	for i := range 40 {
		h, err := Hash(item{"PK": S(fmt.Sprint(i))})
		if err != nil {
			t.Fatal(err)
		}
		whole.Add(h)
		if i%3 == 0 {
			part1.Add(h)
		} else {
			part2.Add(h)
		}
	}
	var total Sum
	for _, p := range []Sum{part1, part2} {
		back, err := ParseSum(p.String())
		if err != nil {
			t.Fatal(err)
		}
		total.AddSum(back)
	}
	if total != whole {
		t.Errorf("sum of parts %s, sum of the whole %s", total, whole)
	}
	if part1 == whole || part2 == whole {
		t.Error("a part equals the whole: the test proves nothing")
	}
	for _, bad := range []string{"", "xyz", whole.String()[:62]} {
		if _, err := ParseSum(bad); err == nil {
			t.Errorf("ParseSum(%q) succeeded", bad)
		}
	}
}
