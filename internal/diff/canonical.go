package diff

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// appendCanonicalMap writes the canonical JSON of a map of attributes, the
// bytes json.Marshal(transform.JSONItem(canonicalItem(m))) gives, without
// building the intermediate maps: hashing every item of a table is the
// hot loop of verify.
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
		dst = appendJSONString(dst, k)
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
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

func appendCanonicalValue(dst []byte, av types.AttributeValue) []byte {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return append(appendJSONString(appendTagged(dst, "S"), v.Value), '}')
	case *types.AttributeValueMemberN:
		return append(appendJSONString(appendTagged(dst, "N"), canonicalNumber(v.Value)), '}')
	case *types.AttributeValueMemberB:
		return append(appendJSONString(appendTagged(dst, "B"), base64.StdEncoding.EncodeToString(v.Value)), '}')
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
		return append(appendStringList(appendTagged(dst, "NS"), setOf(v.Value, canonicalNumber)), '}')
	case *types.AttributeValueMemberBS:
		set := setOf(bytesToStrings(v.Value), nil)
		enc := make([]string, len(set))
		for i, e := range set {
			enc[i] = base64.StdEncoding.EncodeToString([]byte(e))
		}
		slices.Sort(enc) // transform.JSONValue sorts the base64 text
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
	// What transform.JSONValue does for an unknown member.
	b, _ := json.Marshal(map[string]any{"?": fmt.Sprintf("%T", av)})
	return append(dst, b...)
}

// appendJSONString writes s exactly as encoding/json does: HTML-safe
// escaping (<, >, & as \u003c, \u003e, \u0026), U+2028 and U+2029
// escaped, invalid UTF-8 replaced by \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
