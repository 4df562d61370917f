package ddbvalue

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Limits of DynamoDB numbers: at most MaxDigits significant digits, the
// leading one at a power of ten from MinExponent to MaxExponent.
const (
	MaxDigits   = 38
	MaxExponent = 125
	MinExponent = -130
)

// maxExp bounds the exponent a text may write, far beyond DynamoDB's
// range, so that no sum of exponents and digit counts can overflow.
const maxExp = 1 << 30

// NumberError is a text DynamoDB would not accept as a number.
type NumberError struct {
	Text string // the text, as the message quotes it
	// Digits is the count of significant digits when there are more
	// than MaxDigits; OutOfRange is set for a magnitude beyond the limits.
	Digits     int
	OutOfRange bool
	// Syntax is the reason when the text is not a decimal at all.
	Syntax string
	// Hint, when not empty, is a remedy the message adds (a caller's
	// advice, such as a mapping option).
	Hint string
}

func (e *NumberError) Error() string {
	switch {
	case e.Syntax != "":
		return e.Syntax
	case e.OutOfRange:
		msg := e.Text + " is outside the range DynamoDB numbers can hold (1e-130 to 9.99e125"
		if e.Hint != "" {
			msg += "; " + e.Hint
		}
		return msg + ")"
	}
	msg := fmt.Sprintf("%s has %d significant digits; DynamoDB numbers hold at most %d", e.Text, e.Digits, MaxDigits)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Decimal is a parsed number: (-1)^Neg × Digits × 10^Exp, Digits without
// leading or trailing zeros ("" for zero, which is never negative).
type Decimal struct {
	Neg    bool
	Digits string
	Exp    int
}

// ParseDecimal reads the decimal syntax DynamoDB numbers are written in,
// [+-]digits[.digits][(e|E)[+-]digits], white space around it ignored, and
// no limits applied (see Number for those).
func ParseDecimal(s string) (Decimal, error) {
	d, _, err := parseDecimal(s)
	return d, err
}

// parseDecimal is ParseDecimal that also returns the text without its
// sign, as error messages quote it.
func parseDecimal(s string) (Decimal, string, error) {
	var d Decimal
	s = strings.TrimSpace(s)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		d.Neg = s[0] == '-'
		s = s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		e, err := strconv.Atoi(expPart)
		if err != nil || e > maxExp || e < -maxExp {
			return Decimal{}, s, &NumberError{Text: s, Syntax: fmt.Sprintf("%q is not a number", s)}
		}
		d.Exp = e
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart == "" && fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return Decimal{}, s, &NumberError{Text: s, Syntax: fmt.Sprintf("%q is not a number DynamoDB can hold", s)}
	}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	d.Exp -= len(fracPart)
	trimmed := strings.TrimRight(digits, "0")
	d.Exp += len(digits) - len(trimmed)
	d.Digits = trimmed
	if d.Digits == "" {
		d.Neg, d.Exp = false, 0
	}
	return d, s, nil
}

// Magnitude is the power of ten of the leading digit (0 for zero).
func (d Decimal) Magnitude() int {
	if d.Digits == "" {
		return 0
	}
	return d.Exp + len(d.Digits) - 1
}

// check applies DynamoDB's limits; text names the number in a message.
func (d Decimal) check(text string) error {
	if len(d.Digits) > MaxDigits {
		return &NumberError{Text: text, Digits: len(d.Digits)}
	}
	if mag := d.Magnitude(); d.Digits != "" && (mag > MaxExponent || mag < MinExponent) {
		// In the short form %g writes: a double near its limits has over
		// 300 digits in plain notation.
		return &NumberError{Text: scientific(d.Neg, d.Digits, mag), OutOfRange: true}
	}
	return nil
}

// String is the canonical text: plain notation, no leading zeros but the
// one before a point, no trailing zeros after it, no "-0".
func (d Decimal) String() string {
	if d.Digits == "" {
		return "0"
	}
	var out string
	switch {
	case d.Exp >= 0:
		out = d.Digits + strings.Repeat("0", d.Exp)
	case -d.Exp >= len(d.Digits):
		out = "0." + strings.Repeat("0", -d.Exp-len(d.Digits)) + d.Digits
	default:
		out = d.Digits[:len(d.Digits)+d.Exp] + "." + d.Digits[len(d.Digits)+d.Exp:]
	}
	if d.Neg {
		out = "-" + out
	}
	return out
}

// Number validates decimal text and returns DynamoDB's canonical form (no
// leading or trailing zeros, plain notation): the text DynamoDB gives back
// for the number. It rejects NaN, infinities, more than 38 significant
// digits and magnitudes outside 1e-130..9.99e125, with a *NumberError.
func Number(s string) (string, error) {
	if out, ok := plainNumber(s); ok {
		return out, nil
	}
	d, text, err := parseDecimal(s)
	if err != nil {
		return "", err
	}
	if err := d.check(text); err != nil {
		return "", err
	}
	return d.String(), nil
}

