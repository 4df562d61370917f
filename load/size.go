package load

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize returns the size of an item by DynamoDB's rules ("Item sizes and
// formats" in the developer guide): for every attribute the UTF-8 length of
// its name plus the size of its value, where
//
//   - S is its UTF-8 length, B its raw byte length;
//   - N is 1 byte plus 1 byte per two significant digits (aligned on the
//     decimal point, leading and trailing zeros trimmed), plus 1 when
//     negative, at most 21; zero is 1 byte;
//   - BOOL and NULL are 1 byte;
//   - SS, NS, BS are the sum of their elements;
//   - M and L are 3 bytes plus, per element, 1 byte plus the element (and, in
//     a map, its name).
//
// The 400 KB item limit and write units are computed from this size.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, av := range item {
		n += len(name) + attrSize(av)
	}
	return n
}

func attrSize(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += len(name) + attrSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += attrSize(e) + 1
		}
		return n
	}
	return 0
}

// decimal is a parsed DynamoDB number: value = (-1)^neg × digits × 10^exp,
// digits without leading or trailing zeros ("" for zero).
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// parseNumber parses the N syntax DynamoDB accepts: [+-]digits[.digits][e[+-]digits].
func parseNumber(s string) (decimal, bool) {
	var d decimal
	if s == "" {
		return d, false
	}
	switch s[0] {
	case '-':
		d.neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return d, false
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return d, false
		}
	}
	if hasExp {
		e, err := strconv.Atoi(expPart)
		if err != nil {
			return d, false
		}
		d.exp = e
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	d.exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	d.exp += len(digits) - len(trimmed)
	d.digits = trimmed
	if d.digits == "" {
		d.neg, d.exp = false, 0
	}
	return d, true
}

// numberSize is the stored size of an N value (see ItemSize).
func numberSize(s string) int {
	d, ok := parseNumber(s)
	if !ok {
		return len(s) // DynamoDB will reject it; any estimate will do
	}
	if d.digits == "" {
		return 1
	}
	// DynamoDB stores base-100 digits aligned on the decimal point: the digit
	// at power p of ten belongs to the pair floor(p/2).
	lo := d.exp
	hi := d.exp + len(d.digits) - 1
	pairs := floorDiv2(hi) - floorDiv2(lo) + 1
	n := 1 + pairs
	if d.neg {
		n++
	}
	return min(n, 21)
}

func floorDiv2(p int) int {
	if p >= 0 {
		return p / 2
	}
	return -((-p + 1) / 2)
}

