package engine

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/aws/smithy-go"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// RejectLine is one line of the reject file: a row (or one entity's item of
// a row) that was not written, and why. The fields are documented in
// README.md; keep them stable.
type RejectLine struct {
	Entity      string `json:"entity"`
	SourceTable string `json:"sourceTable"`
	SourceKey   string `json:"sourceKey"`
	Column      string `json:"column"`
	Reason      string `json:"reason"`
	// Stage is "transform" (the row could not become an item) or "load"
	// (the item could not be written).
	Stage string `json:"stage"`
	// Kind classifies load rejects: item-too-large, key-too-long,
	// empty-key, invalid-key, duplicate-key, rejected-by-dynamodb, invalid-item.
	Kind string `json:"kind,omitempty"`
	// ItemKey is the item's primary key, for load rejects.
	ItemKey string          `json:"itemKey,omitempty"`
	Row     json.RawMessage `json:"row"`
}

// rowRejects turns transform row errors into reject lines.
func rowRejects(src *transform.Source, row extract.Row, errs []*transform.RowError) []RejectLine {
	var out []RejectLine
	var data json.RawMessage
	for _, re := range errs {
		if data == nil {
			data = rowJSON(src, row)
		}
		reason := re.Error()
		if re.Err != nil {
			reason = re.Err.Error()
		}
		out = append(out, RejectLine{
			Entity: re.Entity, SourceTable: re.Table, SourceKey: re.Key, Column: re.Column,
			Reason: reason, Stage: "transform", Row: data,
		})
	}
	return out
}

// itemReject turns a loader row error into a reject line.
func itemReject(m *mapping.Mapping, src *transform.Source, row *extract.Row, e *contract.ItemError) RejectLine {
	l := RejectLine{
		Entity: e.Origin.Entity, SourceTable: e.Origin.Table, SourceKey: e.Origin.Key(),
		Reason: e.Reason, Stage: "load", Kind: rejectKind(e.Err), ItemKey: e.Key, Row: json.RawMessage("null"),
	}
	if l.Kind == "rejected-by-dynamodb" && m != nil {
		l.Column = rejectColumn(m, l.Entity, l.Reason)
	}
	if row != nil {
		l.Row = rowJSON(src, *row)
	}
	return l
}

func rejectKind(err error) string {
	var api smithy.APIError
	switch {
	case errors.Is(err, load.ErrItemTooLarge):
		return "item-too-large"
	case errors.Is(err, load.ErrKeyTooLong):
		return "key-too-long"
	case errors.Is(err, load.ErrEmptyKey):
		return "empty-key"
	case errors.Is(err, load.ErrInvalidKey):
		return "invalid-key"
	case errors.Is(err, load.ErrDuplicateKey):
		return "duplicate-key"
	case errors.As(err, &api):
		return "rejected-by-dynamodb"
	}
	return "invalid-item"
}

// rowJSON renders a source row for a reject line: the base table's columns
// by name, then the parent rows joined for copied attributes and the child
// rows embedded, each labelled with its table. Values keep their exact
// text: numerics and non-finite floats as strings, timestamps in RFC 3339
// (UTC), bytea in base64, json as JSON.
func rowJSON(src *transform.Source, row extract.Row) json.RawMessage {
	q := src.Query
	type relation struct {
		Table  string           `json:"table"`
		Values map[string]any   `json:"values,omitempty"`
		Rows   []map[string]any `json:"rows,omitempty"`
	}
	out := struct {
		Values   map[string]any `json:"values"`
		Joined   []relation     `json:"joined,omitempty"`
		Embedded []relation     `json:"embedded,omitempty"`
	}{Values: map[string]any{}}
	at := 0
	value := func() any {
		if at >= len(row.Values) {
			return nil
		}
		v := row.Values[at]
		at++
		return v
	}
	for _, c := range q.Columns {
		out.Values[c.Name] = jsonSafe(value())
	}
	for _, j := range q.Joins {
		r := relation{Table: j.Schema + "." + j.Table, Values: map[string]any{}}
		for _, c := range j.Columns {
			r.Values[c.Name] = jsonSafe(value())
		}
		out.Joined = append(out.Joined, r)
	}
	for _, e := range q.Embeds {
		r := relation{Table: e.Schema + "." + e.Table, Rows: []map[string]any{}}
		children, _ := value().([]extract.Row)
		for _, ch := range children {
			m := map[string]any{}
			for i, c := range e.Columns {
				if i < len(ch.Values) {
					m[c.Name] = jsonSafe(ch.Values[i])
				}
			}
			r.Rows = append(r.Rows, m)
		}
		out.Embedded = append(out.Embedded, r)
	}
	data, err := json.Marshal(out)
	if err != nil {
		// jsonSafe only produces encodable values; be loud if not.
		data, _ = json.Marshal(map[string]string{"error": "row not encodable: " + err.Error()})
	}
	return data
}

