package transform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Time formats. Fixed fractional digits (PostgreSQL keeps microseconds) so
// that strings sort in time order; RFC3339Nano would trim zeros and mis-sort.
const (
	DateLayout      = "2006-01-02"
	TimestampLayout = "2006-01-02T15:04:05.000000Z"
)

var errNull = errors.New("value is NULL")

// AttributeValue converts one column value to a DynamoDB value. ok is false
// when the attribute is to be omitted (NULL by default, empty sets).
func AttributeValue(v any, t pgkind.Type, as mapping.Conversion, null mapping.NullMode) (types.AttributeValue, bool, error) {
	return attributeValue(v, t, as, null, nil)
}

// avAlloc hands out the S and N values of one item from a few slices
// instead of one allocation each: they live exactly as long as the item.
// The nil *avAlloc allocates each value on its own.
type avAlloc struct {
	s []types.AttributeValueMemberS
	n []types.AttributeValueMemberN
}

// avChunk is how many values an avAlloc allocates at once.
const avChunk = 16

func (a *avAlloc) S(v string) *types.AttributeValueMemberS {
	if a == nil {
		return &types.AttributeValueMemberS{Value: v}
	}
	if len(a.s) == cap(a.s) {
		a.s = make([]types.AttributeValueMemberS, 0, avChunk) // the old chunk stays with the values in it
	}
	a.s = append(a.s, types.AttributeValueMemberS{Value: v})
	return &a.s[len(a.s)-1]
}

func (a *avAlloc) N(v string) *types.AttributeValueMemberN {
	if a == nil {
		return &types.AttributeValueMemberN{Value: v}
	}
	if len(a.n) == cap(a.n) {
		a.n = make([]types.AttributeValueMemberN, 0, avChunk)
	}
	a.n = append(a.n, types.AttributeValueMemberN{Value: v})
	return &a.n[len(a.n)-1]
}

