package diff

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Record is one item on one side of a comparison.
type Record struct {
	// Entity is the mapping entity that produced an expected item, or the
	// value of the entity attribute of a target item ("" when it has none).
	Entity string
	// Origin says where an expected item came from, e.g.
	// "public.customers customer_id=42"; "" for target items.
	Origin string
	Attrs  map[string]types.AttributeValue
}

// Value type tags of the record encoding.
const (
	tagS byte = iota + 1
	tagN
	tagB
	tagBOOL
	tagNULL
	tagSS
	tagNS
	tagBS
	tagL
	tagM
)

// AppendRecord appends a compact, lossless binary encoding of r to dst, for
// spilling records to disk: uvarint-length-prefixed strings, a one-byte
// type tag per value, nested values inline. Map order is not preserved
// (maps have none).
func AppendRecord(dst []byte, r Record) []byte {
	dst = appendString(dst, r.Entity)
	dst = appendString(dst, r.Origin)
	return appendMap(dst, r.Attrs)
}

// EncodeRecord is AppendRecord to a new slice.
func EncodeRecord(r Record) []byte { return AppendRecord(nil, r) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendMap(dst []byte, m map[string]types.AttributeValue) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for k, v := range m {
		dst = appendString(dst, k)
		dst = appendValue(dst, v)
	}
	return dst
}

func appendStrings(dst []byte, tag byte, ss []string) []byte {
	dst = append(dst, tag)
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

func appendValue(dst []byte, av types.AttributeValue) []byte {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return appendString(append(dst, tagS), v.Value)
	case *types.AttributeValueMemberN:
		return appendString(append(dst, tagN), v.Value)
	case *types.AttributeValueMemberB:
		return appendString(append(dst, tagB), string(v.Value))
	case *types.AttributeValueMemberBOOL:
		b := byte(0)
		if v.Value {
			b = 1
		}
		return append(dst, tagBOOL, b)
	case *types.AttributeValueMemberNULL:
		return append(dst, tagNULL)
	case *types.AttributeValueMemberSS:
		return appendStrings(dst, tagSS, v.Value)
	case *types.AttributeValueMemberNS:
		return appendStrings(dst, tagNS, v.Value)
	case *types.AttributeValueMemberBS:
		return appendStrings(dst, tagBS, bytesToStrings(v.Value))
	case *types.AttributeValueMemberL:
		dst = append(dst, tagL)
		dst = binary.AppendUvarint(dst, uint64(len(v.Value)))
		for _, e := range v.Value {
			dst = appendValue(dst, e)
		}
		return dst
	case *types.AttributeValueMemberM:
		return appendMap(append(dst, tagM), v.Value)
	}
	// Unknown union members cannot come from DynamoDB or transform; keep
	// the record decodable.
	return append(dst, tagNULL)
}

var errCorrupt = errors.New("diff: corrupt record")

// DecodeRecord reverses EncodeRecord: it decodes whatever EncodeRecord
// encoded, at any nesting depth. An error (a damaged spill file) names the
// record's origin and entity when those could be read.
func DecodeRecord(b []byte) (Record, error) {
	d := decoder{b: b}
	r := Record{Entity: d.string(), Origin: d.string()}
	if d.err != nil {
		return r, d.err
	}
	r.Attrs = d.mapValue()
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		origin := r.Origin
		if origin == "" {
			origin = "a target item"
		}
		return r, fmt.Errorf("record of %s (entity %q): %w", origin, r.Entity, d.err)
	}
	return r, nil
}

// decoder reads a record. Nesting needs no bound of its own: each level
// takes at least two bytes of the record, so recursion is bounded by its
// length, and EncodeRecord writes any depth it is given.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)) {
		// A count or length can never exceed the bytes left: each element
		// takes at least one.
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > len(d.b) {
		d.err = errCorrupt
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) strings() []string {
	n := d.uvarint()
	out := make([]string, 0, n)
	for range n {
		if d.err != nil {
			return nil
		}
		out = append(out, d.string())
	}
	return out
}

func (d *decoder) mapValue() map[string]types.AttributeValue {
	n := d.uvarint()
	m := make(map[string]types.AttributeValue, n)
	for range n {
		if d.err != nil {
			return nil
		}
		k := d.string()
		m[k] = d.value()
	}
	return m
}

func (d *decoder) value() types.AttributeValue {
	if d.err != nil {
		return nil
	}
	if len(d.b) == 0 {
		d.err = errCorrupt
		return nil
	}
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case tagS:
		return &types.AttributeValueMemberS{Value: d.string()}
	case tagN:
		return &types.AttributeValueMemberN{Value: d.string()}
	case tagB:
		return &types.AttributeValueMemberB{Value: []byte(d.string())}
	case tagBOOL:
		if len(d.b) == 0 {
			d.err = errCorrupt
			return nil
		}
		v := d.b[0] == 1
		d.b = d.b[1:]
		return &types.AttributeValueMemberBOOL{Value: v}
	case tagNULL:
		return &types.AttributeValueMemberNULL{Value: true}
	case tagSS:
		return &types.AttributeValueMemberSS{Value: d.strings()}
	case tagNS:
		return &types.AttributeValueMemberNS{Value: d.strings()}
	case tagBS:
		ss := d.strings()
		bs := make([][]byte, len(ss))
		for i, s := range ss {
			bs[i] = []byte(s)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case tagL:
		n := d.uvarint()
		l := make([]types.AttributeValue, 0, n)
		for range n {
			if d.err != nil {
				return nil
			}
			l = append(l, d.value())
		}
		return &types.AttributeValueMemberL{Value: l}
	case tagM:
		return &types.AttributeValueMemberM{Value: d.mapValue()}
	}
	d.err = fmt.Errorf("%w: unknown tag %d", errCorrupt, tag)
	return nil
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
