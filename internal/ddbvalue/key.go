package ddbvalue

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CompareKeys orders two key values as DynamoDB orders a sort key: S by
// the bytes of its UTF-8 text, B by bytes, N by numeric value (exactly,
// with no floating point). Values of different types, or of a type no key
// can have, compare equal: a key attribute has one type. An N text that is
// not a number (DynamoDB never returns one) sorts before every number,
// and among such texts by bytes, so that the order stays total.
func CompareKeys(a, b types.AttributeValue) int {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		if y, ok := b.(*types.AttributeValueMemberS); ok {
			return strings.Compare(x.Value, y.Value)
		}
	case *types.AttributeValueMemberB:
		if y, ok := b.(*types.AttributeValueMemberB); ok {
			return bytes.Compare(x.Value, y.Value)
		}
	case *types.AttributeValueMemberN:
		if y, ok := b.(*types.AttributeValueMemberN); ok {
			dx, errX := ParseDecimal(x.Value)
			dy, errY := ParseDecimal(y.Value)
			switch {
			case errX == nil && errY == nil:
				return dx.Compare(dy)
			case errX != nil && errY != nil:
				return strings.Compare(x.Value, y.Value)
			case errX != nil:
				return -1
			}
			return 1
		}
	}
	return 0
}

// KeyTag returns the type tag (S, N or B) and the raw value of a value a
// key can hold; ok is false for any other.
func KeyTag(av types.AttributeValue) (tag byte, val string, ok bool) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return 'S', v.Value, true
	case *types.AttributeValueMemberN:
		return 'N', v.Value, true
	case *types.AttributeValueMemberB:
		return 'B', string(v.Value), true
	}
	return 0, "", false
}

// AppendKeyPart appends the encoding of one key value: its type tag (S, N
// or B), its bytes with 0x00 escaped as 0x00 0xFF (a number in canonical
// form, so that 1.50 and 15e-1, one DynamoDB key, are equal bytes) and the
// terminator 0x00 0x01. Parts concatenate: one key attribute's items share
// a prefix, and a part never is a prefix of another. ok is false, and dst
// is returned as it was, for a value no key can hold.
func AppendKeyPart(dst []byte, av types.AttributeValue) ([]byte, bool) {
	tag, val, ok := KeyTag(av)
	if !ok {
		return dst, false
	}
	if tag == 'N' {
		val = CanonicalNumber(val)
	}
	dst = append(dst, tag)
	for i := 0; i < len(val); i++ {
		if c := val[i]; c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1), true
}

// TypeName is the type tag of a value as DynamoDB JSON writes it (S, N,
// B, BOOL, NULL, M, L, SS, NS, BS), or its Go type for any other.
func TypeName(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	}
	return fmt.Sprintf("%T", av)
}
