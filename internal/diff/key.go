package diff

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// ErrNoKey is returned by KeyOf for an item that lacks a key attribute or
// whose key attribute is not a string, number or binary.
var ErrNoKey = errors.New("diff: missing or invalid key attribute")

// KeyOf encodes an item's primary key (sortKey may be "" for a table
// without a sort key). Each part is ddbvalue.AppendKeyPart's: a type tag
// (S, N or B), the value with 0x00 escaped as 0x00 0xFF, and the
// terminator 0x00 0x01, so that
//
//   - byte order is partition key order, then sort key order (bytes of the
//     UTF-8 text for strings; numbers are ordered by their canonical text,
//     which is consistent, not numeric);
//   - one partition key's items are adjacent (see PartitionOf);
//   - equal DynamoDB keys give equal bytes ("1.0" and "1" are one number).
//
// The encoding is stable: InSample hashes it.
func KeyOf(attrs map[string]types.AttributeValue, partitionKey, sortKey string) ([]byte, error) {
	b, err := appendKeyPart(nil, attrs[partitionKey])
	if err != nil {
		return nil, fmt.Errorf("%w %s", err, partitionKey)
	}
	if sortKey != "" {
		if b, err = appendKeyPart(b, attrs[sortKey]); err != nil {
			return nil, fmt.Errorf("%w %s", err, sortKey)
		}
	}
	return b, nil
}

func appendKeyPart(dst []byte, av types.AttributeValue) ([]byte, error) {
	dst, ok := ddbvalue.AppendKeyPart(dst, av)
	if !ok {
		return nil, ErrNoKey
	}
	return dst, nil
}

// Key is a decoded key for people: values as text (numbers canonical,
// binary as base64).
type Key struct {
	PK, SK string
}

// String renders the key as `CUSTOMER#42 | PROFILE`.
func (k Key) String() string {
	if k.SK == "" {
		return k.PK
	}
	return k.PK + " | " + k.SK
}

// DecodeKey turns KeyOf's bytes back into text.
func DecodeKey(key []byte) (Key, error) {
	pk, rest, err := decodePart(key)
	if err != nil {
		return Key{}, err
	}
	k := Key{PK: pk}
	if len(rest) > 0 {
		if k.SK, rest, err = decodePart(rest); err != nil {
			return Key{}, err
		}
	}
	if len(rest) > 0 {
		return Key{}, fmt.Errorf("diff: %d trailing bytes in key", len(rest))
	}
	return k, nil
}

func decodePart(b []byte) (string, []byte, error) {
	if len(b) < 3 {
		return "", nil, errors.New("diff: truncated key")
	}
	tag := b[0]
	var val []byte
	for i := 1; i < len(b); i++ {
		if b[i] != 0 {
			val = append(val, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 0xFF:
			val = append(val, 0)
			i++
		case 1:
			if tag == 'B' {
				return base64.StdEncoding.EncodeToString(val), b[i+2:], nil
			}
			return string(val), b[i+2:], nil
		default:
			return "", nil, errors.New("diff: bad escape in key")
		}
	}
	return "", nil, errors.New("diff: unterminated key part")
}

// PartitionOf returns the prefix of an encoded key that holds the partition
// key: keys with equal prefixes are in one item collection.
func PartitionOf(key []byte) []byte {
	for i := 1; i+1 < len(key); i++ {
		if key[i] == 0 {
			if key[i+1] == 1 {
				return key[:i+2]
			}
			i++ // escaped 0x00
		}
	}
	return key
}

// SamePartition reports whether two encoded keys share a partition key.
func SamePartition(a, b []byte) bool { return bytes.Equal(PartitionOf(a), PartitionOf(b)) }
