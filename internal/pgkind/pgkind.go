// Package pgkind classifies PostgreSQL column types into the few kinds the
// migration converts differently. It is shared by mapping validation (which
// columns may appear in a key), extraction (how a value is scanned) and the
// transform (which DynamoDB type a value becomes), so that the three agree.
package pgkind

import "strings"

// Kind is the conversion class of a PostgreSQL type.
type Kind int

const (
	Other       Kind = iota // interval, inet, money, ...: read as text
	Int                     // smallint, integer, bigint
	Numeric                 // numeric/decimal: exact
	Float                   // real, double precision
	Text                    // text, varchar, char, name, citext, enums
	UUID                    // uuid
	Bool                    // boolean
	Date                    // date
	Timestamp               // timestamp without time zone
	Timestamptz             // timestamp with time zone
	Bytea                   // bytea
	JSON                    // json, jsonb
	Array                   // one-dimensional or nested arrays of an element kind
)

var names = [...]string{"other", "int", "numeric", "float", "text", "uuid", "bool", "date", "timestamp", "timestamptz", "bytea", "json", "array"}

func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "unknown"
}

// Type is a column type as the catalog reports it.
type Type struct {
	Name string // format_type() spelling, e.g. "numeric(10,2)", "text[]"
	Kind Kind
	Elem Kind // element kind when Kind == Array
	// Float4 marks a Float (or an array of Float elements) of PostgreSQL's
	// real, 32 bits: its values print as the shortest decimal that reads
	// back as the same float4, as PostgreSQL shows them, not as the longer
	// decimal of the same value widened to 64 bits (0.1, not
	// 0.10000000149011612).
	Float4 bool
}

// Classify maps a base type name (pg_type.typname of the base type, after
// resolving domains) and its category (pg_type.typcategory) to a Kind. Enum
// types (category 'E') are text.
func Classify(typname string, category byte) Kind {
	switch strings.ToLower(typname) {
	case "int2", "int4", "int8", "smallint", "integer", "bigint", "oid":
		return Int
	case "numeric", "decimal", "money":
		// money's text form depends on lc_monetary ("$1,234.50"); it is read
		// as numeric instead, which is exact.
		return Numeric
	case "float4", "float8", "real", "double precision":
		return Float
	case "text", "varchar", "bpchar", "char", "name", "citext", "character varying", "character":
		return Text
	case "uuid":
		return UUID
	case "bool", "boolean":
		return Bool
	case "date":
		return Date
	case "timestamp", "timestamp without time zone":
		return Timestamp
	case "timestamptz", "timestamp with time zone":
		return Timestamptz
	case "bytea":
		return Bytea
	case "json", "jsonb":
		return JSON
	}
	if category == 'E' {
		return Text
	}
	return Other
}

// IsFloat4 reports whether typname (pg_type.typname of the base type, or of
// an array's element type) is real.
func IsFloat4(typname string) bool {
	switch strings.ToLower(typname) {
	case "float4", "real":
		return true
	}
	return false
}

// KeyUsable reports whether values of kind k have a canonical, sortable
// string form that may appear in a key template.
func (k Kind) KeyUsable() bool {
	switch k {
	case Int, Numeric, Text, UUID, Bool, Date, Timestamp, Timestamptz:
		return true
	}
	return false
}
