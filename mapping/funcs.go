package mapping

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/internal/pgkind"
)

// Template functions. Each takes the value of a placeholder (or the result
// of the function before it) and yields key text. They are the only ways a
// template changes a value, so each one is order-preserving or says why not.
//
//	lower, upper            Unicode case mapping of text
//	nfc, nfd, nfkc, nfkd    Unicode normalization forms of text
//	year, month, day        parts of a date or timestamp (UTC): 2024, 05, 01; in a number
//	                        key any year (1 BC is -1, as extract(year) says)
//	date                    the date of a timestamp (UTC): 2024-05-01
//	signed:W                an integer of up to W digits, fixed width, sorting in
//	                        numeric order with negatives first: 42 -> 0000000042,
//	                        -42 -> -9999999957 (each digit d of a negative becomes 9-d)
//	decimal:I.F             a number with up to I integer and F fraction digits, fixed
//	                        width and sorting like signed: 19.9 -> 000019.90 (decimal:6.2)
const (
	FuncLower   = "lower"
	FuncUpper   = "upper"
	FuncNFC     = "nfc"
	FuncNFD     = "nfd"
	FuncNFKC    = "nfkc"
	FuncNFKD    = "nfkd"
	FuncYear    = "year"
	FuncMonth   = "month"
	FuncDay     = "day"
	FuncDate    = "date"
	FuncSigned  = "signed"
	FuncDecimal = "decimal"
)

var funcNames = []string{FuncLower, FuncUpper, FuncNFC, FuncNFD, FuncNFKC, FuncNFKD, FuncYear, FuncMonth, FuncDay, FuncDate, FuncSigned, FuncDecimal}

// maxEncodedDigits bounds signed and decimal widths: DynamoDB numbers and
// PostgreSQL bigints fit.
const maxEncodedDigits = 38

// FuncArgs parses a function's argument: signed:W gives (W, 0), decimal:I.F
// gives (I, F); other functions take none.
func FuncArgs(f Func) (digits, scale int, err error) {
	switch f.Name {
	case FuncSigned:
		w, err := strconv.Atoi(f.Arg)
		if err != nil || w < 1 || w > 19 {
			return 0, 0, fmt.Errorf("signed needs a width from 1 to 19 digits (bigint has 19): signed:10, not %q", f.Arg)
		}
		return w, 0, nil
	case FuncDecimal:
		is, fs, ok := strings.Cut(f.Arg, ".")
		i, err1 := strconv.Atoi(is)
		fr, err2 := strconv.Atoi(fs)
		if !ok || err1 != nil || err2 != nil || i < 1 || fr < 0 || i+fr > maxEncodedDigits {
			return 0, 0, fmt.Errorf("decimal needs integer.fraction digits, at most %d in all: decimal:10.2, not %q", maxEncodedDigits, f.Arg)
		}
		return i, fr, nil
	}
	if f.Arg != "" {
		return 0, 0, fmt.Errorf("%s takes no argument (remove :%s)", f.Name, f.Arg)
	}
	return 0, 0, nil
}

// checkFuncName reports an unknown function, with a suggestion.
func checkFuncName(name string) string {
	if contains(funcNames, name) {
		return ""
	}
	return fmt.Sprintf("unknown function %q%s; functions are %s", name, suggest(name, funcNames), strings.Join(funcNames, ", "))
}

// FuncResult is the kind of value a function yields for an input kind, or
// a message saying why it does not apply.
func FuncResult(name string, in pgkind.Kind) (pgkind.Kind, string) {
	switch name {
	case FuncLower, FuncUpper, FuncNFC, FuncNFD, FuncNFKC, FuncNFKD:
		if in == pgkind.Text {
			return pgkind.Text, ""
		}
		return 0, "applies to text"
	case FuncYear, FuncMonth, FuncDay:
		if in == pgkind.Date || in == pgkind.Timestamp || in == pgkind.Timestamptz {
			return pgkind.Int, ""
		}
		return 0, "applies to dates and timestamps"
	case FuncDate:
		if in == pgkind.Date || in == pgkind.Timestamp || in == pgkind.Timestamptz {
			return pgkind.Date, ""
		}
		return 0, "applies to dates and timestamps"
	case FuncSigned:
		if in == pgkind.Int {
			return pgkind.Text, ""
		}
		return 0, "applies to integers (decimal:I.F encodes numerics)"
	case FuncDecimal:
		if in == pgkind.Int || in == pgkind.Numeric {
			return pgkind.Text, ""
		}
		return 0, "applies to integers and numerics"
	}
	return 0, "is not a function"
}

// EncodingChars are the characters other than digits a function's output
// may hold, so that validation can refuse a separator that would make keys
// ambiguous.
func EncodingChars(name string) string {
	switch name {
	case FuncSigned:
		return "-"
	case FuncDecimal:
		return "-."
	case FuncDate:
		return "-"
	}
	return ""
}

// TimeLiteral parses a date or timestamp literal of a where clause:
// 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.ffffff]' (or with T), optionally
// with Z or a ±hh:mm offset; without one it is UTC (the snapshot's
// TimeZone). 'infinity' and '-infinity' give inf +1 and -1.
func TimeLiteral(s string, k pgkind.Kind) (t time.Time, inf int, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "infinity":
		return time.Time{}, 1, nil
	case "-infinity":
		return time.Time{}, -1, nil
	}
	s = strings.TrimSpace(s)
	if k == pgkind.Date {
		t, err = time.Parse("2006-01-02", s)
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("%q is not a date: write 'YYYY-MM-DD'", s)
		}
		return t, 0, nil
	}
	for _, layout := range []string{
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07",
		"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			if k == pgkind.Timestamp {
				// timestamp without time zone ignores an offset, as PostgreSQL does.
				t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			}
			return t.UTC(), 0, nil
		}
	}
	return time.Time{}, 0, fmt.Errorf("%q is not a timestamp: write 'YYYY-MM-DD HH:MM:SS', optionally with .ffffff and Z or +hh:mm", s)
}
