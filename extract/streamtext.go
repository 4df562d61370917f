package extract

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// streamKinds are the built-in types whose values the logical replication
// stream (pgoutput, text form, under the settings Begin pins: DateStyle
// ISO, TimeZone UTC, extra_float_digits 1, bytea_output hex) sends as a
// text that determines exactly the value Rows reads: for these, a changed
// row can be rendered from the stream without reading it back. Left out on
// purpose: character(n), whose ::text (what Rows reads) drops the padding
// its output keeps; money, whose output depends on lc_monetary; inet and
// the other kinds Rows reads through a cast whose text differs from the
// output (inet::text adds /32); arrays; domains, enums and extension types,
// whose OIDs are not fixed.
var streamKinds = map[uint32]struct {
	kind   pgkind.Kind
	float4 bool
}{
	16:   {kind: pgkind.Bool},
	17:   {kind: pgkind.Bytea},
	19:   {kind: pgkind.Text}, // name
	20:   {kind: pgkind.Int},
	21:   {kind: pgkind.Int},
	23:   {kind: pgkind.Int},
	25:   {kind: pgkind.Text},
	114:  {kind: pgkind.JSON},
	700:  {kind: pgkind.Float, float4: true},
	701:  {kind: pgkind.Float},
	1043: {kind: pgkind.Text}, // varchar
	1082: {kind: pgkind.Date},
	1114: {kind: pgkind.Timestamp},
	1184: {kind: pgkind.Timestamptz},
	1700: {kind: pgkind.Numeric},
	2950: {kind: pgkind.UUID},
	3802: {kind: pgkind.JSON},
}

// StreamDecodable reports whether StreamValue can decode column c's values
// as the stream sends them for a column of type typeOID (the Relation
// message's): the type is one of the few whose stream text is exact, and
// it is the type the mapping was compiled against (a column whose type
// changed since is read back, and the schema check says why).
func StreamDecodable(c mapping.Column, typeOID uint32) bool {
	k, ok := streamKinds[typeOID]
	return ok && k.kind == c.Type.Kind && k.float4 == c.Type.Float4
}

// StreamValue decodes the stream's text of a non-NULL value of column c
// (StreamDecodable must hold) into the value Rows reads for it.
func StreamValue(c mapping.Column, s string) (any, error) {
	v, err := streamValue(c.Type, s)
	if err != nil {
		return nil, fmt.Errorf("column %s (%s): %w", c.Name, c.Type.Name, err)
	}
	return v, nil
}

func streamValue(t pgkind.Type, s string) (any, error) {
	switch t.Kind {
	case pgkind.Int:
		return strconv.ParseInt(s, 10, 64)
	case pgkind.Numeric:
		return Decimal(s), nil
	case pgkind.Float:
		// Shortest-exact text (extra_float_digits 1): it reads back as
		// the same bits; NaN and ±Infinity are spelled as ParseFloat reads
		// them.
		if t.Float4 {
			f, err := strconv.ParseFloat(s, 32)
			return float32(f), err
		}
		return strconv.ParseFloat(s, 64)
	case pgkind.Bool:
		switch s {
		case "t":
			return true, nil
		case "f":
			return false, nil
		}
		return nil, fmt.Errorf("bool %q", s)
	case pgkind.Bytea:
		h, ok := strings.CutPrefix(s, `\x`)
		if !ok {
			return nil, fmt.Errorf("bytea not in hex form")
		}
		return hex.DecodeString(h)
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		return parseTime(s, t.Kind)
	case pgkind.JSON:
		return JSON(s), nil
	case pgkind.Text, pgkind.UUID:
		return s, nil
	}
	return nil, fmt.Errorf("no stream decoding for kind %s", t.Kind)
}
