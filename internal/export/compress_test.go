package export

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// exportLike returns n bytes of DYNAMODB_JSON-like lines: compressible,
// with repeats further back than deflate's window, as exports have.
func exportLike(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"Item":{"PK":{"S":"CUSTOMER#%012d"},"SK":{"S":"ORDER#%08d"},"total":{"N":"%d.%02d"},"city":{"S":"city-%d"}}}`+"\n",
			r.IntN(1_000_000), i, r.IntN(1000), r.IntN(100), r.IntN(50))
	}
	return b.Bytes()[:n]
}

// compressWith writes data in pieces of random sizes (seeded) through the
// compressor with n goroutines.
func compressWith(t *testing.T, comp string, n int, data []byte, seed uint64) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := compressorN(&out, comp, n)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 2))
	for p := data; len(p) > 0; {
		k := min(len(p), 1+r.IntN(300_000))
		if _, err := zw.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestCompressorParallel checks the parallel compressors: what they write
// decompresses to the input (gzip with the standard library's reader, as
// one member), and the bytes do not depend on the number of goroutines
// nor on how the input was cut into Write calls, so that an export and
// its resumed twin stay identical byte for byte.
func TestCompressorParallel(t *testing.T) {
	t.Parallel()
	sizes := []int{0, 1, 1000, gzipWindow - 1, gzipSegment, gzipSegment + 1, 3*gzipSegment + gzipSegment/2, 9 * gzipSegment}
	for _, comp := range []string{CompressionGzip, CompressionZstd} {
		for _, size := range sizes {
			t.Run(fmt.Sprintf("%s/%d", comp, size), func(t *testing.T) {
				t.Parallel()
				data := exportLike(size, uint64(size))
				first := compressWith(t, comp, 1, data, 1)
				for _, n := range []int{2, 3, 8} {
					if got := compressWith(t, comp, n, data, uint64(n)); !bytes.Equal(got, first) {
						t.Fatalf("%d goroutines, other writes: %d bytes differ from 1 goroutine's %d", n, len(got), len(first))
					}
				}
				var back []byte
				if comp == CompressionGzip {
					br := bytes.NewReader(first) // a ByteReader: the reader takes no more than it needs
					zr, err := stdgzip.NewReader(br)
					if err != nil {
						t.Fatal(err)
					}
					zr.Multistream(false)
					if back, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
					if br.Len() != 0 {
						t.Fatalf("%d bytes after the first gzip member", br.Len())
					}
				} else {
					zr, err := decompressor(bytes.NewReader(first), comp)
					if err != nil {
						t.Fatal(err)
					}
					if back, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(back, data) {
					t.Fatalf("decompressed %d bytes, not the %d written", len(back), len(data))
				}
				if size >= gzipSegment && len(first) > len(data)/3 {
					t.Fatalf("%d bytes compressed to %d: not compressing", len(data), len(first))
				}
			})
		}
	}
}
