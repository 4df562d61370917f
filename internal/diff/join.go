package diff

import (
	"bytes"
	"fmt"
)

// Sorted is a stream of records (EncodeRecord) in KeyOf order, such as an
// extsort.Iterator. Key and Value may be reused by the next call of Next.
type Sorted interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
}

// Pair is one key of a comparison with its records on each side. A side
// has no record when the key is absent there, and more than one when the
// key is duplicated (a mapping fault on the expected side).
type Pair struct {
	Key      []byte
	Expected []Record
	Target   []Record
}

// Join walks two sorted streams in step and calls visit once per distinct
// key, in key order. A nil stream is empty. Records are decoded; Pair and
// its records are not reused. It stops at visit's first error.
func Join(expected, target Sorted, visit func(Pair) error) error {
	e, t := newCursor(expected), newCursor(target)
	for {
		if err := e.advance(); err != nil {
			return fmt.Errorf("expected side: %w", err)
		}
		if err := t.advance(); err != nil {
			return fmt.Errorf("target side: %w", err)
		}
		if !e.ok && !t.ok {
			return nil
		}
		var key []byte
		switch {
		case !t.ok:
			key = e.key
		case !e.ok:
			key = t.key
		case bytes.Compare(e.key, t.key) <= 0:
			key = e.key
		default:
			key = t.key
		}
		key = bytes.Clone(key)
		p := Pair{Key: key}
		var err error
		if p.Expected, err = e.take(key); err != nil {
			return fmt.Errorf("expected side: %w", err)
		}
		if p.Target, err = t.take(key); err != nil {
			return fmt.Errorf("target side: %w", err)
		}
		if err := visit(p); err != nil {
			return err
		}
	}
}

// cursor is a one-record look-ahead over a Sorted stream.
type cursor struct {
	s       Sorted
	key     []byte
	val     []byte
	ok      bool // key/val hold an unconsumed record
	done    bool
	lastKey []byte
}

func newCursor(s Sorted) *cursor { return &cursor{s: s, done: s == nil} }

func (c *cursor) advance() error {
	if c.ok || c.done {
		return nil
	}
	if !c.s.Next() {
		c.done = true
		return c.s.Err()
	}
	c.key, c.val, c.ok = c.s.Key(), c.s.Value(), true
	if c.lastKey != nil && bytes.Compare(c.key, c.lastKey) < 0 {
		return fmt.Errorf("diff: stream not sorted: %q after %q", c.key, c.lastKey)
	}
	c.lastKey = append(c.lastKey[:0], c.key...)
	return nil
}

// take decodes and consumes every record with the given key.
func (c *cursor) take(key []byte) ([]Record, error) {
	var out []Record
	for c.ok && bytes.Equal(c.key, key) {
		r, err := DecodeRecord(c.val)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", displayKey(key), err)
		}
		out = append(out, r)
		c.ok = false
		if err := c.advance(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// displayKey prints an encoded key for a message.
func displayKey(key []byte) string {
	k, err := DecodeKey(key)
	if err != nil {
		return fmt.Sprintf("%q", key)
	}
	return k.String()
}