// canonicalNumber renders a number so that equal DynamoDB numbers give equal
// strings.
func canonicalNumber(s string) (string, bool) {
	d, ok := parseNumber(s)
	if !ok {
		return "", false
	}
	if d.digits == "" {
		return "0", true
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	return sign + d.digits + "e" + strconv.Itoa(d.exp), true
}

// WriteUnits is the number of write capacity units a put of an item of size
// bytes consumes: one per started KB, at least one.
func WriteUnits(size int) int {
	return max(1, (size+1023)/1024)
}

// ItemWriteUnits is the write units a put of item consumes in the table and
// in every index of indexes the item appears in (it has the index's partition
// key and, if the index has one, its sort key). A write to an index costs
// by the size of the index entry (IndexEntrySize): the whole item for
// projection ALL, less for KEYS_ONLY and INCLUDE. tableKeys names the
// table's key attributes, which every index entry carries.
func ItemWriteUnits(item map[string]types.AttributeValue, indexes []Index, tableKeys ...string) int {
	size := ItemSize(item)
	n := WriteUnits(size)
	for _, ix := range indexes {
		if entry, ok := IndexEntrySize(item, size, ix, tableKeys...); ok {
			n += WriteUnits(entry)
		}
	}
	return n
}

// itemWriteUnits is ItemWriteUnits with the item's size known.
func itemWriteUnits(item map[string]types.AttributeValue, size int, cfg Config) int {
	n := WriteUnits(size)
	for _, ix := range cfg.Indexes {
		if entry, ok := IndexEntrySize(item, size, ix, cfg.PartitionKey, cfg.SortKey); ok {
			n += WriteUnits(entry)
		}
	}
	return n
}

// InIndex reports whether an item appears in an index: it has the index's
// partition key and, if the index has one, its sort key.
func InIndex(item map[string]types.AttributeValue, ix Index) bool {
	if _, ok := item[ix.PartitionKey]; !ok {
		return false
	}
	if ix.SortKey != "" {
		if _, ok := item[ix.SortKey]; !ok {
			return false
		}
	}
	return true
}

// IndexEntrySize is the size of an item's entry in an index (false when
// the item is not in it), by DynamoDB's rules: the whole item (size) for
// projection ALL; otherwise the table's and the index's key attributes
// plus, for INCLUDE, the projected attributes the item has. Storage adds
// IndexOverheadBytes per entry; write units do not.
func IndexEntrySize(item map[string]types.AttributeValue, size int, ix Index, tableKeys ...string) (int, bool) {
	if !InIndex(item, ix) {
		return 0, false
	}
	if ix.Projection == "" || ix.Projection == types.ProjectionTypeAll {
		return size, true
	}
	n := 0
	seen := make(map[string]bool, len(tableKeys)+2+len(ix.NonKeyAttributes))
	add := func(name string) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		if av, ok := item[name]; ok {
			n += len(name) + attrSize(av)
		}
	}
	for _, k := range tableKeys {
		add(k)
	}
	add(ix.PartitionKey)
	add(ix.SortKey)
	if ix.Projection == types.ProjectionTypeInclude {
		for _, a := range ix.NonKeyAttributes {
			add(a)
		}
	}
	return n, true
}

// IndexOverheadBytes is what DynamoDB adds to every item, and to every
// index entry, for storage.
const IndexOverheadBytes = 100

// requestBytes estimates, from above, how many bytes item adds to a
// BatchWriteItem request body as the SDK serializes it:
// {"PutRequest":{"Item":{...}}}, plus a separating comma.
func requestBytes(item map[string]types.AttributeValue) int {
	n := len(`{"PutRequest":{"Item":{}}},`)
	for name, av := range item {
		n += jsonStringLen(name) + 1 + valueBytes(av) + 1
	}
	return n
}

func valueBytes(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(`{"S":}`) + jsonStringLen(v.Value)
	case *types.AttributeValueMemberN:
		return len(`{"N":""}`) + len(v.Value)
	case *types.AttributeValueMemberB:
		return len(`{"B":""}`) + base64.StdEncoding.EncodedLen(len(v.Value))
	case *types.AttributeValueMemberBOOL:
		return len(`{"BOOL":false}`)
	case *types.AttributeValueMemberNULL:
		return len(`{"NULL":false}`)
	case *types.AttributeValueMemberSS:
		n := len(`{"SS":[]}`)
		for _, s := range v.Value {
			n += jsonStringLen(s) + 1
		}
		return n
	case *types.AttributeValueMemberNS:
		n := len(`{"NS":[]}`)
		for _, s := range v.Value {
			n += len(s) + 3
		}
		return n
	case *types.AttributeValueMemberBS:
		n := len(`{"BS":[]}`)
		for _, b := range v.Value {
			n += base64.StdEncoding.EncodedLen(len(b)) + 3
		}
		return n
	case *types.AttributeValueMemberM:
		n := len(`{"M":{}}`)
		for name, e := range v.Value {
			n += jsonStringLen(name) + 1 + valueBytes(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := len(`{"L":[]}`)
		for _, e := range v.Value {
			n += valueBytes(e) + 1
		}
		return n
	}
	return len(`{"NULL":false}`)
}

// jsonStringLen is the length of s as a JSON string the way smithy-go's
// encoder writes it: quotes, \" \\ \n \r \t as two bytes, other control bytes
// and invalid UTF-8 bytes as six (\u00XX, \ufffd), U+2028/U+2029 as six.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
