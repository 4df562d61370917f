package load

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB limits the writer enforces before sending.
const (
	MaxItemSize          = 400 * 1024 // bytes, by ItemSize
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
	MaxBatchItems        = 25         // requests per BatchWriteItem call
	MaxBatchBytes        = 16_000_000 // request body bytes per call (16 MB, counted conservatively)
)

// Sentinel errors. Row errors ([*contract.ItemError]) wrap one of the first six, or
// the API error DynamoDB returned for the item.
var (
	ErrItemTooLarge = errors.New("load: item too large")
	ErrKeyTooLong   = errors.New("load: key too long")
	ErrEmptyKey     = errors.New("load: empty key value")
	ErrInvalidKey   = errors.New("load: missing or invalid key attribute")
	ErrDuplicateKey = errors.New("load: duplicate key")
	ErrInvalidItem  = errors.New("load: invalid item")

	// ErrBatchTimeout is wrapped by the error Write returns when a batch could
	// not be written within Config.MaxBatchElapsed.
	ErrBatchTimeout = errors.New("load: batch not written within the retry time limit")
	// ErrUnreachable is wrapped when DynamoDB could not be reached at all.
	ErrUnreachable = errors.New("load: DynamoDB endpoint unreachable")
	// ErrTooManyItemErrors is wrapped when more row errors occurred than
	// Config.MaxItemErrors allows.
	ErrTooManyItemErrors = errors.New("load: too many item errors")
)

// keyHashNumber etc. are the scalar type tags used in canonical keys.
const (
	tagS = 'S'
	tagN = 'N'
	tagB = 'B'
)

// scalar returns the type tag and the raw value of a key-capable attribute.
func scalar(av types.AttributeValue) (tag byte, val string, ok bool) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return tagS, v.Value, true
	case *types.AttributeValueMemberN:
		return tagN, v.Value, true
	case *types.AttributeValueMemberB:
		return tagB, string(v.Value), true
	}
	return 0, "", false
}

// appendKeyPart appends a length-prefixed canonical encoding of one key value.
// Numbers are normalized so that "1.0" and "1" (the same DynamoDB key) agree.
func appendKeyPart(dst []byte, tag byte, val string) []byte {
	if tag == tagN {
		if c, ok := canonicalNumber(val); ok {
			val = c
		}
	}
	dst = append(dst, tag)
	dst = fmt.Appendf(dst, "%d:", len(val))
	return append(dst, val...)
}

// checkKeyAttr describes a key attribute problem, or returns a nil
// error. The role ("partition key", or with index "index GSI1 partition
// key") is put together only for a message.
func checkKeyAttr(attrs map[string]types.AttributeValue, name, index, role string, maxBytes int, required bool) (reason string, err error) {
	whose := func() string {
		if index != "" {
			return "index " + index + " " + role
		}
		return role
	}
	av, ok := attrs[name]
	if !ok || av == nil {
		if required {
			return fmt.Sprintf("%s attribute %q is missing", whose(), name), ErrInvalidKey
		}
		return "", nil
	}
	tag, val, ok := scalar(av)
	if !ok {
		return fmt.Sprintf("%s attribute %q must be a string, number or binary, not %s", whose(), name, typeName(av)), ErrInvalidKey
	}
	if val == "" {
		return fmt.Sprintf("%s attribute %q is empty", whose(), name), ErrEmptyKey
	}
	if tag != tagN && len(val) > maxBytes {
		return fmt.Sprintf("%s attribute %q is %d bytes, over DynamoDB's %d-byte limit", whose(), name, len(val), maxBytes), ErrKeyTooLong
	}
	return "", nil
}

// displayKey renders the primary key for messages: PK="CUSTOMER#42" SK="X".
func displayKey(attrs map[string]types.AttributeValue, pk, sk string) string {
	var b strings.Builder
	for i, name := range []string{pk, sk} {
		if name == "" {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteByte('=')
		tag, val, ok := scalar(attrs[name])
		switch {
		case !ok:
			b.WriteString("<none>")
		case tag == tagB:
			fmt.Fprintf(&b, "0x%x", truncate(val, 64))
		case tag == tagN:
			b.WriteString(truncate(val, 64))
		default:
			fmt.Fprintf(&b, "%q", truncate(val, 128))
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func typeName(av types.AttributeValue) string {
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

// nilAttr returns the path of the first attribute value that is nil, at any
// depth, or "". The SDK cannot serialize such an item.
func nilAttr(attrs map[string]types.AttributeValue) string {
	for name, av := range attrs {
		if p := nilIn(name, av); p != "" {
			return p
		}
	}
	return ""
}

func nilIn(path string, av types.AttributeValue) string {
	if av == nil {
		return path
	}
	if rv := reflect.ValueOf(av); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return path
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		for name, e := range v.Value {
			if p := nilIn(path+"."+name, e); p != "" {
				return p
			}
		}
	case *types.AttributeValueMemberL:
		for i, e := range v.Value {
			if p := nilIn(fmt.Sprintf("%s[%d]", path, i), e); p != "" {
				return p
			}
		}
	}
	return ""
}
