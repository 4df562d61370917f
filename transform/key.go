package transform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/text/unicode/norm"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// errEmpty marks an empty key value: a row error, or with empty: absent a
// reason to leave the item out of an index.
var errEmpty = errors.New("empty value cannot be part of a key")

// emptyError is an empty key value of one kind (string, binary).
type emptyError struct{ what string }

func (e emptyError) Error() string      { return "empty " + e.what + " cannot be part of a key" }
func (emptyError) Is(target error) bool { return target == errEmpty }

// KeyValue is the value of one placeholder: the column (or parameter)
// value as extract decodes it, and its kind.
type KeyValue struct {
	V    any
	Kind pgkind.Kind
}

// RenderKey builds a key attribute from a template: S (literals and
// placeholders joined), or N or B (the template's single placeholder).
// values returns the value of each placeholder part, by its index in
// t.Parts. present is false, with a nil error, when a placeholder is NULL,
// or empty and emptyAbsent is set: the key cannot be built and an index
// leaves the item out. Any other problem is an error that names the
// placeholder's column.
func RenderKey(t *mapping.Template, typ mapping.KeyType, sep string, emptyAbsent bool, values func(i int) (KeyValue, error)) (av types.AttributeValue, present bool, col string, err error) {
	absent := func(err error) bool {
		return errors.Is(err, errNull) || emptyAbsent && errors.Is(err, errEmpty)
	}
	if typ == mapping.KeyNumber || typ == mapping.KeyBinary {
		part := t.Parts[0]
		kv, err := values(0)
		if err != nil {
			return nil, false, part.Column, err
		}
		av, err := typedKey(kv, part, typ)
		if absent(err) {
			return nil, false, "", nil
		}
		if err != nil {
			return nil, false, part.Column, err
		}
		return av, true, "", nil
	}
	var b strings.Builder
	for i, part := range t.Parts {
		if part.Column == "" {
			b.WriteString(part.Literal)
			continue
		}
		kv, err := values(i)
		if err != nil {
			return nil, false, part.Column, err
		}
		txt, err := PartText(kv, part, sep)
		if absent(err) {
			return nil, false, "", nil
		}
		if err != nil {
			return nil, false, part.Column, err
		}
		b.WriteString(txt)
	}
	return &types.AttributeValueMemberS{Value: b.String()}, true, "", nil
}

// typedKey is the N or B value of a single-placeholder template.
func typedKey(kv KeyValue, part mapping.Part, typ mapping.KeyType) (types.AttributeValue, error) {
	if kv.V == nil {
		return nil, errNull
	}
	if typ == mapping.KeyBinary {
		b, ok := kv.V.([]byte)
		if !ok {
			return nil, fmt.Errorf("a %T value cannot be a binary key", kv.V)
		}
		if len(b) == 0 {
			return nil, emptyError{"binary"}
		}
		return &types.AttributeValueMemberB{Value: b}, nil
	}
	v, _, err := applyFuncs(kv.V, kv.Kind, part.Funcs, true)
	if err != nil {
		return nil, err
	}
	var text string
	switch v := v.(type) {
	case int64:
		text = strconv.FormatInt(v, 10)
	case extract.Decimal:
		text = string(v)
	case string: // year, month, day
		text = v
	default:
		return nil, fmt.Errorf("a %T value cannot be a number key", v)
	}
	n, err := Number(text)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberN{Value: n}, nil
}

// PartText is the key text of one placeholder: the value passed through
// the part's functions (or zero-padded to its width), never empty and
// never containing the separator.
func PartText(kv KeyValue, part mapping.Part, sep string) (string, error) {
	if len(part.Funcs) == 0 {
		return KeyText(kv.V, kv.Kind, part.Width, sep)
	}
	if kv.V == nil {
		return "", errNull
	}
	v, k, err := applyFuncs(kv.V, kv.Kind, part.Funcs, false)
	if err != nil {
		return "", err
	}
	return KeyText(v, k, 0, sep)
}

// applyFuncs runs a placeholder's functions over a non-NULL value. Each
// yields text (year, month, day and date as fixed-width digits) or an error.
// number is set for the single placeholder of an N key, where the value
// sorts as a number, not as text.
func applyFuncs(v any, k pgkind.Kind, funcs []mapping.Func, number bool) (any, pgkind.Kind, error) {
	for _, f := range funcs {
		var err error
		v, err = applyFunc(f, v, number)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.Name, err)
		}
		k, _ = mapping.FuncResult(f.Name, k)
		if k == pgkind.Int || k == pgkind.Date {
			k = pgkind.Text // the function already wrote its text form
		}
	}
	return v, k, nil
}