// CanonicalNumber is Number's text, or s itself when s is not a number
// DynamoDB can hold (DynamoDB refuses such a value, so nothing stored can
// equal it).
func CanonicalNumber(s string) string {
	if c, err := Number(s); err == nil {
		return c
	}
	return s
}

// plainNumber is Number for the common case, a plain decimal of at most 38
// characters (digits, a point between digits, a leading minus): its
// canonical form is a part of it, which costs no allocation. ok is false
// for anything else, which Number then handles.
func plainNumber(s string) (string, bool) {
	if len(s) == 0 || len(s) > MaxDigits {
		return "", false
	}
	neg := s[0] == '-'
	body := s
	if neg {
		body = s[1:]
	}
	if body == "" {
		return "", false
	}
	point := -1
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && point < 0 && i > 0 && i < len(body)-1:
			point = i
		default:
			return "", false
		}
	}
	intEnd, end := len(body), len(body)
	if point >= 0 {
		intEnd = point
		for end > point+1 && body[end-1] == '0' {
			end--
		}
		if end == point+1 {
			end = point // no fraction left, no point
		}
	}
	start := 0
	for start < intEnd && body[start] == '0' {
		start++
	}
	switch {
	case start == intEnd && end == intEnd:
		return "0", true
	case start == intEnd:
		start-- // the 0 before the point: "0.5"
	}
	if !neg {
		return body[start:end], true
	}
	if start > 0 {
		return "", false // the minus would not be next to the digits
	}
	return s[:1+end], true
}

// scientific writes significant digits with the power of ten of the
// first one as %g does: 1e+308, -2.5e-200.
func scientific(neg bool, digits string, mag int) string {
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteString("." + digits[1:])
	}
	fmt.Fprintf(&b, "e%+03d", mag)
	return b.String()
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Compare orders two decimals by value: -1, 0 or +1. It is exact for any
// number of digits.
func (d Decimal) Compare(e Decimal) int {
	sign := func(x Decimal) int {
		switch {
		case x.Digits == "":
			return 0
		case x.Neg:
			return -1
		}
		return 1
	}
	sd, se := sign(d), sign(e)
	if sd != se || sd == 0 {
		return cmp.Compare(sd, se)
	}
	c := cmp.Compare(d.Magnitude(), e.Magnitude())
	if c == 0 {
		// Same leading power: the digits, aligned there, compare as text
		// (neither has trailing zeros, so a prefix is the smaller).
		c = strings.Compare(d.Digits, e.Digits)
	}
	return sd * c
}

// CompareNumbers orders two number texts by value, as DynamoDB orders an
// N sort key. The error is ParseDecimal's for a text that is not a number.
func CompareNumbers(a, b string) (int, error) {
	x, err := ParseDecimal(a)
	if err != nil {
		return 0, err
	}
	y, err := ParseDecimal(b)
	if err != nil {
		return 0, err
	}
	return x.Compare(y), nil
}

// NumberSize is the stored size of an N value, by DynamoDB's rule: 1 byte
// plus 1 per two significant digits, the digits paired on the decimal
// point (base 100), plus 1 when negative, at most 21; zero is 1 byte. It
// is called for every number of every item written, so it reads the digits
// in place; for a text that is not a number (DynamoDB refuses it) it is
// the text's length.
func NumberSize(s string) int {
	neg, lo, hi, zero, ok := numberSpan(s)
	switch {
	case !ok:
		return len(s)
	case zero:
		return 1
	}
	// The digit at power p of ten belongs to the pair floor(p/2).
	pairs := floorDiv2(hi) - floorDiv2(lo) + 1
	n := 1 + pairs
	if neg {
		n++
	}
	return min(n, 21)
}

// numberSpan parses the syntax ParseDecimal reads and returns the powers
// of ten of the lowest and highest significant digits, without copying.
func numberSpan(s string) (neg bool, lo, hi int, zero, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return false, 0, 0, false, false
	}
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > maxExp || e < -maxExp {
			return false, 0, 0, false, false
		}
		exp, s = e, s[:i]
	}
	point := strings.IndexByte(s, '.')
	intLen := point
	if point < 0 {
		intLen = len(s)
	}
	first, last, n := -1, -1, 0 // positions in the digits, the point left out
	for i := 0; i < len(s); i++ {
		if i == point {
			continue
		}
		c := s[i]
		if c < '0' || c > '9' {
			return false, 0, 0, false, false
		}
		if c != '0' {
			if first < 0 {
				first = n
			}
			last = n
		}
		n++
	}
	switch {
	case n == 0:
		return false, 0, 0, false, false
	case first < 0:
		return false, 0, 0, true, true
	}
	return neg, intLen - 1 - last + exp, intLen - 1 - first + exp, false, true
}

func floorDiv2(p int) int {
	if p >= 0 {
		return p / 2
	}
	return -((-p + 1) / 2)
}
