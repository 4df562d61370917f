package contract

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// Resolved returns o with its source row key formatted, holding on to no
// row (what a writer keeps of an item it may report later).
func (o Origin) Resolved() Origin {
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
	// under load.Config.OnDuplicate "skip". It is called from the writer's goroutines,
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
	Err    error // a sentinel of package load, or DynamoDB's API error
}

// Error renders the error as "load: <origin> [<key>]: <reason>".
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

// Unwrap returns Err.
func (e *ItemError) Unwrap() error { return e.Err }
