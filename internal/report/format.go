package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// count formats an integer with thousands separators: 12,345.
func count[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// size formats bytes as DynamoDB counts them (1 KB = 1024 bytes).
func size[T ~int | ~int64 | ~float64](n T) string {
	f := float64(n)
	switch {
	case f < 1024:
		return fmt.Sprintf("%.0f B", f)
	case f < 1024*1024:
		return fmt.Sprintf("%.1f KB", f/1024)
	case f < 1024*1024*1024:
		return fmt.Sprintf("%.1f MB", f/(1024*1024))
	}
	return fmt.Sprintf("%.1f GB", f/(1024*1024*1024))
}

// binLabel names a histogram bin: "128 B-255 B".
func binLabel(b SizeBin) string {
	return size(b.MinBytes) + "–" + size(b.MaxBytes-1)
}

// dollars formats a cost with enough digits to be non-zero for small loads.
func dollars(f float64) string {
	switch {
	case f == 0:
		return "$0"
	case f >= 100:
		return "$" + count(int64(math.Round(f)))
	case f >= 0.01:
		return fmt.Sprintf("$%.2f", f)
	}
	// Two significant digits, never in exponent form: $0.000085.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 2, 64), 64)
	return "$" + strconv.FormatFloat(r, 'f', -1, 64)
}

// duration formats seconds for people.
func duration(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.2f s", s)
	case s < 120:
		return fmt.Sprintf("%.1f s", s)
	case s < 2*3600:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// number formats a float without needless digits.
func number(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return count(int64(f))
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Value renders a DynamoDB JSON value ({"S":"x"}) for people: strings
// quoted, numbers, booleans and null as themselves, anything else as
// compact DynamoDB JSON. Long results are cut to max runes with "…".
func Value(raw json.RawMessage, max int) string {
	if len(raw) == 0 {
		return ""
	}
	out := ""
	var v any
	if json.Unmarshal(raw, &v) == nil {
		switch av, _ := ddbvalue.DecodeValue(v); av := av.(type) {
		case *types.AttributeValueMemberS:
			out = strconv.Quote(av.Value)
		case *types.AttributeValueMemberN:
			out = av.Value
		case *types.AttributeValueMemberBOOL:
			out = strconv.FormatBool(av.Value)
		case *types.AttributeValueMemberNULL:
			out = "null"
		}
	}
	if out == "" {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			out = b.String()
		} else {
			out = string(raw)
		}
	}
	return truncate(out, max)
}

func truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

func plural(n int64, word string) string {
	if n == 1 {
		return count(n) + " " + word
	}
	if strings.HasSuffix(word, "y") {
		return count(n) + " " + strings.TrimSuffix(word, "y") + "ies"
	}
	return count(n) + " " + word + "s"
}

func pct(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	p := 100 * float64(part) / float64(whole)
	if p > 0 && p < 1 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", p)
}
