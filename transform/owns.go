package transform

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Owner tells whether an item found in the table could have been written
// by the plan: its entity attribute names one of the plan's entities, and
// every key it carries is one that entity's templates can render from
// values of the columns' types. It is the inverse of rendering a key, so
// it lives beside it: each placeholder's text must parse as a value of its
// column's type and render back to the same text (width, functions and
// shard range included). Prune deletes only what an Owner accepts; an item
// with CUSTOMER#abc where {customer_id} is a bigint is someone else's.
type Owner struct {
	sep      string
	entities map[string]*ownerEntity
}

type ownerEntity struct {
	pk, sk  *ownerKey // sk nil: the table has no sort key
	indexes []ownerIndex
}

// ownerIndex is one index key of an entity. Its attributes are optional
// (a sparse index), but an item has both or neither.
type ownerIndex struct {
	pk, sk *ownerKey // nil: the index has no such attribute of its own
}

type ownerKey struct {
	attr   string
	kp     keyPlan
	checks []func(string) bool // per template part; nil for literals
}

// Owner returns the ownership test of the plan. Call it after every
// "count: auto" shard count is set: a shard number must be below its count.
func (p *Plan) Owner() *Owner {
	o := &Owner{sep: p.Mapping.Separator, entities: map[string]*ownerEntity{}}
	m := p.Mapping
	for _, s := range p.Sources {
		for _, ep := range s.Entities {
			oe := &ownerEntity{pk: s.ownerKey(m.PartitionKey, ep.pk, nil)}
			if m.SortKey != "" {
				oe.sk = s.ownerKey(m.SortKey, ep.sk, nil)
			}
			for _, ip := range ep.indexes {
				oi := ownerIndex{}
				if ip.pkAttr != "" && ip.pk.t != nil {
					oi.pk = s.ownerKey(ip.pkAttr, ip.pk, ip)
				}
				if ip.skAttr != "" && ip.sk.t != nil {
					oi.sk = s.ownerKey(ip.skAttr, ip.sk, ip)
				}
				oe.indexes = append(oe.indexes, oi)
			}
			o.entities[ep.e.Name] = oe
		}
	}
	return o
}

// Owns reports whether an item of the named entity, whose key attributes
// attr returns as text (a string as it is, a number in any spelling, a
// binary as any non-empty text; ok false when the item lacks it), could
// have been written by the plan.
func (o *Owner) Owns(entity string, attr func(name string) (text string, ok bool)) bool {
	oe := o.entities[entity]
	if oe == nil {
		return false
	}
	for _, k := range []*ownerKey{oe.pk, oe.sk} {
		if k == nil {
			continue
		}
		v, ok := attr(k.attr)
		if !ok || !k.matches(v, o.sep) {
			return false
		}
	}
	for _, ix := range oe.indexes {
		present := 0
		for _, k := range []*ownerKey{ix.pk, ix.sk} {
			if k == nil {
				continue
			}
			v, ok := attr(k.attr)
			if !ok {
				continue
			}
			if !k.matches(v, o.sep) {
				return false
			}
			present++
		}
		if ix.pk != nil && ix.sk != nil && present == 1 {
			return false // an index's keys are written together or not at all
		}
	}
	return true
}

func (k *ownerKey) matches(v, sep string) bool {
	if k.kp.t == nil {
		return v == ""
	}
	if k.kp.typ == mapping.KeyNumber || k.kp.typ == mapping.KeyBinary {
		// One placeholder, the whole value: a number may hold the
		// separator ("-" of a negative), so it is not split.
		if len(k.checks) != 1 || k.checks[0] == nil {
			return v != "" // not a template validation lets through
		}
		return v != "" && k.checks[0](v)
	}
	return k.kp.t.MatchValues(v, sep, func(i int, text string) bool { return k.checks[i](text) })
}

func (s *Source) ownerKey(attr string, kp keyPlan, ip *indexPlan) *ownerKey {
	k := &ownerKey{attr: attr, kp: kp}
	if kp.t == nil {
		return k
	}
	k.checks = make([]func(string) bool, len(kp.t.Parts))
	for i, part := range kp.t.Parts {
		switch {
		case kp.cols[i] == -1:
		case kp.cols[i] == -2:
			k.checks[i] = shardCheck(ip)
		case kp.typ == mapping.KeyBinary:
			k.checks[i] = func(string) bool { return true }
		case kp.typ == mapping.KeyNumber:
			k.checks[i] = numberKeyCheck(part, s.column(kp.cols[i]).Type)
		default:
			k.checks[i] = textKeyCheck(part, s.column(kp.cols[i]).Type)
		}
	}
	return k
}

// shardCheck accepts the shard numbers an index can have: 0 to count-1
// as shardOf writes them (any number when the count is not known).
func shardCheck(ip *indexPlan) func(string) bool {
	return func(v string) bool {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || strconv.Itoa(n) != v {
			return false
		}
		return ip == nil || ip.shardCount < 1 || n < ip.shardCount
	}
}

