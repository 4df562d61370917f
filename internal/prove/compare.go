package prove

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// compareAnswers compares DynamoDB's items with the SQL's rows: as many
// items as rows, and each row's columns equal to the attributes of the
// same name of its item (in order when ordered; else some pairing). It
// returns "" when they agree, else the first difference.
func compareAnswers(items []map[string]types.AttributeValue, cols []extract.ResultColumn, rows [][]any, ordered bool, k keyAttrs) string {
	if len(items) != len(rows) {
		msg := fmt.Sprintf("DynamoDB returned %d items, SQL %d rows", len(items), len(rows))
		switch {
		case len(items) > len(rows) && ordered:
			msg += "; first extra item " + keyText(items[len(rows)], k)
		case len(rows) > len(items) && ordered:
			msg += "; first row without an item: " + rowText(cols, rows[len(items)])
		}
		return msg
	}
	if ordered || len(rows) == 1 {
		for i := range rows {
			if d := compareRow(items[i], cols, rows[i]); d != "" {
				return fmt.Sprintf("answer %d, item %s: %s", i+1, keyText(items[i], k), d)
			}
		}
		return ""
	}
	used := make([]bool, len(items))
next:
	for i, row := range rows {
		first := ""
		for j, it := range items {
			if used[j] {
				continue
			}
			d := compareRow(it, cols, row)
			if d == "" {
				used[j] = true
				continue next
			}
			if first == "" {
				first = fmt.Sprintf("item %s: %s", keyText(it, k), d)
			}
		}
		return fmt.Sprintf("row %d (%s) has no equal item; the nearest, %s", i+1, rowText(cols, row), first)
	}
	return ""
}

func compareRow(item map[string]types.AttributeValue, cols []extract.ResultColumn, row []any) string {
	for i, c := range cols {
		av := item[c.Name]
		if ok, want := sameValue(av, row[i], c.Type); !ok {
			return fmt.Sprintf("%s is %s, SQL says %s", c.Name, avText(av), want)
		}
	}
	return ""
}

func keyText(item map[string]types.AttributeValue, k keyAttrs) string {
	s := k.pk + "=" + avText(item[k.pk])
	if k.sk != "" {
		s += " " + k.sk + "=" + avText(item[k.sk])
	}
	return s
}

func rowText(cols []extract.ResultColumn, row []any) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + "=" + valueText(row[i])
	}
	return strings.Join(parts, ", ")
}

// avText renders an attribute value for a message, in DynamoDB JSON.
func avText(av types.AttributeValue) string {
	if av == nil {
		return "absent"
	}
	b, err := transform.MarshalItem(map[string]types.AttributeValue{"v": av})
	if err != nil {
		return fmt.Sprintf("%T", av)
	}
	s := string(b)
	return strings.TrimSuffix(strings.TrimPrefix(s, `{"v":`), "}")
}

// sameValue compares an attribute (nil when absent) with a SQL value of
// type t, by meaning: numbers as decimals (a number kept as text with as:
// string too), timestamps as instants (text or epoch seconds or
// milliseconds), NULL as absent or NULL, and everything else as the
// transform would write it. want describes the SQL value for a message.
func sameValue(av types.AttributeValue, v any, t pgkind.Type) (ok bool, want string) {
	v = widen(v)
	want = valueText(v)
	if v == nil {
		_, isNull := av.(*types.AttributeValueMemberNULL)
		return av == nil || isNull, "NULL"
	}
	if av == nil {
		return false, want
	}
	switch v := v.(type) {
	case int64, extract.Decimal, float64:
		if f, isFloat := v.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			s, isS := av.(*types.AttributeValueMemberS)
			return isS && s.Value == floatWord(f), want
		}
		var text string
		switch v := v.(type) {
		case int64:
			text = strconv.FormatInt(v, 10)
		case float64:
			// The shortest decimal that reads back as v: what PostgreSQL
			// prints and the transform writes.
			text = strconv.FormatFloat(v, 'f', -1, 64)
		case extract.Decimal:
			if _, err := ddbvalue.ParseDecimal(string(v)); err != nil {
				s, isS := av.(*types.AttributeValueMemberS)
				return isS && s.Value == string(v), want // NaN, Infinity kept as text
			}
			text = string(v)
		}
		return sameNumber(av, text), want
	case time.Time:
		return sameInstant(av, v, t.Kind), want
	case extract.Infinity:
		s, isS := av.(*types.AttributeValueMemberS)
		return isS && s.Value == want, want
	case string:
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			if t.Kind == pgkind.UUID {
				return strings.EqualFold(x.Value, v), want
			}
			return x.Value == v, fmt.Sprintf("%q", v)
		case *types.AttributeValueMemberN: // as: number of a text column
			return sameNumber(av, v), want
		}
		return false, fmt.Sprintf("%q", v)
	case []byte:
		if s, isS := av.(*types.AttributeValueMemberS); isS {
			return s.Value == base64.StdEncoding.EncodeToString(v), want
		}
	}
	exp, present, err := transform.AttributeValue(v, t, mapping.AsDefault, mapping.NullOmit)
	if err != nil || !present {
		return false, want
	}
	if ddbvalue.Equal(av, exp) {
		return true, want
	}
	// An array may be written as a set (as: set): compare as a set.
	if arr, isArr := v.([]any); isArr && t.Kind == pgkind.Array {
		if set, present, err := transform.AttributeValue(arr, t, mapping.AsSet, mapping.NullOmit); err == nil && present && ddbvalue.Equal(av, set) {
			return true, want
		}
	}
	return false, want
}

func floatWord(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	}
	return "-Infinity"
}

// sameNumber reports whether an N attribute, or an S one (as: string),
// holds the number the decimal text want holds.
func sameNumber(av types.AttributeValue, want string) bool {
	var text string
	switch x := av.(type) {
	case *types.AttributeValueMemberN:
		text = x.Value
	case *types.AttributeValueMemberS: // as: string
		text = x.Value
	default:
		return false
	}
	c, err := ddbvalue.CompareNumbers(text, want)
	return err == nil && c == 0
}

// sameInstant compares a date or timestamp with its item form: the
// transform's text (or any RFC 3339 text), or epoch seconds or
// milliseconds.
func sameInstant(av types.AttributeValue, t time.Time, k pgkind.Kind) bool {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		if k == pgkind.Date {
			return x.Value == t.UTC().Format(transform.DateLayout)
		}
		for _, layout := range []string{transform.TimestampLayout, time.RFC3339Nano, transform.DateLayout} {
			if got, err := time.Parse(layout, x.Value); err == nil {
				return got.Equal(t)
			}
		}
	case *types.AttributeValueMemberN:
		// Epoch seconds as exact decimal text (Nanosecond is never
		// negative, so an instant before 1970 borrows a second), and
		// milliseconds as that times 10^3.
		secs, us := t.Unix(), t.Nanosecond()/1000
		text := fmt.Sprintf("%d.%06d", secs, us)
		if secs < 0 && us > 0 {
			text = fmt.Sprintf("-%d.%06d", -(secs + 1), 1_000_000-us)
		}
		return sameNumber(av, text) || sameNumber(av, text+"e3")
	}
	return false
}
