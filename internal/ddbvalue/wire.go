package ddbvalue

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The wire form: DynamoDB JSON as the SDK's serializer writes it in a
// request body, byte for byte in the escaping of strings (see
// AppendString); only the order of map keys may differ, as it does
// between two calls of the SDK. A writer encodes each item once, in the
// same walk that measures it.

// AppendItem appends an item as a JSON object of attribute values and
// returns it with the item's size (ItemSize) and the first value it could
// not encode.
func AppendItem(dst []byte, item map[string]types.AttributeValue) ([]byte, int, error) {
	return appendAttrMap(dst, item)
}

// appendAttrMap appends a JSON object of attribute values and returns the
// DynamoDB size of its attributes (names included).
func appendAttrMap(dst []byte, m map[string]types.AttributeValue) ([]byte, int, error) {
	dst = append(dst, '{')
	size := 0
	var err error
	first := true
	for name, av := range m {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, name)
		dst = append(dst, ':')
		var n int
		var e error
		dst, n, e = AppendValue(dst, av)
		err = firstErr(err, e)
		size += len(name) + n
	}
	return append(dst, '}'), size, err
}

// AppendValue appends one attribute value in DynamoDB JSON, as the SDK
// sends it, and returns its size (see ValueSize) and the first value it
// could not encode (ErrNilValue, ErrUnknownValue).
func AppendValue(dst []byte, av types.AttributeValue) ([]byte, int, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"S":`...)
		dst = AppendString(dst, v.Value)
		return append(dst, '}'), len(v.Value), nil
	case *types.AttributeValueMemberN:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"N":`...)
		dst = AppendString(dst, v.Value)
		return append(dst, '}'), NumberSize(v.Value), nil
	case *types.AttributeValueMemberB:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"B":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.Value)
		return append(dst, `"}`...), len(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"BOOL":`...)
		dst = strconv.AppendBool(dst, v.Value)
		return append(dst, '}'), 1, nil
	case *types.AttributeValueMemberNULL:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"NULL":`...)
		dst = strconv.AppendBool(dst, v.Value)
		return append(dst, '}'), 1, nil
	case *types.AttributeValueMemberSS:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"SS":[`...)
		n := 0
		for i, s := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, s)
			n += len(s)
		}
		return append(dst, "]}"...), n, nil
	case *types.AttributeValueMemberNS:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"NS":[`...)
		n := 0
		for i, s := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, s)
			n += NumberSize(s)
		}
		return append(dst, "]}"...), n, nil
	case *types.AttributeValueMemberBS:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"BS":[`...)
		n := 0
		for i, b := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, b)
			dst = append(dst, '"')
			n += len(b)
		}
		return append(dst, "]}"...), n, nil
	case *types.AttributeValueMemberM:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"M":`...)
		dst, n, err := appendAttrMap(dst, v.Value)
		// A map is 3 bytes plus, per element, 1 byte, its name and its value.
		return append(dst, '}'), 3 + n + len(v.Value), err
	case *types.AttributeValueMemberL:
		if v == nil {
			return dst, 0, ErrNilValue
		}
		dst = append(dst, `{"L":[`...)
		n := 3
		var err error
		for i, e := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			var en int
			var ee error
			dst, en, ee = AppendValue(dst, e)
			err = firstErr(err, ee)
			n += en + 1
		}
		return append(dst, "]}"...), n, err
	case nil:
		return dst, 0, ErrNilValue
	}
	return dst, 0, fmt.Errorf("%w %T", ErrUnknownValue, av)
}

// AppendString appends s as a JSON string, escaped as the SDK's
// serializer escapes it: \" \\ \n \r \t, other control bytes and DEL as
// \u00XX, U+2028 and U+2029 as \u2028 and \u2029, and each byte of
// invalid UTF-8 as U+FFFD.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// appendStdString appends s exactly as encoding/json does (the canonical
// form's escaping): HTML-safe (<, >, & as \u003c, \u003e, \u0026), \b
// and \f as such, DEL as it is, U+2028 and U+2029 escaped, and each byte
// of invalid UTF-8 as the escape \ufffd.
func appendStdString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// appendString is AppendString (std false) or appendStdString (std true).
func appendString(dst []byte, s string, std bool) []byte {
	safe, invalid := &sdkSafe, "\uFFFD"
	if std {
		safe, invalid = &stdSafe, `\ufffd`
	}
	dst = append(dst, '"')
	// Most strings need no escaping: find the first byte that might, a
	// word at a time, and copy what comes before it in one piece.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&hiBits|hasLess(w, 0x20)|hasByte(w, '"')|hasByte(w, '\\')|hasByte(w, 0x7F) != 0 ||
			std && hasByte(w, '<')|hasByte(w, '>')|hasByte(w, '&') != 0 {
			break
		}
	}
	for ; i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]]; i++ {
	}
	if i == len(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst = append(dst, s[:i]...)
	start := i
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case std && c == '\b':
				dst = append(dst, '\\', 'b')
			case std && c == '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, invalid...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Word-at-a-time tests (the bit tricks of "Bit Twiddling Hacks"): hasLess
// sets a byte's high bit where that byte of w is below n (n <= 128),
// hasByte where it equals b; hiBits are the high bits of every byte.
const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

func hasLess(w, n uint64) uint64 { return (w - loBits*n) & ^w & hiBits }
func hasByte(w, b uint64) uint64 { return hasLess(w^(loBits*b), 1) }

// sdkSafe and stdSafe mark the ASCII bytes a JSON string holds as they
// are, in the SDK's escaping and in encoding/json's.
var sdkSafe, stdSafe = func() (sdk, std [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		sdk[c] = c != '"' && c != '\\' && c != 0x7F
		std[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return sdk, std
}()

const hexDigits = "0123456789abcdef"
