package engine

import "testing"

func TestSees(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		snapshot string
		xids     []uint32
		want     bool
	}{
		{"before xmin", "100:105:", []uint32{99}, true},
		{"between, not running", "100:105:101,103", []uint32{102, 104}, true},
		{"running", "100:105:101,103", []uint32{103}, false},
		{"at xmax", "100:105:", []uint32{105}, false},
		{"after xmax", "100:105:", []uint32{200}, false},
		{"none", "100:105:", nil, true},
		// Full xids of the second epoch; the stream sends the low bits.
		{"second epoch", "4294967396:4294967401:", []uint32{99}, true},
		{"second epoch, running", "4294967396:4294967401:4294967398", []uint32{102}, false},
		// xmax wrapped into the next epoch, the xid not yet.
		{"across the wrap", "4294967290:4294967300:", []uint32{4294967294}, true},
		{"across the wrap, not yet committed", "4294967290:4294967300:4294967295", []uint32{4294967295}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := sees(c.snapshot, c.xids)
			if err != nil || got != c.want {
				t.Errorf("sees(%q, %v) = %v, %v; want %v", c.snapshot, c.xids, got, err, c.want)
			}
		})
	}
	if _, err := sees("garbage", nil); err == nil {
		t.Error("a malformed snapshot was accepted")
	}
}
