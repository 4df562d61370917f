package extract

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
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
		// The json's text as a JSON string (see jsonExpr): a json null
		// is "null", not the null of a NULL column.
		s, err := jsonString(raw)
		if err != nil {
			return nil, fmt.Errorf("want the text of a json value, got %s", raw)
		}
		return JSON(s), nil
	}
	if k == pgkind.Array {
		items, err := splitJSONArray(raw)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			ek := elem
			if len(it) > 0 && it[0] == '[' {
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
		if hexText, ok := strings.CutPrefix(s, `\x`); ok {
			return hex.DecodeString(hexText) // an array's element, as text (bytea_output hex)
		}
		return base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "\n", ""))
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		return parseTime(s, k)
	}
	return s, nil
}

// pgTimeText is a date or timestamp as PostgreSQL prints it with DateStyle
// ISO and TimeZone UTC: years of four or more digits, " BC" for years
// before 1 (which time.Parse reads neither of).
var pgTimeText = regexp.MustCompile(`^(\d{4,})-(\d\d)-(\d\d)(?: (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?)?(\+00)?( BC)?$`)

func parseTime(s string, k pgkind.Kind) (any, error) {
	switch s {
	case "infinity":
		return Infinity{1}, nil
	case "-infinity":
		return Infinity{-1}, nil
	}
	m := pgTimeText.FindStringSubmatch(s)
	if m == nil || (k == pgkind.Date) != (m[4] == "") || (k == pgkind.Timestamptz) != (m[8] != "") {
		return nil, fmt.Errorf("parse %s %q: not PostgreSQL's ISO text in UTC", k, s)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	year := n(1)
	if m[9] != "" {
		year = 1 - year // 1 BC is year 0
	}
	var hh, mm, ss, ns int
	if m[4] != "" {
		hh, mm, ss = n(4), n(5), n(6)
		if m[7] != "" {
			ns, _ = strconv.Atoi((m[7] + "000000000")[:9])
		}
	}
	return time.Date(year, time.Month(n(2)), n(3), hh, mm, ss, ns, time.UTC), nil
}
