package load

import (
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
// key and, if the index has one, its sort key). Index writes are counted at
// the full item size, which is exact for projection ALL and an upper bound
// otherwise.
func ItemWriteUnits(item map[string]types.AttributeValue, indexes []Index) int {
	return WriteUnits(ItemSize(item)) * (1 + indexesOf(item, indexes))
}

// indexesOf counts the indexes an item appears in.
func indexesOf(item map[string]types.AttributeValue, indexes []Index) int {
	n := 0
	for _, ix := range indexes {
		if _, ok := item[ix.PartitionKey]; !ok {
			continue
		}
		if ix.SortKey != "" {
			if _, ok := item[ix.SortKey]; !ok {
				continue
			}
		}
		n++
	}
	return n
}
