package load

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
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

// appendKeyPart appends the canonical encoding of one key value
// (ddbvalue.AppendKeyPart): numbers are normalized so that "1.0" and "1"
// (the same DynamoDB key) agree. A value no key can hold adds nothing.
func appendKeyPart(dst []byte, av types.AttributeValue) []byte {
	dst, _ = ddbvalue.AppendKeyPart(dst, av)
	return dst
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
	tag, val, ok := ddbvalue.KeyTag(av)
	if !ok {
		return fmt.Sprintf("%s attribute %q must be a string, number or binary, not %s", whose(), name, ddbvalue.TypeName(av)), ErrInvalidKey
	}
	if val == "" {
		return fmt.Sprintf("%s attribute %q is empty", whose(), name), ErrEmptyKey
	}
	if tag != 'N' && len(val) > maxBytes {
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
		tag, val, ok := ddbvalue.KeyTag(attrs[name])
		switch {
		case !ok:
			b.WriteString("<none>")
		case tag == 'B':
			fmt.Fprintf(&b, "0x%x", truncate(val, 64))
		case tag == 'N':
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
