package ddbvalue

import (
	"bytes"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Equal reports whether two attribute values hold the same data: numbers by
// value, sets in any order, lists and maps element by element. nil equals
// only nil.
func Equal(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && (x.Value == y.Value || CanonicalNumber(x.Value) == CanonicalNumber(y.Value))
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value, nil)
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(x.Value, y.Value, CanonicalNumber)
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(bytesToStrings(x.Value), bytesToStrings(y.Value), nil)
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		if !ok || len(x.Value) != len(y.Value) {
			return false
		}
		for i := range x.Value {
			if !Equal(x.Value[i], y.Value[i]) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		return ok && EqualItems(x.Value, y.Value)
	}
	return false
}

// EqualItems reports whether two items (or map values) have the same
// attributes with equal values.
func EqualItems(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !Equal(va, vb) {
			return false
		}
	}
	return true
}

// sameSet compares two sets as sets: order and repeated elements do not
// matter. norm, if not nil, canonicalizes elements first.
func sameSet(a, b []string, norm func(string) string) bool {
	ca, cb := setOf(a, norm), setOf(b, norm)
	return slices.Equal(ca, cb)
}

func setOf(s []string, norm func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		if norm != nil {
			v = norm(v)
		}
		out[i] = v
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