func attributeValue(v any, t pgkind.Type, as mapping.Conversion, null mapping.NullMode, al *avAlloc) (types.AttributeValue, bool, error) {
	if v == nil {
		if null == mapping.NullKeep {
			return &types.AttributeValueMemberNULL{Value: true}, true, nil
		}
		return nil, false, nil
	}
	if t.Kind == pgkind.Array {
		if oa, ok := v.(extract.OffsetArray); ok {
			return nil, false, fmt.Errorf("the array's subscripts are %s, not from 1: a list cannot keep them and no as: does (array_lower is not 1)", oa.Dims)
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Errorf("expected an array, got %T", v)
		}
		if as == mapping.AsSet {
			return setValue(arr, t.Elem)
		}
		if as == mapping.AsString {
			j, err := jsonable(arr, t.Elem)
			if err != nil {
				return nil, false, err
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // "<" as itself, not \u003c
			if err := enc.Encode(j); err != nil {
				return nil, false, err
			}
			return &types.AttributeValueMemberS{Value: strings.TrimSuffix(b.String(), "\n")}, true, nil
		}
		av, err := listValue(arr, t.Elem)
		return av, err == nil, err
	}
	av, err := scalarValueAlloc(v, t.Kind, as, al)
	return av, err == nil, err
}

func scalarValue(v any, k pgkind.Kind, as mapping.Conversion) (types.AttributeValue, error) {
	return scalarValueAlloc(v, k, as, nil)
}

func scalarValueAlloc(v any, k pgkind.Kind, as mapping.Conversion, al *avAlloc) (types.AttributeValue, error) {
	switch v := v.(type) {
	case int64:
		s := strconv.FormatInt(v, 10)
		if as == mapping.AsString {
			return al.S(s), nil
		}
		return al.N(s), nil
	case extract.Decimal:
		if as == mapping.AsString {
			return al.S(string(v)), nil
		}
		switch v {
		case "NaN", "Infinity", "-Infinity":
			return nil, fmt.Errorf("%s cannot be stored in DynamoDB, which has no NaN or Infinity (declare as: string to keep it as text)", v)
		}
		n, err := Number(string(v))
		if err != nil {
			return nil, err
		}
		return al.N(n), nil
	case float32:
		return floatValue(float64(v), 32, as, al)
	case float64:
		return floatValue(v, 64, as, al)
	case bool:
		if as == mapping.AsString {
			return al.S(strconv.FormatBool(v)), nil
		}
		return &types.AttributeValueMemberBOOL{Value: v}, nil
	case time.Time:
		switch as {
		case mapping.AsEpochSecond:
			return al.N(epoch(v, 6)), nil
		case mapping.AsEpochMilli:
			return al.N(epoch(v, 3)), nil
		}
		return al.S(formatTime(v, k)), nil
	case extract.Infinity:
		if as == mapping.AsString {
			return al.S(infinityText(v)), nil
		}
		return nil, fmt.Errorf("%s has no DynamoDB form (declare as: string to keep it as text)", infinityText(v))
	case []byte:
		if as == mapping.AsString {
			return al.S(base64.StdEncoding.EncodeToString(v)), nil
		}
		if v == nil {
			// An empty bytea: a nil B is no value at all to DynamoDB
			// ("Supplied AttributeValue is empty"), an empty one is allowed.
			v = []byte{}
		}
		return &types.AttributeValueMemberB{Value: v}, nil
	case extract.JSON:
		if as == mapping.AsString {
			return al.S(string(v)), nil
		}
		return jsonValue(string(v))
	case string:
		if as == mapping.AsNumber {
			n, err := Number(v)
			if err != nil {
				return nil, err
			}
			return al.N(n), nil
		}
		return al.S(v), nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// floatValue converts a real (bits 32) or a double precision (bits 64). The
// bit size matters: a real 0.1 is the double 0.10000000149011612, but
// PostgreSQL prints it, and reads it back, as 0.1.
func floatValue(v float64, bits int, as mapping.Conversion, al *avAlloc) (types.AttributeValue, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if as == mapping.AsString {
			return al.S(floatText(v)), nil
		}
		return nil, fmt.Errorf("%s cannot be stored in DynamoDB, which has no NaN or Infinity (declare as: string to keep it as text)", floatText(v))
	}
	s := FloatString(v, bits)
	if as == mapping.AsString {
		return al.S(s), nil
	}
	n, err := Number(s)
	if err != nil {
		return nil, err
	}
	return al.N(n), nil
}

// FloatString is PostgreSQL's text of a real (bits 32) or double precision
// (bits 64) with extra_float_digits = 1, its default since version 12: the
// shortest decimal that reads back as the same value at that width, in
// exponent form ("1e-05", "1.234567e+06") when the decimal exponent is
// below -4 or at least 6 (real) or 15 (double precision), digits
// otherwise; NaN, Infinity and -Infinity as words.
func FloatString(v float64, bits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return floatText(v)
	}
	if v == 0 {
		return strconv.FormatFloat(v, 'f', -1, bits) // "0" or "-0"
	}
	exp := 15 // DBL_DIG
	if bits == 32 {
		exp = 6 // FLT_DIG
	}
	// The decimal exponent of the shortest digits, from their 'e' form.
	e := strconv.FormatFloat(v, 'e', -1, bits)
	x, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if x < -4 || x >= exp {
		return e
	}
	return strconv.FormatFloat(v, 'f', -1, bits)
}

// describeTime names a date or timestamp the way PostgreSQL prints it,
// for messages: years outside 1-9999 have no fixed-width text form.
func describeTime(t time.Time, k pgkind.Kind) string {
	t = t.UTC()
	y, era := t.Year(), ""
	if y <= 0 {
		y, era = 1-y, " BC" // astronomical year 0 is 1 BC
	}
	s := fmt.Sprintf("%04d-%02d-%02d", y, t.Month(), t.Day())
	if k != pgkind.Date {
		s += t.Format(" 15:04:05.999999") + "Z"
	}
	return s + era
}

func infinityText(v extract.Infinity) string {
	if v.Sign < 0 {
		return "-infinity"
	}
	return "infinity"
}

func formatTime(t time.Time, k pgkind.Kind) string {
	var buf [len(TimestampLayout)]byte
	return string(appendTime(buf[:0], t, k))
}

func appendTime(dst []byte, t time.Time, k pgkind.Kind) []byte {
	if k == pgkind.Date {
		return t.UTC().AppendFormat(dst, DateLayout)
	}
	return t.UTC().AppendFormat(dst, TimestampLayout)
}

// epoch prints seconds (frac 6) or milliseconds (frac 3) since 1970 exactly,
// keeping sub-unit precision as a decimal fraction without trailing zeros.
func epoch(t time.Time, frac int) string {
	us := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1_000_000))
	us.Add(us, big.NewInt(int64(t.Nanosecond()/1000)))
	exp := int32(-6)
	if frac == 3 {
		exp = -3
	}
	n, _ := Number(extract.FormatDecimal(us, exp))
	return n
}

