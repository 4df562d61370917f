// Package jsonlines keeps a stream of log lines all JSON: under
// --log-format json, a log pipeline must never meet plain text.
package jsonlines

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Writer makes every line written through it one JSON object: lines
// that already are JSON (a slog JSON handler's) pass through; any other
// line (the slot's name, a resume command, the fatal error) becomes
// {"time":…,"level":…,"msg":…}. The level is INFO, or ERROR once the
// command's outcome is being written: that is one record, however many
// lines it has (a wrapped driver error, a list of mapping problems).
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	level string
	now   func() time.Time
}

// New returns a Writer of records to w, at level INFO.
func New(w io.Writer) *Writer {
	return &Writer{w: w, level: "INFO", now: time.Now}
}

// SetLevel sets the level of the lines to come; from ERROR on, they make
// one record, written at Flush.
func (j *Writer) SetLevel(level string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	// Lines before the change keep their level.
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 || j.level == "ERROR" {
			break
		}
		_ = j.emit(j.buf[:i])
		j.buf = j.buf[i+1:]
	}
	j.level = level
}

func (j *Writer) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = append(j.buf, p...)
	if j.level == "ERROR" {
		return len(p), nil // one record, at Flush
	}
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := j.buf[:i]
		if err := j.emit(line); err != nil {
			return 0, err
		}
		j.buf = j.buf[i+1:]
	}
}

// Flush writes a last line that did not end with a newline.
func (j *Writer) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(bytes.TrimSpace(j.buf)) == 0 {
		return nil
	}
	err := j.emit(bytes.TrimRight(j.buf, "\n"))
	j.buf = j.buf[:0]
	return err
}

func (j *Writer) emit(line []byte) error {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	if trimmed[0] == '{' && bytes.IndexByte(trimmed, '\n') < 0 && json.Valid(trimmed) {
		_, err := j.w.Write(append(append([]byte{}, trimmed...), '\n'))
		return err
	}
	rec, err := json.Marshal(struct {
		Time  string `json:"time"`
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}{j.now().Format(time.RFC3339Nano), j.level, string(bytes.TrimRight(line, " \t\r"))})
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(rec, '\n'))
	return err
}
