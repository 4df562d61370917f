package mapping

import (
	"crypto/sha256"
	"encoding/hex"
)

// Mapping is a parsed, syntactically valid mapping file.
type Mapping struct {
	File string
	// Digest is the hex SHA-256 of the bytes File was parsed from: what a
	// resumed run compares to be sure it continues the same mapping.
	Digest string

	Table        string // target DynamoDB table
	PartitionKey string // attribute name of the table's partition key, e.g. "PK"
	SortKey      string // attribute name of the sort key, e.g. "SK"; "" when the table has none
	// PartitionKeyType and SortKeyType are the key attributes' DynamoDB
	// types: S (default), N or B.
	PartitionKeyType, SortKeyType KeyType
	// EntityAttribute is the attribute that records each item's entity name,
	// so that items of different types can be told apart in the table.
	EntityAttribute string
	// Separator joins the parts of composite keys. A value that contains it
	// would make keys ambiguous, so such a value is a row error.
	Separator string
	Schema    string // default source schema

	Indexes  []*Index
	Entities []*Entity
	// AccessPatterns are the questions the table is designed to answer,
	// each with its DynamoDB operation and the same question in SQL.
	AccessPatterns []*AccessPattern

	Pos Pos
}

// KeyType is the DynamoDB type of a key attribute.
type KeyType string

// The key types: string, number and binary.
const (
	KeyString KeyType = "S"
	KeyNumber KeyType = "N"
	KeyBinary KeyType = "B"
)

// Index is a secondary index declared for the target table: global (its
// own partition key) or local (Local: the table's partition key, its own
// sort key; it must be created with the table).
type Index struct {
	Name         string
	Local        bool
	PartitionKey string // for a local index, the table's partition key
	SortKey      string // "" when the index has no sort key
	// PartitionKeyType and SortKeyType are S, N or B.
	PartitionKeyType, SortKeyType KeyType
	Projection                    Projection
	Pos                           Pos
}

// ProjectionType says which attributes an index copies from the table.
type ProjectionType string

const (
	ProjectAll      ProjectionType = "ALL"       // every attribute (default)
	ProjectKeysOnly ProjectionType = "KEYS_ONLY" // the table's and the index's keys
	ProjectInclude  ProjectionType = "INCLUDE"   // the keys and NonKeyAttributes
)

// Projection is an index's projection.
type Projection struct {
	Type             ProjectionType
	NonKeyAttributes []Ref // INCLUDE only
	Pos              Pos
}

// Entity produces one item per row of its source table.
type Entity struct {
	Name   string
	Schema string // source schema
	From   string // source table
	PK, SK *Template

	// Columns "*" selects every column under its own name; Exclude removes
	// some of them. Explicit Attributes add to or override that selection.
	AllColumns bool
	Exclude    []Ref
	Attributes []*Attribute
	Indexes    []*EntityIndex
	Embeds     []*Embed // child rows as one complex attribute (rule 1)
	Copies     []*Copy  // parent columns duplicated onto the item (rule 2)
	// Where keeps the entity to the rows it holds for; nil = every row.
	Where *Condition

	Pos, FromPos Pos
}

// JoinPair is one equality of a join: Column of the joined table equals
// Other, a column of the row it attaches to.
type JoinPair struct {
	Column, Other string
	Pos           Pos
}

// Embed turns the child rows of each entity row into one attribute: a map
// keyed by a column, or a list in a declared order. Max bounds the number of
// children; a parent with more is a row error, never truncated.
type Embed struct {
	Attribute string
	Schema    string
	From      string
	Join      []JoinPair
	As        string // "map" or "list"
	By        Ref    // map key column (as: map)
	Order     []Ref  // list order (default: the child table's primary key)
	Max       int

	AllColumns bool
	Exclude    []Ref
	Attributes []*Attribute

	Pos, FromPos, MaxPos Pos
}

// Copy duplicates columns of a parent row (found through Join, which must
// match a unique key of the parent) onto each item; nested Copies follow
// further foreign-key hops from that parent. A row without a parent gets no
// copied attributes.
//
// Into puts the copied attributes into one map attribute of that name
// instead of onto the item itself (nested copies land inside it too).
// Templates and where clauses name a copied column as {into.column}, or
// {table.column} when the copy has no into.
type Copy struct {
	Schema     string
	From       string
	Join       []JoinPair
	Attributes []*Attribute
	Copies     []*Copy
	Into       string

	Pos, FromPos, IntoPos Pos
}

// Name is how templates and where clauses refer to the copy: its into, or
// its table.
func (c *Copy) Name() string {
	if c.Into != "" {
		return c.Into
	}
	return c.From
}

// Shard spreads a hot index partition key over Count partitions: the
// {shard} placeholder becomes hash(By column) mod Count, or a hash of the
// row's key when By is empty ("random", but the same on every run so that
// re-runs and verification agree). Count 0 means auto: computed from the
// measured average item size and ReadRate (items per second to be read
// from one index partition key at peak).
type Shard struct {
	Count    int
	ReadRate int64
	By       string
	Pos      Pos
	ByPos    Pos
}

// Ref is a name with the position where the file mentions it.
type Ref struct {
	Name string
	Pos  Pos
}

// Conversion says how a column value becomes a DynamoDB value when the
// default for its type is not wanted.
type Conversion string

// The conversions a mapping can ask for; AsDefault is the type's default.
const (
	AsDefault     Conversion = ""
	AsString      Conversion = "string"        // S: the value's canonical text
	AsNumber      Conversion = "number"        // N
	AsEpochSecond Conversion = "epoch_seconds" // N: seconds since 1970 (timestamps, dates)
	AsEpochMilli  Conversion = "epoch_millis"  // N: milliseconds since 1970
	AsSet         Conversion = "set"           // SS/NS/BS from an array; an empty set is omitted
	AsList        Conversion = "list"          // L from an array (the default)
	AsJSON        Conversion = "json"          // M/L from json/jsonb (the default for them)
)

var conversions = []Conversion{AsString, AsNumber, AsEpochSecond, AsEpochMilli, AsSet, AsList, AsJSON}

// NullMode says what a NULL column value becomes.
type NullMode string

const (
	NullOmit NullMode = "omit" // the attribute is left out (default)
	NullKeep NullMode = "null" // the attribute is written as {NULL: true}
)

// Attribute is one item attribute taken from a source column.
type Attribute struct {
	Name      string
	Column    string
	As        Conversion
	Null      NullMode
	Pos       Pos // the attribute's name
	ColumnPos Pos // where the column is named (the name itself when implied)
}

// EntityIndex gives an entity's items the key attributes of one index. An
// item whose template input is NULL gets no index attributes and so stays out
// of the index (a sparse index); so does one whose row fails Where, and,
// with EmptyAbsent, one whose template input is an empty string or binary.
// PK is nil for a local index (it shares the table's partition key).
type EntityIndex struct {
	Index       string
	PK, SK      *Template
	Shard       *Shard
	Where       *Condition
	EmptyAbsent bool
	Pos         Pos
}

// ShardPlaceholder is the template name for the shard number.
const ShardPlaceholder = "shard"

// digest is the hex SHA-256 of a mapping file's bytes.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