// Number validates decimal text and returns DynamoDB's canonical form (no
// leading or trailing zeros). It rejects NaN, infinities, more than 38
// significant digits and magnitudes outside 1e-130..9.99e125 (see
// ddbvalue.Number), and says how to keep such a value.
func Number(s string) (string, error) {
	n, err := ddbvalue.Number(s)
	var ne *ddbvalue.NumberError
	if errors.As(err, &ne) && ne.Syntax == "" {
		ne.Hint = "declare as: string to keep it exact as text"
	}
	return n, err
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func listValue(arr []any, elem pgkind.Kind) (types.AttributeValue, error) {
	out := make([]types.AttributeValue, 0, len(arr))
	for i, e := range arr {
		var av types.AttributeValue
		var err error
		switch e := e.(type) {
		case nil:
			av = &types.AttributeValueMemberNULL{Value: true}
		case []any:
			av, err = listValue(e, elem)
		case extract.JSON:
			if strings.TrimSpace(string(e)) == "null" {
				err = errJSONNullElement
				break
			}
			av, err = scalarValue(e, elem, mapping.AsDefault)
		default:
			av, err = scalarValue(e, elem, mapping.AsDefault)
		}
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, av)
	}
	return &types.AttributeValueMemberL{Value: out}, nil
}

// setValue builds SS, NS or BS. DynamoDB rejects empty sets and duplicate
// members, so an empty array is omitted and duplicates collapse (a set has
// no order or multiplicity to lose); NULL members are an error.
func setValue(arr []any, elem pgkind.Kind) (types.AttributeValue, bool, error) {
	if len(arr) == 0 {
		return nil, false, nil
	}
	var ss, ns []string
	var bs [][]byte
	seen := map[string]bool{}
	for i, e := range arr {
		if e == nil {
			return nil, false, fmt.Errorf("element %d is NULL: sets cannot hold NULL", i)
		}
		if _, nested := e.([]any); nested {
			return nil, false, errors.New("a multi-dimensional array cannot be a set")
		}
		av, err := scalarValue(e, elem, mapping.AsDefault)
		if err != nil {
			return nil, false, fmt.Errorf("element %d: %w", i, err)
		}
		switch av := av.(type) {
		case *types.AttributeValueMemberS:
			if !seen[av.Value] {
				seen[av.Value] = true
				ss = append(ss, av.Value)
			}
		case *types.AttributeValueMemberN:
			if !seen[av.Value] {
				seen[av.Value] = true
				ns = append(ns, av.Value)
			}
		case *types.AttributeValueMemberB:
			if k := string(av.Value); !seen[k] {
				seen[k] = true
				bs = append(bs, av.Value)
			}
		default:
			return nil, false, fmt.Errorf("element %d: %T cannot be a set member", i, av)
		}
	}
	switch {
	case ss != nil:
		return &types.AttributeValueMemberSS{Value: ss}, true, nil
	case ns != nil:
		return &types.AttributeValueMemberNS{Value: ns}, true, nil
	default:
		return &types.AttributeValueMemberBS{Value: bs}, true, nil
	}
}

