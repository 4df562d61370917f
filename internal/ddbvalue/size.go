package ddbvalue

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrNilValue marks an item holding a nil attribute value somewhere; the
// SDK cannot send it.
var ErrNilValue = errors.New("nil attribute value")

// ErrUnknownValue marks an attribute value of a type DynamoDB JSON has no
// tag for (types.UnknownUnionMember, or another implementation).
var ErrUnknownValue = errors.New("unknown attribute value type")

// ItemSize returns the size of an item by DynamoDB's rules ("Item sizes and
// formats" in the developer guide): for every attribute the UTF-8 length of
// its name plus the size of its value, where
//
//   - S is its UTF-8 length, B its raw byte length;
//   - N is NumberSize;
//   - BOOL and NULL are 1 byte;
//   - SS, NS, BS are the sum of their elements;
//   - M and L are 3 bytes plus, per element, 1 byte plus the element (and, in
//     a map, its name).
//
// The 400 KB item limit and capacity units are computed from this size.
// Values ValueSize refuses count what they can (nil as 0).
func ItemSize(item map[string]types.AttributeValue) int {
	n, _ := MeasureItem(item)
	return n
}

// MeasureItem is ItemSize that also reports the first value DynamoDB JSON
// cannot encode: a nil value (ErrNilValue) or one of an unknown type
// (ErrUnknownValue).
func MeasureItem(item map[string]types.AttributeValue) (int, error) {
	n := 0
	var err error
	for name, av := range item {
		size, e := ValueSize(av)
		n += len(name) + size
		err = firstErr(err, e)
	}
	return n, err
}

// ValueSize is the size of one attribute value (see ItemSize), without
// its name.
func ValueSize(av types.AttributeValue) (int, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if v == nil {
			return 0, ErrNilValue
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberN:
		if v == nil {
			return 0, ErrNilValue
		}
		return NumberSize(v.Value), nil
	case *types.AttributeValueMemberB:
		if v == nil {
			return 0, ErrNilValue
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		if v == nil {
			return 0, ErrNilValue
		}
		return 1, nil
	case *types.AttributeValueMemberNULL:
		if v == nil {
			return 0, ErrNilValue
		}
		return 1, nil
	case *types.AttributeValueMemberSS:
		if v == nil {
			return 0, ErrNilValue
		}
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberNS:
		if v == nil {
			return 0, ErrNilValue
		}
		n := 0
		for _, s := range v.Value {
			n += NumberSize(s)
		}
		return n, nil
	case *types.AttributeValueMemberBS:
		if v == nil {
			return 0, ErrNilValue
		}
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n, nil
	case *types.AttributeValueMemberM:
		if v == nil {
			return 0, ErrNilValue
		}
		n := 3
		var err error
		for name, e := range v.Value {
			size, ee := ValueSize(e)
			n += len(name) + size + 1
			err = firstErr(err, ee)
		}
		return n, err
	case *types.AttributeValueMemberL:
		if v == nil {
			return 0, ErrNilValue
		}
		n := 3
		var err error
		for _, e := range v.Value {
			size, ee := ValueSize(e)
			n += size + 1
			err = firstErr(err, ee)
		}
		return n, err
	case nil:
		return 0, ErrNilValue
	}
	return 0, fmt.Errorf("%w %T", ErrUnknownValue, av)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
