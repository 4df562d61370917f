package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/diff"
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

// decodeLine reads one line of a DYNAMODB_JSON file, {"Item":{...}}
// (ddbvalue.DecodeItem reads the item).
func decodeLine(line []byte) (map[string]types.AttributeValue, error) {
	var l struct {
		Item map[string]any `json:"Item"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	if l.Item == nil {
		return nil, errors.New(`not a DynamoDB JSON line: no "Item" object`)
	}
	return ddbvalue.DecodeItem(l.Item)
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
