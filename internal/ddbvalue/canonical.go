package ddbvalue

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AppendCanonicalItem appends an item's canonical JSON: DynamoDB JSON with
// attribute names and set elements sorted, set elements deduplicated and
// numbers in canonical form (CanonicalNumber), strings escaped as
// encoding/json escapes them. Items Equal reports as equal have the same
// text, and it is the bytes json.Marshal(JSONItem(CanonicalItem(m)))
// gives, written without building the intermediate maps: hashing every
// item of a table is the hot loop of verify, and export writes its files
// in this form.
func AppendCanonicalItem(dst []byte, m map[string]types.AttributeValue) []byte {
	return appendCanonicalMap(dst, m)
}

func appendCanonicalMap(dst []byte, m map[string]types.AttributeValue) []byte {
	var stack [24]string // most items have fewer attributes: no allocation
	names := stack[:0]
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	dst = append(dst, '{')
	for i, k := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStdString(dst, k)
		dst = append(dst, ':')
		dst = appendCanonicalValue(dst, m[k])
	}
	return append(dst, '}')
}

func appendTagged(dst []byte, tag string) []byte {
	dst = append(dst, `{"`...)
	dst = append(dst, tag...)
	return append(dst, `":`...)
}

func appendStringList(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStdString(dst, s)
	}
	return append(dst, ']')
}

func appendCanonicalValue(dst []byte, av types.AttributeValue) []byte {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return append(appendStdString(appendTagged(dst, "S"), v.Value), '}')
	case *types.AttributeValueMemberN:
		return append(appendStdString(appendTagged(dst, "N"), CanonicalNumber(v.Value)), '}')
	case *types.AttributeValueMemberB:
		return append(appendStdString(appendTagged(dst, "B"), base64.StdEncoding.EncodeToString(v.Value)), '}')
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return append(dst, `{"BOOL":true}`...)
		}
		return append(dst, `{"BOOL":false}`...)
	case *types.AttributeValueMemberNULL:
		return append(dst, `{"NULL":true}`...)
	case *types.AttributeValueMemberSS:
		return append(appendStringList(appendTagged(dst, "SS"), setOf(v.Value, nil)), '}')
	case *types.AttributeValueMemberNS:
		return append(appendStringList(appendTagged(dst, "NS"), setOf(v.Value, CanonicalNumber)), '}')
	case *types.AttributeValueMemberBS:
		set := setOf(bytesToStrings(v.Value), nil)
		enc := make([]string, len(set))
		for i, e := range set {
			enc[i] = base64.StdEncoding.EncodeToString([]byte(e))
		}
		slices.Sort(enc) // JSONValue sorts the base64 text
		return append(appendStringList(appendTagged(dst, "BS"), enc), '}')
	case *types.AttributeValueMemberL:
		dst = append(appendTagged(dst, "L"), '[')
		for i, e := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonicalValue(dst, e)
		}
		return append(dst, "]}"...)
	case *types.AttributeValueMemberM:
		return append(appendCanonicalMap(appendTagged(dst, "M"), v.Value), '}')
	}
	// What JSONValue does for an unknown member.
	b, _ := json.Marshal(map[string]any{"?": fmt.Sprintf("%T", av)})
	return append(dst, b...)
}

// CanonicalItem is the item with numbers in canonical form and set
// elements sorted and deduplicated, at any depth: equal items (Equal) give
// identical ones.
func CanonicalItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = canonicalValue(v)
	}
	return out
}

func canonicalValue(av types.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: CanonicalNumber(v.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: setOf(v.Value, CanonicalNumber)}
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
		return &types.AttributeValueMemberM{Value: CanonicalItem(v.Value)}
	}
	return av
}

// CanonicalEncoder appends items' canonical JSON, the bytes of
// AppendCanonicalItem, remembering the sorted attribute names of the items
// it encoded: the items of one entity mostly have the same names, and
// walking each item's map for its names and sorting them was half of
// encoding it. An item whose names are a remembered list (same length,
// every name present) is encoded in that order by lookups alone. The zero
// value is ready; one per goroutine (it is not safe for concurrent use).
type CanonicalEncoder struct {
	orders [canonicalOrders][]string
	next   int // the slot the next new list takes, round robin
}

// canonicalOrders is how many name lists an encoder remembers: an entity
// or two per source table, and a few variants of each (attributes left
// out when NULL).
const canonicalOrders = 32

// AppendItem appends m's canonical JSON, as AppendCanonicalItem does.
func (e *CanonicalEncoder) AppendItem(dst []byte, m map[string]types.AttributeValue) []byte {
	for _, names := range e.orders {
		if len(names) != len(m) || names == nil {
			continue
		}
		if out, ok := appendInOrder(dst, names, m); ok {
			return out
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	e.orders[e.next] = names
	e.next = (e.next + 1) % canonicalOrders
	out, _ := appendInOrder(dst, names, m)
	return out
}

// appendInOrder appends m's attributes in the order of names, sorted and
// as many as m has, and reports whether m has all of them (then they are
// all of m's); if not, dst comes back as it was.
func appendInOrder(dst []byte, names []string, m map[string]types.AttributeValue) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '{')
	for i, k := range names {
		v, ok := m[k]
		if !ok {
			return dst[:start], false
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStdString(dst, k)
		dst = append(dst, ':')
		dst = appendCanonicalValue(dst, v)
	}
	return append(dst, '}'), true
}