// jsonValue decodes JSON text into M/L/S/N/BOOL/NULL, keeping numbers exact.
// A json (not jsonb) object may name a key twice, and PostgreSQL keeps both;
// a map holds one, so that is an error rather than a silent drop. Decoding
// into maps allocates less than reading tokens (70 against 178 allocations
// for a 200-byte document, BenchmarkJSONValue), so the tokens are read only
// when the maps hold fewer members than the text has.
func jsonValue(text string) (types.AttributeValue, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if members(v) != memberColons(text) {
		return jsonTokenValue(text) // names the key given twice
	}
	return jsonToAV(v)
}

// members counts the members of every object in a decoded JSON value.
func members(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n += len(v)
		for _, e := range v {
			n += members(e)
		}
	case []any:
		for _, e := range v {
			n += members(e)
		}
	}
	return n
}

// memberColons counts the colons outside strings of valid JSON text: one
// per object member.
func memberColons(text string) int {
	n, inString := 0, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case inString && c == '\\':
			i++ // the escaped character
		case c == '"':
			inString = !inString
		case c == ':' && !inString:
			n++
		}
	}
	return n
}

// jsonTokenValue is jsonValue reading tokens, which sees every member.
func jsonTokenValue(text string) (types.AttributeValue, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	av, err := jsonTokens(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: text after the value")
	}
	return av, nil
}

func jsonToAV(v any) (types.AttributeValue, error) {
	switch v := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}, nil
	case string:
		return &types.AttributeValueMemberS{Value: v}, nil
	case json.Number:
		n, err := Number(v.String())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: n}, nil
	case []any:
		out := make([]types.AttributeValue, len(v))
		for i, e := range v {
			av, err := jsonToAV(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case map[string]any:
		out := make(map[string]types.AttributeValue, len(v))
		for k, e := range v {
			av, err := jsonToAV(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = av
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

// jsonTokens reads one JSON value from dec.
func jsonTokens(dec *json.Decoder) (types.AttributeValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch tok := tok.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: tok}, nil
	case string:
		return &types.AttributeValueMemberS{Value: tok}, nil
	case json.Number:
		n, err := Number(tok.String())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: n}, nil
	case json.Delim:
		if tok == '[' {
			out := []types.AttributeValue{}
			for dec.More() {
				av, err := jsonTokens(dec)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", len(out), err)
				}
				out = append(out, av)
			}
			_, err := dec.Token() // ]
			return &types.AttributeValueMemberL{Value: out}, err
		}
		out := map[string]types.AttributeValue{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			key, _ := k.(string)
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("the JSON object has key %q twice, which PostgreSQL's json keeps and a DynamoDB map cannot (declare as: string to keep the JSON text)", key)
			}
			av, err := jsonTokens(dec)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			out[key] = av
		}
		_, err := dec.Token() // }
		return &types.AttributeValueMemberM{Value: out}, err
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// jsonable turns decoded array values of element kind elem into something
// encoding/json prints faithfully: decimals and JSON as raw text, dates and
// timestamps as the attribute text of their kind, floats as PostgreSQL
// prints them, and NaN and ±Infinity, which JSON has no number for, as
// strings of PostgreSQL's words (in an array of numbers a string can be
// nothing else). A JSON null element would read back as a NULL element: an
// error.
func jsonable(v any, elem pgkind.Kind) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			j, err := jsonable(e, elem)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = j
		}
		return out, nil
	case extract.Decimal:
		switch v {
		case "NaN", "Infinity", "-Infinity":
			return string(v), nil
		}
		return json.RawMessage(v), nil
	case extract.JSON:
		if strings.TrimSpace(string(v)) == "null" {
			return nil, errJSONNullElement
		}
		return json.RawMessage(v), nil
	case time.Time:
		return formatTime(v, elem), nil
	case extract.Infinity:
		return infinityText(v), nil
	case float32:
		return jsonFloat(float64(v), 32), nil
	case float64:
		return jsonFloat(v, 64), nil
	}
	return v, nil
}

