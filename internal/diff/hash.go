package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/big"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/transform"
)

// Canonical returns an item's canonical JSON: DynamoDB JSON with type tags
// as transform.JSONItem renders it (attribute names sorted, sets sorted),
// numbers in canonical form and set elements deduplicated, so that two
// items Equal reports as equal have the same text.
func Canonical(item map[string]types.AttributeValue) ([]byte, error) {
	return appendCanonicalMap(nil, item), nil
}

// AppendCanonical appends the item's canonical JSON (see Canonical) to
// dst, so that a caller encoding many items can reuse one buffer.
func AppendCanonical(dst []byte, item map[string]types.AttributeValue) []byte {
	return appendCanonicalMap(dst, item)
}

// canonicalSlow is the definition Canonical implements directly: the JSON
// encoding of transform.JSONItem of the normalized item. Tests check that
// both agree byte for byte.
func canonicalSlow(item map[string]types.AttributeValue) ([]byte, error) {
	return json.Marshal(transform.JSONItem(canonicalItem(item)))
}

func canonicalItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = canonicalValue(v)
	}
	return out
}

func canonicalValue(av types.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: canonicalNumber(v.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: setOf(v.Value, canonicalNumber)}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: setOf(v.Value, nil)}
	case *types.AttributeValueMemberBS:
		s := setOf(bytesToStrings(v.Value), nil)
		bs := make([][]byte, len(s))
		for i, e := range s {
			bs[i] = []byte(e)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = canonicalValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: canonicalItem(v.Value)}
	}
	return av
}

// Hash is the SHA-256 of an item's canonical JSON.
func Hash(item map[string]types.AttributeValue) ([32]byte, error) {
	return sha256.Sum256(appendCanonicalMap(nil, item)), nil
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
