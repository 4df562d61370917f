package export

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// gzipSegment is the uncompressed size of the segments a parallelGzip
// deflates separately; a segment loses only the matches that would reach
// more than 32 KiB behind its start, so the output is a fraction of a
// percent larger than one deflate stream's.
const gzipSegment = 1 << 20

// gzipWindow is how much of the segment before a segment primes its
// encoder: deflate's window.
const gzipWindow = 32 << 10

// parallelGzip writes one gzip member (RFC 1952) whose deflate stream is
// compressed on up to n goroutines, the way github.com/klauspost/pgzip
// does (a module this project does not depend on): the input is cut into
// segments of gzipSegment bytes; each is deflated on its own, its encoder
// primed with the 32 KiB before it, and ends with a sync flush (a
// byte-aligned empty stored block, not final), so that the segments'
// outputs, written in order, form one deflate stream, which the last
// segment ends. The cuts
// fall at fixed offsets of the input, so the output depends only on the
// bytes written, not on how Write was called nor on n. Not safe for
// concurrent use.
type parallelGzip struct {
	w     io.Writer
	level int
	n     int

	seg    []byte     // the segment being filled
	window []byte     // the last gzipWindow bytes before seg
	queue  []*gzipJob // segments being compressed, in order
	crc    uint32     // of the input so far
	size   uint32     // input bytes modulo 2^32 (ISIZE)
	err    error      // the first write error, sticky
	pool   *sync.Pool // of *flate.Writer
	bufs   *sync.Pool // of segment buffers
	header bool       // written
	closed bool
}

// gzipJob is one segment on its way through a goroutine.
type gzipJob struct {
	in   []byte
	out  bytes.Buffer
	err  error
	done chan struct{}
}

func newParallelGzip(w io.Writer, level, n int) *parallelGzip {
	z := &parallelGzip{w: w, level: level, n: max(n, 1)}
	z.pool = &sync.Pool{New: func() any {
		fw, _ := flate.NewWriter(io.Discard, level) // level is checked by newParallelGzip's callers
		return fw
	}}
	z.bufs = &sync.Pool{New: func() any { return make([]byte, 0, gzipSegment) }}
	z.seg = z.bufs.Get().([]byte)
	return z
}

// Write takes p into segments, starting a segment's compression when it is
// full; it writes the compressed segments that are done, in order, and
// waits for the oldest when n are under way.
func (z *parallelGzip) Write(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n := len(p)
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.size += uint32(n)
	for len(p) > 0 {
		k := min(len(p), gzipSegment-len(z.seg))
		z.seg = append(z.seg, p[:k]...)
		p = p[k:]
		if len(z.seg) == gzipSegment {
			if err := z.start(false); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// start compresses the current segment on a goroutine (final: the last,
// ended with deflate's final block).
func (z *parallelGzip) start(final bool) error {
	for len(z.queue) >= z.n {
		if err := z.writeOldest(); err != nil {
			return err
		}
	}
	job := &gzipJob{in: z.seg, done: make(chan struct{})}
	dict := z.window
	go func() {
		defer close(job.done)
		fw := z.pool.Get().(*flate.Writer)
		defer z.pool.Put(fw)
		fw.ResetDict(&job.out, dict)
		if _, err := fw.Write(job.in); err != nil {
			job.err = err
			return
		}
		if final {
			job.err = fw.Close()
		} else {
			job.err = fw.Flush()
		}
	}()
	z.queue = append(z.queue, job)
	// The next segment's window, a copy: the job reads this one meanwhile.
	next := make([]byte, 0, gzipWindow)
	if len(z.seg) < gzipWindow {
		next = append(next, z.window[max(0, len(z.window)-(gzipWindow-len(z.seg))):]...)
	}
	z.window = append(next, z.seg[max(0, len(z.seg)-gzipWindow):]...)
	z.seg = z.bufs.Get().([]byte)[:0]
	return nil
}

// writeOldest waits for the oldest segment and writes its output.
func (z *parallelGzip) writeOldest() error {
	job := z.queue[0]
	z.queue = z.queue[1:]
	<-job.done
	if z.err == nil && job.err != nil {
		z.err = job.err
	}
	if z.err == nil && !z.header {
		// ID1 ID2, CM deflate, no flags, no time, no extra flags, OS unknown:
		// nothing that differs between two runs.
		_, z.err = z.w.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
		z.header = true
	}
	if z.err == nil {
		_, z.err = z.w.Write(job.out.Bytes())
	}
	z.bufs.Put(job.in[:0])
	return z.err
}

// Close compresses the last segment, writes every segment and the gzip
// trailer (CRC-32 and size of the input). The underlying writer is not
// closed.
func (z *parallelGzip) Close() error {
	if z.closed {
		return z.err
	}
	z.closed = true
	if z.err != nil {
		z.drain()
		return z.err
	}
	if err := z.start(true); err != nil {
		z.drain()
		return err
	}
	for len(z.queue) > 0 {
		if err := z.writeOldest(); err != nil {
			z.drain()
			return err
		}
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], z.crc)
	binary.LittleEndian.PutUint32(trailer[4:], z.size)
	_, z.err = z.w.Write(trailer[:])
	return z.err
}

// drain waits for the segments under way after an error.
func (z *parallelGzip) drain() {
	for _, job := range z.queue {
		<-job.done
	}
	z.queue = nil
}