// textKeyCheck accepts the texts a placeholder of a string key can
// render: AppendKeyText's, or the last function's.
func textKeyCheck(part mapping.Part, typ pgkind.Type) func(string) bool {
	if len(part.Funcs) == 0 {
		return kindText(typ, part.Width)
	}
	f := part.Funcs[len(part.Funcs)-1]
	switch f.Name {
	case mapping.FuncLower, mapping.FuncUpper, mapping.FuncNFC, mapping.FuncNFD, mapping.FuncNFKC, mapping.FuncNFKD:
		// Each is idempotent: its output is its own image.
		return func(v string) bool {
			out, err := applyFunc(f, v, false)
			return err == nil && out == v
		}
	case mapping.FuncYear:
		return func(v string) bool { return len(v) == 4 && allDigits(v) }
	case mapping.FuncMonth:
		return func(v string) bool { return twoDigits(v, 1, 12) }
	case mapping.FuncDay:
		return func(v string) bool { return twoDigits(v, 1, 31) }
	case mapping.FuncDate:
		return timeText(DateLayout)
	case mapping.FuncSigned:
		lo, hi := intRange(typ)
		return func(v string) bool {
			n, ok := decodeSigned(v)
			if !ok || n < lo || n > hi {
				return false
			}
			out, err := applyFunc(f, n, false)
			return err == nil && out == v
		}
	case mapping.FuncDecimal:
		return func(v string) bool {
			d, ok := decodeDecimal(v)
			if !ok || !fitsColumn(d, typ) {
				return false
			}
			out, err := applyFunc(f, extract.Decimal(d), false)
			return err == nil && out == v
		}
	}
	return func(string) bool { return true }
}

// kindText accepts the texts AppendKeyText writes for a value of typ.
func kindText(typ pgkind.Type, width int) func(string) bool {
	switch typ.Kind {
	case pgkind.Int:
		lo, hi := intRange(typ)
		return func(v string) bool {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < lo || n > hi {
				return false
			}
			out, err := KeyText(n, pgkind.Int, width, "")
			return err == nil && out == v
		}
	case pgkind.Numeric:
		scale := scaleOf(typ)
		return func(v string) bool {
			_, fp, _ := strings.Cut(v, ".")
			return pgNumericText(v) && fitsColumn(v, typ) && (scale < 0 || len(fp) == scale)
		}
	case pgkind.Text:
		return textOfType(typ.Name)
	case pgkind.UUID:
		return uuidText.MatchString
	case pgkind.Bool:
		return func(v string) bool { return v == "true" || v == "false" }
	case pgkind.Date:
		return timeText(DateLayout)
	case pgkind.Timestamp, pgkind.Timestamptz:
		return timeText(TimestampLayout)
	}
	return func(string) bool { return true }
}

// numberKeyCheck accepts the numbers a single-placeholder N key can hold.
func numberKeyCheck(part mapping.Part, typ pgkind.Type) func(string) bool {
	integer := func(lo, hi int64) func(string) bool {
		return func(v string) bool {
			n, err := Number(v)
			if err != nil {
				return false
			}
			i, err := strconv.ParseInt(n, 10, 64)
			return err == nil && i >= lo && i <= hi
		}
	}
	if len(part.Funcs) > 0 {
		switch part.Funcs[len(part.Funcs)-1].Name {
		case mapping.FuncYear:
			return integer(-4713, 294276) // PostgreSQL's years
		case mapping.FuncMonth:
			return integer(1, 12)
		case mapping.FuncDay:
			return integer(1, 31)
		}
		return func(v string) bool { _, err := Number(v); return err == nil }
	}
	switch typ.Kind {
	case pgkind.Int:
		return integer(intRange(typ))
	case pgkind.Numeric:
		return func(v string) bool {
			n, err := Number(v)
			return err == nil && fitsColumn(n, typ)
		}
	}
	return func(v string) bool { _, err := Number(v); return err == nil }
}

// intRange is the range of an integer column's type.
func intRange(typ pgkind.Type) (lo, hi int64) {
	switch typ.Name {
	case "smallint":
		return -1 << 15, 1<<15 - 1
	case "integer":
		return -1 << 31, 1<<31 - 1
	case "oid":
		return 0, 1<<32 - 1
	}
	return -1 << 63, 1<<63 - 1
}

var (
	uuidText    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	typmodText  = regexp.MustCompile(`^(?:numeric|character varying|character)\((\d+)(?:,(\d+))?\)$`)
	octalEscape = regexp.MustCompile(`^\\[0-3][0-7][0-7]$`)
)

// pgNumericText accepts numeric text as PostgreSQL prints it: no exponent,
// no leading zeros, no "+", no negative zero, and a number DynamoDB holds.
func pgNumericText(v string) bool {
	body := strings.TrimPrefix(v, "-")
	ip, fp, point := strings.Cut(body, ".")
	switch {
	case ip == "" || !allDigits(ip) || point && (fp == "" || !allDigits(fp)):
		return false
	case len(ip) > 1 && ip[0] == '0':
		return false
	case body != v && strings.Trim(ip+fp, "0") == "":
		return false
	}
	_, err := Number(v)
	return err == nil
}