// jsonSafe converts a decoded value into one encoding/json renders without
// loss.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case nil, bool, string:
		return v
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float32:
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return jsonSafe(f)
		}
		return json.Number(transform.FloatString(float64(v), 32))
	case float64:
		switch {
		case math.IsNaN(v):
			return "NaN"
		case math.IsInf(v, 1):
			return "Infinity"
		case math.IsInf(v, -1):
			return "-Infinity"
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	case extract.Decimal:
		return string(v)
	case extract.JSON:
		if json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
		return string(v)
	case extract.Infinity:
		if v.Sign < 0 {
			return "-infinity"
		}
		return "infinity"
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case []byte:
		return base64.StdEncoding.EncodeToString(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonSafe(e)
		}
		return out
	case []extract.Row:
		out := make([]any, len(v))
		for i, r := range v {
			out[i] = jsonSafe(r.Values)
		}
		return out
	case extract.OffsetArray:
		return map[string]any{"dims": v.Dims, "values": jsonSafe(v.Values)}
	}
	return fmt.Sprint(v)
}

// rejectFile appends reject lines. Lines are buffered; sync flushes and
// fsyncs them and returns the file's length.
type rejectFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int64
}

// openRejectFile opens path for a run. A fresh run (keep < 0) starts an
// empty file. A resumed run keeps the first keep bytes (the lines of the
// rows done by the runs before) and drops the rest, which are the rows that
// will be read again.
func openRejectFile(path string, keep int64, log *slog.Logger) (*rejectFile, error) {
	flags := os.O_RDWR | os.O_CREATE
	if keep < 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("reject file: %w", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reject file: %w", err)
	}
	switch {
	case keep >= 0 && size > keep:
		if err := f.Truncate(keep); err != nil {
			f.Close()
			return nil, fmt.Errorf("reject file: %w", err)
		}
		if size, err = f.Seek(keep, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("reject file: %w", err)
		}
	case keep > size && log != nil:
		log.Warn("the reject file is shorter than the state file recorded: it was changed since; new rejects are appended to it",
			"file", path, "bytes", size, "recorded", keep)
	}
	return &rejectFile{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10), n: size}, nil
}

func (r *rejectFile) write(l RejectLine) error {
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("reject file: encode line: %w", err)
	}
	data = append(data, '\n')
	if _, err := r.w.Write(data); err != nil {
		return fmt.Errorf("reject file %s: %w", r.path, err)
	}
	r.n += int64(len(data))
	return nil
}

func (r *rejectFile) sync() (int64, error) {
	if err := r.w.Flush(); err != nil {
		return 0, fmt.Errorf("reject file %s: %w", r.path, err)
	}
	if err := r.f.Sync(); err != nil {
		return 0, fmt.Errorf("reject file %s: %w", r.path, err)
	}
	return r.n, nil
}

func (r *rejectFile) close() error {
	_, err := r.sync()
	return errors.Join(err, r.f.Close())
}
