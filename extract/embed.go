package extract

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Text layouts of date and time values under the session settings the
// snapshot pins (DateStyle ISO, TimeZone UTC).
const (
	pgDate        = "2006-01-02"
	pgTimestamp   = "2006-01-02 15:04:05.999999999"
	pgTimestamptz = "2006-01-02 15:04:05.999999999Z07"
)

// decodeEmbed parses the JSON array of child rows built by embedExpr.
func decodeEmbed(text string, cols []mapping.Column) ([]Row, error) {
	data := []byte(text)
	rows, err := splitJSONArray(data)
	if err != nil {
		return nil, fmt.Errorf("decode children: %w", err)
	}
	out := make([]Row, len(rows))
	vals := make([]any, len(rows)*len(cols)) // one allocation for every child's values
	for i, r := range rows {
		fields, err := splitJSONArray(r)
		if err != nil {
			return nil, fmt.Errorf("decode children: %w", err)
		}
		if len(fields) != len(cols) {
			return nil, fmt.Errorf("child row has %d values for %d columns", len(fields), len(cols))
		}
		row := vals[i*len(cols) : (i+1)*len(cols) : (i+1)*len(cols)]
		for k, c := range cols {
			v, err := decodeJSONValue(fields[k], c.Type.Kind, c.Type.Elem, c.Type.Float4)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			row[k] = v
		}
		out[i] = Row{Values: row}
	}
	return out, nil
}

// splitJSONArray returns the elements of a JSON array as raw JSON, without
// decoding them. The embed query's JSON comes from the server, well
// formed; anything else is reported, not guessed at.
func splitJSONArray(data []byte) ([][]byte, error) {
	data = trimJSONSpace(data)
	if len(data) < 2 || data[0] != '[' || data[len(data)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.40q", data)
	}
	inner := trimJSONSpace(data[1 : len(data)-1])
	if len(inner) == 0 {
		return nil, nil
	}
	var out [][]byte
	depth, start := 0, 0
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '"':
			for i++; i < len(inner) && inner[i] != '"'; i++ {
				if inner[i] == '\\' {
					i++
				}
			}
			if i >= len(inner) {
				return nil, errors.New("unterminated string in a JSON array")
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth < 0 {
				return nil, errors.New("unbalanced JSON array")
			}
		case ',':
			if depth == 0 {
				out = append(out, trimJSONSpace(inner[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced JSON array")
	}
	return append(out, trimJSONSpace(inner[start:])), nil
}

func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// jsonString decodes a JSON string; one without escapes is its bytes.
func jsonString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func decodeJSONValue(raw json.RawMessage, k, elem pgkind.Kind, float4 bool) (any, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty JSON value")
	}
	if string(raw) == "null" {
		return nil, nil
	}
	if k == pgkind.JSON {
		return JSON(raw), nil
	}
	if k == pgkind.Array {
		items, err := splitJSONArray(raw)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			ek := elem
			if len(it) > 0 && it[0] == '[' && elem != pgkind.JSON {
				ek = pgkind.Array // nested dimension
			}
			v, err := decodeJSONValue(it, ek, elem, float4)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch k {
	case pgkind.Int:
		return strconv.ParseInt(string(raw), 10, 64)
	case pgkind.Numeric:
		s := string(raw)
		if strings.HasPrefix(s, `"`) { // "NaN", "Infinity"
			var err error
			if s, err = jsonString(raw); err != nil {
				return nil, err
			}
		}
		return Decimal(s), nil
	case pgkind.Bool:
		return string(raw) == "true", nil
	}
	s, err := jsonString(raw)
	if err != nil {
		return nil, fmt.Errorf("want a string, got %s", raw)
	}
	switch k {
	case pgkind.Float:
		if float4 {
			f, err := strconv.ParseFloat(s, 32)
			return float32(f), err
		}
		return strconv.ParseFloat(s, 64)
	case pgkind.Bytea:
		return base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "\n", ""))
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		return parseTime(s, k)
	}
	return s, nil
}

func parseTime(s string, k pgkind.Kind) (any, error) {
	switch s {
	case "infinity":
		return Infinity{1}, nil
	case "-infinity":
		return Infinity{-1}, nil
	}
	layout := pgDate
	switch k {
	case pgkind.Timestamp:
		layout = pgTimestamp
	case pgkind.Timestamptz:
		layout = pgTimestamptz
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return nil, fmt.Errorf("parse %s %q: %w", k, s, err)
	}
	return t.UTC(), nil
}