// fitsColumn reports whether the decimal text v is a value of the
// integer or numeric column: within an integer type's range; with
// numeric(p,s), at most p-s integer and s fraction digits (trailing zeros
// aside); money has 2 fraction digits.
func fitsColumn(v string, typ pgkind.Type) bool {
	sign := ""
	if strings.HasPrefix(v, "-") {
		sign = "-"
	}
	ip, fp, _ := strings.Cut(strings.TrimPrefix(v, sign), ".")
	ip, fp = strings.TrimLeft(ip, "0"), strings.TrimRight(fp, "0")
	switch {
	case typ.Kind == pgkind.Int:
		if fp != "" {
			return false
		}
		if ip == "" {
			return true
		}
		lo, hi := intRange(typ)
		n, err := strconv.ParseInt(sign+ip, 10, 64)
		return err == nil && n >= lo && n <= hi
	case typ.Name == "money":
		return len(fp) <= 2
	}
	p, s, ok := numericTypmod(typ.Name)
	return !ok || len(ip) <= p-s && len(fp) <= s
}

// scaleOf is the number of fraction digits PostgreSQL prints for every
// value of a numeric column, -1 when it varies (numeric without typmod).
func scaleOf(typ pgkind.Type) int {
	if typ.Name == "money" {
		return 2
	}
	if _, s, ok := numericTypmod(typ.Name); ok {
		return s
	}
	return -1
}

// numericTypmod parses numeric(p,s) and numeric(p) (scale 0).
func numericTypmod(name string) (p, s int, ok bool) {
	m := typmodText.FindStringSubmatch(name)
	if m == nil || !strings.HasPrefix(name, "numeric") {
		return 0, 0, false
	}
	p, _ = strconv.Atoi(m[1])
	s, _ = strconv.Atoi(m[2])
	return p, s, true
}

// textOfType accepts the text a text column can hold: varchar(n) and
// char(n) at most n characters (char without its trailing blanks, which
// the cast to text drops), "char" one byte, name 63 bytes.
func textOfType(name string) func(string) bool {
	switch name {
	case `"char"`:
		return func(v string) bool { return len(v) == 1 && v[0] < 0x80 || octalEscape.MatchString(v) }
	case "name":
		return func(v string) bool { return len(v) <= 63 }
	}
	m := typmodText.FindStringSubmatch(name)
	if m == nil || m[2] != "" || strings.HasPrefix(name, "numeric") {
		return func(string) bool { return true }
	}
	n, _ := strconv.Atoi(m[1])
	blankPadded := strings.HasPrefix(name, "character(")
	return func(v string) bool {
		return utf8.RuneCountInString(v) <= n && !(blankPadded && strings.HasSuffix(v, " "))
	}
}

// timeText accepts the texts a layout writes: parsing and writing again
// gives the same text (so no 2024-02-30, no offset other than Z).
func timeText(layout string) func(string) bool {
	return func(v string) bool {
		t, err := time.Parse(layout, v)
		return err == nil && t.UTC().Format(layout) == v
	}
}

func twoDigits(v string, lo, hi int) bool {
	if len(v) != 2 || !allDigits(v) {
		return false
	}
	n, _ := strconv.Atoi(v)
	return n >= lo && n <= hi
}

// decodeSigned reverses signed:W's encoding.
func decodeSigned(v string) (int64, bool) {
	neg := strings.HasPrefix(v, "-")
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || !allDigits(digits) {
		return 0, false
	}
	if neg {
		digits = complement(digits)
	}
	mag, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if !neg {
		if mag > 1<<63-1 {
			return 0, false
		}
		return int64(mag), true
	}
	if mag == 0 || mag > 1<<63 {
		return 0, false // -0 is never written: 0 is not negative
	}
	return -int64(mag-1) - 1, true
}

// decodeDecimal reverses decimal:I.F's encoding into decimal text.
func decodeDecimal(v string) (string, bool) {
	neg := strings.HasPrefix(v, "-")
	body := strings.TrimPrefix(v, "-")
	ip, fp, point := strings.Cut(body, ".")
	if ip == "" || !allDigits(ip) || !allDigits(fp) || point && fp == "" {
		return "", false
	}
	if neg {
		ip, fp = complement(ip), complement(fp)
		if strings.Trim(ip+fp, "0") == "" {
			return "", false // -0 is written as 0
		}
	}
	d := ip
	if fp != "" {
		d += "." + fp
	}
	if neg {
		d = "-" + d
	}
	return d, true
}

func complement(digits string) string {
	b := []byte(digits)
	for i, c := range b {
		b[i] = '9' - (c - '0')
	}
	return string(b)
}
