package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
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
// items identical byte for byte; enc writes it (diff.AppendCanonical's
// bytes) without sorting the names of every item.
func appendLine(enc *ddbvalue.CanonicalEncoder, dst []byte, attrs map[string]types.AttributeValue) ([]byte, [32]byte) {
	dst = append(dst, `{"Item":`...)
	start := len(dst)
	dst = enc.AppendItem(dst, attrs)
	sum := sha256.Sum256(dst[start:])
	return append(dst, "}\n"...), sum
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

// The compression levels: the fastest of each. Import from S3 bills the
// uncompressed bytes, so a smaller file saves only storage and transfer,
// while compressing was an eighth of an export's CPU at the libraries'
// default levels. On the sample bookstore's 1M items (317 MiB of
// DYNAMODB_JSON) the fastest levels made zstd's files 4.6% larger (33.3
// against 31.8 MiB) for a tenth less of its CPU, and gzip's 22% larger
// (43.0 against 35.3 MiB) for a third less of its CPU.
const (
	gzipLevel = flate.BestSpeed
	zstdLevel = zstd.SpeedFastest
)

// compressor returns a writer compressing into w on up to GOMAXPROCS
// goroutines: one would be the export's bottleneck. Output depends only on
// the bytes written (no names or times in headers; segments cut at fixed
// offsets of the input), not on the number of goroutines.
func compressor(w io.Writer, compression string) (io.WriteCloser, error) {
	return compressorN(w, compression, runtime.GOMAXPROCS(0))
}

func compressorN(w io.Writer, compression string, n int) (io.WriteCloser, error) {
	switch compression {
	case CompressionGzip:
		return newParallelGzip(w, gzipLevel, n), nil
	case CompressionZstd:
		// Concurrent blocks: the input is cut into jobs of a fixed size
		// (four windows), compressed at once, into one frame. A 1 MiB
		// window instead of 8 keeps the jobs in memory small (the
		// default's made a 1M-item export's peak RSS 340 MiB).
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(max(n, 2)), zstd.WithConcurrentBlocks(true), zstd.WithWindowSize(1<<20), zstd.WithEncoderLevel(zstdLevel))
	case CompressionNone:
		// Buffered: the writer writes a line at a time.
		return flushCloser{bufio.NewWriterSize(w, 1<<20)}, nil
	}
	return nil, fmt.Errorf("export: unknown compression %q", compression)
}

// flushCloser closes by flushing its buffer.
type flushCloser struct{ *bufio.Writer }

func (f flushCloser) Close() error { return f.Flush() }

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
