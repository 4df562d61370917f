package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// Canonical returns an item's canonical JSON (ddbvalue.AppendCanonicalItem):
// DynamoDB JSON with type tags, attribute names and sets sorted, numbers in
// canonical form and set elements deduplicated, so that two items Equal
// reports as equal have the same text.
func Canonical(item map[string]types.AttributeValue) ([]byte, error) {
	return ddbvalue.AppendCanonicalItem(nil, item), nil
}

// Hash is the SHA-256 of an item's canonical JSON.
func Hash(item map[string]types.AttributeValue) ([32]byte, error) {
	return sha256.Sum256(ddbvalue.AppendCanonicalItem(nil, item)), nil
}

// Sum is an order-independent hash of a multiset of items: the sum of
// their hashes, as 256-bit big-endian numbers, modulo 2^256. The zero
// value is the sum of no items.
type Sum struct {
	v [32]byte
}

// Add adds one item hash.
func (s *Sum) Add(h [32]byte) {
	var carry uint16
	for i := 31; i >= 0; i-- {
		t := uint16(s.v[i]) + uint16(h[i]) + carry
		s.v[i] = byte(t)
		carry = t >> 8
	}
}

// String is the sum in hex.
func (s Sum) String() string { return hex.EncodeToString(s.v[:]) }

// Int is the sum as a number, for tests.
func (s Sum) Int() *big.Int { return new(big.Int).SetBytes(s.v[:]) }
