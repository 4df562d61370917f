package diff

import (
	"encoding/hex"
	"fmt"
)

// AddSum adds another sum: the sum of two multisets is the sum of their
// union, so the content hash of a whole export is the sum of its files'.
func (s *Sum) AddSum(o Sum) { s.Add(o.v) }

// ParseSum reads a sum written by Sum.String.
func ParseSum(text string) (Sum, error) {
	var s Sum
	b, err := hex.DecodeString(text)
	if err != nil || len(b) != len(s.v) {
		return Sum{}, fmt.Errorf("diff: %q is not a content hash (64 hex digits)", text)
	}
	copy(s.v[:], b)
	return s, nil
}