func applyFunc(f mapping.Func, v any, number bool) (any, error) {
	switch f.Name {
	case mapping.FuncLower, mapping.FuncUpper, mapping.FuncNFC, mapping.FuncNFD, mapping.FuncNFKC, mapping.FuncNFKD:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("applies to text, not %T", v)
		}
		switch f.Name {
		case mapping.FuncLower:
			return strings.ToLower(s), nil
		case mapping.FuncUpper:
			return strings.ToUpper(s), nil
		case mapping.FuncNFC:
			return norm.NFC.String(s), nil
		case mapping.FuncNFD:
			return norm.NFD.String(s), nil
		case mapping.FuncNFKC:
			return norm.NFKC.String(s), nil
		}
		return norm.NFKD.String(s), nil
	case mapping.FuncYear, mapping.FuncMonth, mapping.FuncDay, mapping.FuncDate:
		var t time.Time
		switch v := v.(type) {
		case time.Time:
			t = v.UTC()
		case extract.Infinity:
			return nil, fmt.Errorf("%s has no %s", infinityText(v), f.Name)
		default:
			return nil, fmt.Errorf("applies to dates and timestamps, not %T", v)
		}
		if number && f.Name != mapping.FuncDate {
			// A number sorts right whatever its digits: any year will do,
			// numbered as PostgreSQL's extract does (no year 0: 1 BC is -1).
			switch f.Name {
			case mapping.FuncYear:
				y := t.Year()
				if y <= 0 {
					y--
				}
				return strconv.Itoa(y), nil
			case mapping.FuncMonth:
				return strconv.Itoa(int(t.Month())), nil
			}
			return strconv.Itoa(t.Day()), nil
		}
		if y := t.Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("year %d is outside 0000-9999, where text keys keep their order (a number key holds any year)", y)
		}
		switch f.Name {
		case mapping.FuncYear:
			return fmt.Sprintf("%04d", t.Year()), nil
		case mapping.FuncMonth:
			return fmt.Sprintf("%02d", int(t.Month())), nil
		case mapping.FuncDay:
			return fmt.Sprintf("%02d", t.Day()), nil
		}
		return t.Format(DateLayout), nil
	case mapping.FuncSigned:
		w, _, err := mapping.FuncArgs(f)
		if err != nil {
			return nil, err
		}
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("applies to integers, not %T", v)
		}
		neg := n < 0
		mag := uint64(n)
		if neg {
			mag = uint64(-(n + 1)) + 1 // also for math.MinInt64
		}
		digits := strconv.FormatUint(mag, 10)
		if len(digits) > w {
			return nil, fmt.Errorf("%d has more than %d digits (raise the width)", n, w)
		}
		return encodeSigned(neg, strings.Repeat("0", w-len(digits))+digits, 0), nil
	case mapping.FuncDecimal:
		i, fr, err := mapping.FuncArgs(f)
		if err != nil {
			return nil, err
		}
		var text string
		switch v := v.(type) {
		case int64:
			text = strconv.FormatInt(v, 10)
		case extract.Decimal:
			text = string(v)
		default:
			return nil, fmt.Errorf("applies to integers and numerics, not %T", v)
		}
		return encodeDecimal(text, i, fr)
	}
	return nil, fmt.Errorf("unknown function")
}

// encodeDecimal writes decimal text with exactly intDigits integer and
// fracDigits fraction digits, order-preserving. It never rounds: a value
// with more digits than declared is an error.
func encodeDecimal(text string, intDigits, fracDigits int) (string, error) {
	s := strings.TrimSpace(text)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || !allDigits(ip) || !allDigits(fp) {
		return "", fmt.Errorf("%s has no fixed-width decimal form", text)
	}
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	if len(fp) > fracDigits {
		return "", fmt.Errorf("%s has more than %d fraction digits (raise the scale; values are never rounded)", text, fracDigits)
	}
	if len(ip) > intDigits {
		return "", fmt.Errorf("%s has more than %d integer digits (raise the width)", text, intDigits)
	}
	digits := strings.Repeat("0", intDigits-len(ip)) + ip + fp + strings.Repeat("0", fracDigits-len(fp))
	if strings.Trim(digits, "0") == "" {
		neg = false // -0 is 0
	}
	return encodeSigned(neg, digits, fracDigits), nil
}

// encodeSigned writes fixed-width digits so that byte order is numeric
// order: a negative value is "-" and the nines' complement of its digits
// ("-" sorts before every digit, and a larger magnitude gives smaller
// digits). A point is put before the last frac digits.
func encodeSigned(neg bool, digits string, frac int) string {
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(digits); i++ {
		if frac > 0 && i == len(digits)-frac {
			b.WriteByte('.')
		}
		d := digits[i]
		if neg {
			d = '9' - (d - '0')
		}
		b.WriteByte(d)
	}
	return b.String()
}

// floatText is the text of a double precision value that has no DynamoDB
// number: PostgreSQL's own spelling, for as: string.
func floatText(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	}
	return "-Infinity"
}
