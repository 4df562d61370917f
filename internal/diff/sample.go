package diff

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// InSample reports whether a key (KeyOf's bytes) is in a sample of the
// fraction p of all keys: the first 8 bytes of the key's SHA-256, as a
// fraction of 2^64, are below p. The same key is in or out on every run,
// so both sides of a comparison sample the same keys. p >= 1 takes every
// key, p <= 0 none.
func InSample(key []byte, p float64) bool {
	switch {
	case p >= 1:
		return true
	case p <= 0:
		return false
	}
	h := sha256.Sum256(key)
	x := binary.BigEndian.Uint64(h[:8])
	return float64(x) < p*math.Exp2(64)
}
