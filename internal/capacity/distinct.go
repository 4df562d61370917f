package capacity

import (
	"hash/fnv"
	"math"
	"math/bits"
)

// ExactDistinctLimit is how many distinct keys per index are counted
// exactly before the count switches to HyperLogLog.
const ExactDistinctLimit = 1 << 16

// hllPrecision: 2^14 registers, standard error 1.04/sqrt(2^14) = 0.81%.
const hllPrecision = 14

// distinct counts distinct strings: exactly (a set of 64-bit hashes) up to
// ExactDistinctLimit, then with HyperLogLog.
type distinct struct {
	exact map[uint64]struct{}
	regs  []uint8 // HyperLogLog registers once the exact set is dropped
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	// FNV's high bits are weak for short keys; HyperLogLog needs them all
	// well mixed (splitmix64 finalizer).
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (d *distinct) add(s string) {
	x := hash64(s)
	if d.regs != nil {
		d.addHLL(x)
		return
	}
	if d.exact == nil {
		d.exact = map[uint64]struct{}{}
	}
	d.exact[x] = struct{}{}
	if len(d.exact) > ExactDistinctLimit {
		d.regs = make([]uint8, 1<<hllPrecision)
		for h := range d.exact {
			d.addHLL(h)
		}
		d.exact = nil
	}
}

func (d *distinct) addHLL(x uint64) {
	idx := x >> (64 - hllPrecision)
	rest := x<<hllPrecision | 1<<(hllPrecision-1) // guard bit bounds the rank
	rank := uint8(bits.LeadingZeros64(rest)) + 1
	if rank > d.regs[idx] {
		d.regs[idx] = rank
	}
}

// count returns the number of distinct strings and whether it is exact.
func (d *distinct) count() (int64, bool) {
	if d.regs == nil {
		return int64(len(d.exact)), true
	}
	m := float64(len(d.regs))
	sum, zeros := 0.0, 0
	for _, r := range d.regs {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	est := alpha * m * m / sum
	if est <= 2.5*m && zeros > 0 {
		est = m * math.Log(m/float64(zeros)) // linear counting for small sets
	}
	return int64(math.Round(est)), false
}
