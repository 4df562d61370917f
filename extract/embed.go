package extract

import (
	"encoding/base64"
	"encoding/json"
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
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var raw [][]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode children: %w", err)
	}
	out := make([]Row, len(raw))
	for i, r := range raw {
		if len(r) != len(cols) {
			return nil, fmt.Errorf("child row has %d values for %d columns", len(r), len(cols))
		}
		vals := make([]any, len(cols))
		for k, c := range cols {
			v, err := decodeJSONValue(r[k], c.Type.Kind, c.Type.Elem)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			vals[k] = v
		}
		out[i] = Row{Values: vals}
	}
	return out, nil
}

func decodeJSONValue(raw json.RawMessage, k, elem pgkind.Kind) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	if k == pgkind.JSON {
		return JSON(raw), nil
	}
	if k == pgkind.Array {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			ek := elem
			if len(it) > 0 && it[0] == '[' && elem != pgkind.JSON {
				ek = pgkind.Array // nested dimension
			}
			v, err := decodeJSONValue(it, ek, elem)
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
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
		}
		return Decimal(s), nil
	case pgkind.Bool:
		return string(raw) == "true", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want a string, got %s", raw)
	}
	switch k {
	case pgkind.Float:
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