func jsonFloat(v float64, bits int) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return floatText(v)
	}
	return json.Number(FloatString(v, bits))
}

// errJSONNullElement: in a list, or in the JSON text of an array, a json
// null element and a NULL element are the same null.
var errJSONNullElement = errors.New("a JSON null element cannot be told from a NULL element, in a list or in as: string's JSON text; no as: keeps both")

// KeyText is the canonical text of a value inside a key template. Values
// must not be NULL or empty, and must not contain the separator, since that
// would make composite keys ambiguous.
func KeyText(v any, k pgkind.Kind, width int, sep string) (string, error) {
	b, err := AppendKeyText(nil, v, k, width, sep)
	return string(b), err
}

// AppendKeyText appends KeyText's text to dst; on error dst is returned as
// it was.
func AppendKeyText(dst []byte, v any, k pgkind.Kind, width int, sep string) ([]byte, error) {
	start := len(dst)
	switch v := v.(type) {
	case nil:
		return dst, errNull
	case int64:
		if width > 0 {
			if v < 0 {
				return dst, fmt.Errorf("negative value %d cannot be zero-padded to sort", v)
			}
			digits := 1
			for x := v; x >= 10; x /= 10 {
				digits++
			}
			if digits > width {
				return dst, fmt.Errorf("value %d has more than %d digits", v, width)
			}
			for range width - digits {
				dst = append(dst, '0')
			}
		}
		dst = strconv.AppendInt(dst, v, 10)
	case extract.Decimal:
		if _, err := Number(string(v)); err != nil {
			return dst, err
		}
		dst = append(dst, v...)
	case string:
		dst = append(dst, v...)
	case bool:
		dst = strconv.AppendBool(dst, v)
	case time.Time:
		// Four-digit years are what makes the text sort in time order: year
		// 10000 would sort before 2024, and BC dates (years below 0000, 1 BC
		// being 0000) in reverse.
		if y := v.UTC().Year(); y < 0 || y > 9999 {
			return dst, fmt.Errorf("%s is outside years 0000-9999, where key text sorts in time order", describeTime(v, k))
		}
		dst = appendTime(dst, v, k)
	case extract.Infinity:
		return dst, fmt.Errorf("%s cannot be part of a key", infinityText(v))
	default:
		return dst, fmt.Errorf("a %T value cannot be part of a key", v)
	}
	if len(dst) == start {
		return dst, emptyError{"string"}
	}
	if sep != "" && bytes.Contains(dst[start:], []byte(sep)) {
		return dst[:start], fmt.Errorf("value %q contains the key separator %q", string(dst[start:]), sep)
	}
	return dst, nil
}

// MaxNestingLevels is how deep DynamoDB lets an item nest, the item itself
// being the first level: a top-level attribute holds at most 31 levels of
// lists and maps (measured on DynamoDB Local; sets are not a level).
const MaxNestingLevels = 32

// checkNesting reports a value that would nest deeper than DynamoDB allows
// when it sits inside enclosing levels (1 for a top-level attribute, the
// item). DynamoDB would refuse the whole item with a ValidationException;
// as a row error it names the row and the column, in plan as in run.
func checkNesting(av types.AttributeValue, enclosing int) error {
	if n := nesting(av); enclosing+n > MaxNestingLevels {
		return fmt.Errorf("the value nests %d levels of lists and maps, %d with the item around it; DynamoDB allows %d",
			n, enclosing+n, MaxNestingLevels)
	}
	return nil
}

// nesting counts the levels of lists and maps in av.
func nesting(av types.AttributeValue) int {
	deepest := 0
	switch v := av.(type) {
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			deepest = max(deepest, nesting(e))
		}
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			deepest = max(deepest, nesting(e))
		}
	default:
		return 0
	}
	return 1 + deepest
}
