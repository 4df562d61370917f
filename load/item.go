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

// Sentinel errors. Row errors ([*ItemError]) wrap one of the first six, or
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

// Origin says where an item came from, for error messages and duplicate
// reports.
type Origin struct {
	Entity    string // mapping entity, e.g. "customer"
	Table     string // source table, e.g. "customers"
	SourceKey string // source row key, e.g. "customer_id=42"
	// Row gives the source row key when SourceKey is empty, for a caller
	// that would rather not format a key for every row when almost none
	// is ever reported. See Key.
	Row interface{ SourceKey() string }
}

// Key is the source row key: SourceKey, or else what Row gives.
func (o Origin) Key() string {
	if o.SourceKey == "" && o.Row != nil {
		return o.Row.SourceKey()
	}
	return o.SourceKey
}

// resolved returns o with its source row key formatted, holding on to no
// row.
func (o Origin) resolved() Origin {
	o.SourceKey, o.Row = o.Key(), nil
	return o
}

// String renders o as "customers row customer_id=42 (entity customer)".
func (o Origin) String() string {
	var b strings.Builder
	key := o.Key()
	switch {
	case o.Table != "" && key != "":
		fmt.Fprintf(&b, "%s row %s", o.Table, key)
	case o.Table != "":
		fmt.Fprintf(&b, "%s row", o.Table)
	case key != "":
		fmt.Fprintf(&b, "row %s", key)
	}
	if o.Entity != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(entity %s)", o.Entity)
	}
	if b.Len() == 0 {
		return "item of unknown origin"
	}
	return b.String()
}

// Item is one DynamoDB item to put.
type Item struct {
	Attrs  map[string]types.AttributeValue
	Origin Origin
	// Ack, if not nil, is called exactly once after DynamoDB acknowledged the
	// item (not merely after it was sent), or at once for a duplicate skipped
	// under OnDuplicate "skip". It is called from the writer's goroutines,
	// concurrently with other Acks, and must be quick.
	Ack func()
	// Fail, if not nil, is called exactly once, as soon as the writer
	// refuses the item (a key, size or duplicate check, or DynamoDB's
	// validation), with the same error Write reports. Every accepted item
	// thus settles exactly once, by Ack or by Fail, unless Write itself
	// fails first. Same calling rules as Ack.
	Fail func(*ItemError)
	// Delete removes the item whose primary key Attrs holds, instead of
	// putting Attrs; only the key attributes are sent.
	Delete bool
}

// ItemError is a row error: an item that was not written, and why.
type ItemError struct {
	Origin Origin
	Key    string // the item's primary key, e.g. `PK="CUSTOMER#42" SK="PROFILE"`; may be empty
	Reason string
	Err    error // a sentinel of this package or DynamoDB's API error
}

func (e *ItemError) Error() string {
	var b strings.Builder
	b.WriteString("load: ")
	b.WriteString(e.Origin.String())
	if e.Key != "" {
		b.WriteString(" [")
		b.WriteString(e.Key)
		b.WriteString("]")
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

func (e *ItemError) Unwrap() error { return e.Err }

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
