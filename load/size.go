package load

import (
	"fmt"
	"strconv"
	"strings"

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

// measure is ItemSize that also finds what the writer's encoding refuses:
// a nil value (errNilValue) or one of a type it does not know
// (errUnknownValue). It is a Checker's one walk over an item.
func measure(item map[string]types.AttributeValue) (int, error) {
	n := 0
	var err error
	for name, av := range item {
		size, e := valueSize(av)
		n += len(name) + size
		err = cmpOr(err, e)
	}
	return n, err
}

func attrSize(av types.AttributeValue) int {
	n, _ := valueSize(av)
	return n
}

// valueSize is the size of one attribute value (see ItemSize).
func valueSize(av types.AttributeValue) (int, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if v == nil {
			return 0, errNilValue
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberN:
		if v == nil {
			return 0, errNilValue
		}
		return numberSize(v.Value), nil
	case *types.AttributeValueMemberB:
		if v == nil {
			return 0, errNilValue
		}
		return len(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		if v == nil {
			return 0, errNilValue
		}
		return 1, nil
	case *types.AttributeValueMemberNULL:
		if v == nil {
			return 0, errNilValue
		}
		return 1, nil
	case *types.AttributeValueMemberSS:
		if v == nil {
			return 0, errNilValue
		}
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n, nil
	case *types.AttributeValueMemberNS:
		if v == nil {
			return 0, errNilValue
		}
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n, nil
	case *types.AttributeValueMemberBS:
		if v == nil {
			return 0, errNilValue
		}
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n, nil
	case *types.AttributeValueMemberM:
		if v == nil {
			return 0, errNilValue
		}
		n := 3
		var err error
		for name, e := range v.Value {
			size, ee := valueSize(e)
			n += len(name) + size + 1
			err = cmpOr(err, ee)
		}
		return n, err
	case *types.AttributeValueMemberL:
		if v == nil {
			return 0, errNilValue
		}
		n := 3
		var err error
		for _, e := range v.Value {
			size, ee := valueSize(e)
			n += size + 1
			err = cmpOr(err, ee)
		}
		return n, err
	case nil:
		return 0, errNilValue
	}
	return 0, fmt.Errorf("%w %T", errUnknownValue, av)
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

// numberSize is the stored size of an N value (see ItemSize). It is
// called for every number of every item, so it reads the digits in place.
func numberSize(s string) int {
	neg, lo, hi, zero, ok := numberSpan(s)
	switch {
	case !ok:
		return len(s) // DynamoDB will reject it; any estimate will do
	case zero:
		return 1
	}
	// DynamoDB stores base-100 digits aligned on the decimal point: the digit
	// at power p of ten belongs to the pair floor(p/2).
	pairs := floorDiv2(hi) - floorDiv2(lo) + 1
	n := 1 + pairs
	if neg {
		n++
	}
	return min(n, 21)
}

// numberSpan parses the N syntax as parseNumber does and returns the powers
// of ten of the lowest and highest significant digits, without copying.
func numberSpan(s string) (neg bool, lo, hi int, zero, ok bool) {
	if s == "" {
		return false, 0, 0, false, false
	}
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return false, 0, 0, false, false
		}
		exp, s = e, s[:i]
	}
	point := strings.IndexByte(s, '.')
	intLen := point
	if point < 0 {
		intLen = len(s)
	}
	first, last, n := -1, -1, 0 // positions in the digits, the point left out
	for i := 0; i < len(s); i++ {
		if i == point {
			continue
		}
		c := s[i]
		if c < '0' || c > '9' {
			return false, 0, 0, false, false
		}
		if c != '0' {
			if first < 0 {
				first = n
			}
			last = n
		}
		n++
	}
	switch {
	case n == 0:
		return false, 0, 0, false, false
	case first < 0:
		return false, 0, 0, true, true
	}
	return neg, intLen - 1 - last + exp, intLen - 1 - first + exp, false, true
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
