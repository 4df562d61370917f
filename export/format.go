package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pgdynamo/migrate/diff"
)

// Values of Config.Compression, and the names ImportTable gives them.
const (
	CompressionGzip = "gzip"
	CompressionZstd = "zstd"
	CompressionNone = "none"
)

// importCompression is ImportTable's InputCompressionType for each.
var importCompression = map[string]string{CompressionGzip: "GZIP", CompressionZstd: "ZSTD", CompressionNone: "NONE"}

// extension is the file name suffix for each compression.
var extension = map[string]string{CompressionGzip: ".json.gz", CompressionZstd: ".json.zst", CompressionNone: ".json"}

// appendLine appends an item's line of a DYNAMODB_JSON file,
// {"Item":{...}} and a newline, and returns it with the SHA-256 of the
// item's canonical JSON (diff.Hash, what verify sums). The canonical form
// (attributes and sets sorted, numbers canonical) makes files of the same
// items identical byte for byte.
func appendLine(dst []byte, attrs map[string]types.AttributeValue) ([]byte, [32]byte) {
	c, _ := diff.Canonical(attrs) // never fails
	dst = append(dst, `{"Item":`...)
	dst = append(dst, c...)
	dst = append(dst, "}\n"...)
	return dst, sha256.Sum256(c)
}

// decodeLine reads one line of a DYNAMODB_JSON file.
func decodeLine(line []byte) (map[string]types.AttributeValue, error) {
	var l struct {
		Item map[string]jsonValue `json:"Item"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	if l.Item == nil {
		return nil, errors.New(`not a DynamoDB JSON line: no "Item" object`)
	}
	out := make(map[string]types.AttributeValue, len(l.Item))
	for k, v := range l.Item {
		out[k] = v.av
	}
	return out, nil
}

// jsonValue decodes one attribute value with its type tag.
type jsonValue struct{ av types.AttributeValue }

func (j *jsonValue) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if len(m) != 1 {
		return fmt.Errorf("an attribute value has exactly one type tag, not %d", len(m))
	}
	for tag, raw := range m {
		var err error
		j.av, err = decodeValue(tag, raw)
		return err
	}
	return nil
}

func decodeValue(tag string, raw json.RawMessage) (types.AttributeValue, error) {
	switch tag {
	case "S":
		var s string
		err := json.Unmarshal(raw, &s)
		return &types.AttributeValueMemberS{Value: s}, err
	case "N":
		var s string
		err := json.Unmarshal(raw, &s)
		return &types.AttributeValueMemberN{Value: s}, err
	case "B":
		var b []byte // encoding/json decodes base64
		err := json.Unmarshal(raw, &b)
		return &types.AttributeValueMemberB{Value: b}, err
	case "BOOL":
		var b bool
		err := json.Unmarshal(raw, &b)
		return &types.AttributeValueMemberBOOL{Value: b}, err
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case "SS":
		var s []string
		err := json.Unmarshal(raw, &s)
		return &types.AttributeValueMemberSS{Value: s}, err
	case "NS":
		var s []string
		err := json.Unmarshal(raw, &s)
		return &types.AttributeValueMemberNS{Value: s}, err
	case "BS":
		var s []string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		bs := make([][]byte, len(s))
		for i, e := range s {
			b, err := base64.StdEncoding.DecodeString(e)
			if err != nil {
				return nil, err
			}
			bs[i] = b
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	case "L":
		var l []jsonValue
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = e.av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case "M":
		var m map[string]jsonValue
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			out[k] = e.av
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return nil, fmt.Errorf("unknown type tag %q", tag)
}

// compressor returns a writer compressing into w. Output depends only on
// the bytes written: no names or times in headers, one encoder goroutine.
func compressor(w io.Writer, compression string) (io.WriteCloser, error) {
	switch compression {
	case CompressionGzip:
		return gzip.NewWriterLevel(w, gzip.DefaultCompression)
	case CompressionZstd:
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
	case CompressionNone:
		return nopCloser{w}, nil
	}
	return nil, fmt.Errorf("export: unknown compression %q", compression)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// decompressor reads the uncompressed bytes of a file.
func decompressor(r io.Reader, compression string) (io.ReadCloser, error) {
	switch compression {
	case CompressionGzip:
		return gzip.NewReader(r)
	case CompressionZstd:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	case CompressionNone:
		return io.NopCloser(r), nil
	}
	return nil, fmt.Errorf("export: unknown compression %q", compression)
}

// trimLine drops the newline (and a carriage return) at the end of a line.
func trimLine(b []byte) []byte {
	return bytes.TrimRight(b, "\r\n")
}
