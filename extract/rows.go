package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// Decimal is the exact text of a numeric value as PostgreSQL prints it
// (scale kept: "19.90"), or "NaN", "Infinity", "-Infinity".
type Decimal string

// JSON is the text of a json or jsonb value.
type JSON string

// Infinity is a date or timestamp of +infinity (Sign 1) or -infinity (-1).
type Infinity struct{ Sign int }

// OffsetArray stands for an array whose lower bounds are not all 1
// ('[0:1]={1,2}', array_dims "[0:1]"): nested lists have no place for the
// bounds, so the transform refuses it rather than shift its subscripts.
// Values are its elements as an array from 1 would hold them, for reports.
type OffsetArray struct {
	Dims   string
	Values []any
}

// Query says what to read from one table, with the parent rows joined to
// it (for copied attributes) and child rows aggregated into it (for
// embedded attributes), so that Postgres does the joining inside the
// snapshot and the stream stays one row per base row.
type Query struct {
	Schema, Table string
	Columns       []mapping.Column // base table columns, in this order
	Joins         []Join           // parents, LEFT JOINed in order
	Embeds        []Embed          // children, one aggregated value each
	// OrderBy names the base table's key columns rows are read in; each
	// must be in Columns. A resumed read passes After, the values of those
	// columns in the last row already done.
	OrderBy []string
	After   []any
	// Until, when set, ends the read at the row with this key (included):
	// After and Until bound one range of a table split for parallel
	// readers.
	Until []any
	// Match, when set, reads only the rows whose columns equal one of its
	// tuples (rows by key, or by a parent's key); each row then ends with
	// one more value, the index of the tuple it matched.
	Match *Match
	// Limit stops after this many rows (0 = all); used for sampling.
	Limit int
}

// Row is one source row; Values are laid out as Query.Width says. NULL is
// nil; an embed's value is a []Row of the child columns.
type Row struct {
	Values []any
}

// Join adds a parent table: at most one row (the join columns cover a
// unique key) whose Columns are appended to the row, NULL when no parent.
type Join struct {
	Schema, Table string
	// On pairs columns of this table with columns of an earlier relation:
	// Ref -1 is the base table, i is Joins[i].
	On      []JoinOn
	Columns []mapping.Column
}

// JoinOn is one equality of a join or embed condition.
type JoinOn struct {
	Column    string // in the joined (or embedded) table
	Ref       int    // -1 base table, else index into Joins
	RefColumn string
}

// Embed aggregates child rows matching the base row into one value: a
// []Row in OrderBy order, at most Limit rows (callers ask for max+1 to
// detect an overflow without reading every child).
type Embed struct {
	Schema, Table string
	On            []JoinOn // Ref must be -1 (the base table)
	Columns       []mapping.Column
	OrderBy       []string
	Limit         int
	// Desc orders by OrderBy descending, NULLs last: the first row is the
	// greatest (an aggregate's latest).
	Desc bool
	// Where keeps only the child rows it accepts (nil: all of them);
	// WhereColumns are the child columns it reads, typed. Its literals go
	// as parameters.
	Where        *mapping.Condition
	WhereColumns []mapping.Column
	// Agg, when set (count, sum, min or max), makes the value one
	// aggregate of the matching rows over AggColumn ("" for count of
	// rows): a []Row of one row whose one value is typed by Columns[0].
	Agg       mapping.AggFunc
	AggColumn string
	// Aggregate names the item attribute the value is for when it is an
	// aggregate's (latest included); "" for embedded children. For
	// messages.
	Aggregate string
}

// Reads lists the child columns the embed's value depends on: the
// columns it reads, orders and filters by, and the aggregated column
// (not its join columns).
func (e Embed) Reads() []string {
	var out []string
	add := func(c string) {
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if e.Agg == "" {
		for _, c := range e.Columns {
			add(c.Name)
		}
	}
	add(e.AggColumn)
	for _, c := range e.OrderBy {
		add(c)
	}
	for _, c := range e.WhereColumns {
		add(c.Name)
	}
	return out
}

// Width is the number of values in each Row of q: base columns, then each
// join's columns, then one value per embed.
func (q Query) Width() int {
	n := len(q.Columns)
	for _, j := range q.Joins {
		n += len(j.Columns)
	}
	n += len(q.Embeds)
	if q.Match != nil {
		n++
	}
	return n
}

// alias names relations in generated SQL: t for the base table, j0.. for
// joins, e0.. for embeds.
func alias(ref int) string {
	if ref < 0 {
		return "t"
	}
	return fmt.Sprintf("j%d", ref)
}

// SQL returns the statement and arguments for q. Identifiers are quoted.
func (q Query) SQL() (string, []any, error) {
	var b strings.Builder
	b.WriteString("SELECT ")
	first := true
	sep := func() {
		if !first {
			b.WriteString(", ")
		}
		first = false
	}
	for _, c := range q.Columns {
		sep()
		b.WriteString(selectExpr("t", c))
	}
	for i, j := range q.Joins {
		for _, c := range j.Columns {
			sep()
			b.WriteString(selectExpr(alias(i), c))
		}
	}
	var args []any // the embeds' filter literals come first
	for i, e := range q.Embeds {
		sep()
		expr, err := embedExpr(i, e, &args)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(expr)
	}
	if q.Match != nil {
		sep()
		b.WriteString(matchOrdinal)
	}
	b.WriteString(" FROM ")
	b.WriteString(pgx.Identifier{q.Schema, q.Table}.Sanitize())
	b.WriteString(" AS t")
	for i, j := range q.Joins {
		fmt.Fprintf(&b, " LEFT JOIN %s AS %s ON ", pgx.Identifier{j.Schema, j.Table}.Sanitize(), alias(i))
		for k, on := range j.On {
			if k > 0 {
				b.WriteString(" AND ")
			}
			fmt.Fprintf(&b, "%s.%s = %s.%s", alias(i), pgx.Identifier{on.Column}.Sanitize(), alias(on.Ref), pgx.Identifier{on.RefColumn}.Sanitize())
		}
	}
	if q.Match != nil {
		join, err := q.Match.join(q, &args)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(join)
	}
	where := " WHERE ("
	for _, bound := range []struct {
		op  string
		pos []any
	}{{">", q.After}, {"<=", q.Until}} {
		if len(bound.pos) == 0 {
			continue
		}
		if len(bound.pos) != len(q.OrderBy) {
			return "", nil, fmt.Errorf("extract %s.%s: a key position has %d values for %d key columns", q.Schema, q.Table, len(bound.pos), len(q.OrderBy))
		}
		b.WriteString(where)
		where = " AND ("
		for i, k := range q.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("t." + pgx.Identifier{k}.Sanitize())
		}
		b.WriteString(") " + bound.op + " (")
		for i := range bound.pos {
			if i > 0 {
				b.WriteString(", ")
			}
			// Cast the parameter to the column's type so that text
			// positions compare as the column does.
			fmt.Fprintf(&b, "$%d::%s", len(args)+1, q.castType(q.OrderBy[i]))
			args = append(args, positionArg(bound.pos[i]))
		}
		b.WriteString(")")
	}
	if len(q.OrderBy) > 0 {
		b.WriteString(" ORDER BY ")
		for i, k := range q.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("t." + pgx.Identifier{k}.Sanitize())
		}
	}
	if q.Limit > 0 {
		fmt.Fprintf(&b, " LIMIT %d", q.Limit)
	}
	return b.String(), args, nil
}

// embedExpr aggregates the first Limit matching child rows, in order, into
// a JSON array of arrays (one inner array of column values per child). JSON
// keeps numeric digits exactly; Rows decodes each value back by the child
// column's type.
func embedExpr(i int, e Embed, args *[]any) (string, error) {
	if e.Agg != "" {
		return aggregateExpr(i, e, args)
	}
	a := fmt.Sprintf("e%d", i)
	var cols, order []string
	for k, c := range e.Columns {
		cols = append(cols, fmt.Sprintf("%s AS c%d", jsonExpr(a, c), k))
	}
	for _, o := range e.OrderBy {
		by := a + "." + pgx.Identifier{o}.Sanitize()
		if e.Desc {
			by += " DESC NULLS LAST"
		}
		order = append(order, by)
	}
	where, err := e.whereSQL(a, args)
	if err != nil {
		return "", err
	}
	var inner []string
	for k := range e.Columns {
		inner = append(inner, fmt.Sprintf("x.c%d", k))
	}
	sub := fmt.Sprintf("SELECT %s FROM %s AS %s WHERE %s", strings.Join(cols, ", "), pgx.Identifier{e.Schema, e.Table}.Sanitize(), a, where)
	if len(order) > 0 {
		sub += " ORDER BY " + strings.Join(order, ", ")
	}
	if e.Limit > 0 {
		sub += fmt.Sprintf(" LIMIT %d", e.Limit)
	}
	return fmt.Sprintf("(SELECT coalesce(json_agg(json_build_array(%s)), '[]')::text FROM (%s) AS x)", strings.Join(inner, ", "), sub), nil
}

// jsonExpr is a child column as it goes into JSON: types whose JSON form is
// not exact or not parseable back go through text.
func jsonExpr(a string, c mapping.Column) string {
	return jsonValue(a+"."+pgx.Identifier{c.Name}.Sanitize(), c)
}

// jsonValue is jsonExpr for any expression id of c's type.
func jsonValue(id string, c mapping.Column) string {
	switch c.Type.Kind {
	case pgkind.Numeric:
		return id + "::numeric"
	case pgkind.Int:
		return id + "::int8" // an oid would be a JSON string
	case pgkind.Bool:
		return id
	case pgkind.JSON:
		// As the text of the json, a JSON string: a json null would be the
		// same null as a NULL column.
		return "to_json(" + id + "::text)"
	case pgkind.Float:
		// float8 text output is shortest-exact; NaN/Infinity stay strings.
		return id + "::text"
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		return id + "::text"
	case pgkind.Bytea:
		return "encode(" + id + ", 'base64')"
	case pgkind.Array:
		// to_json keeps an array's dimensions, and an empty array is [];
		// json and bytea elements go as text (a bytea as \x hex).
		switch c.Type.Elem {
		case pgkind.Numeric:
			return "to_json(" + id + "::numeric[])"
		case pgkind.Int:
			return "to_json(" + id + "::int8[])"
		case pgkind.Bool:
			return "to_json(" + id + ")"
		default:
			return "to_json(" + id + "::text[])"
		}
	}
	return id + "::text"
}

// castType is the SQL type name of an order-by column, for the keyset
// parameter. format_type output is already valid, quoted SQL.
func (q Query) castType(col string) string {
	for _, c := range q.Columns {
		if c.Name == col {
			return c.Type.Name
		}
	}
	return "text"
}

// positionArg turns a decoded value back into a query parameter.
func positionArg(v any) any {
	switch v := v.(type) {
	case Decimal:
		return string(v)
	case JSON:
		return string(v)
	}
	return v
}

func selectExpr(a string, c mapping.Column) string {
	id := a + "." + pgx.Identifier{c.Name}.Sanitize()
	switch c.Type.Kind {
	case pgkind.Text, pgkind.UUID, pgkind.JSON, pgkind.Other:
		return id + "::text"
	case pgkind.Int:
		return id + "::int8"
	case pgkind.Numeric:
		// money reads as numeric too. As text: the server prints numeric
		// exactly, scale kept, which is Decimal; cheaper than decoding
		// the binary form through math/big.
		return id + "::numeric::text"
	case pgkind.Float:
		if c.Type.Float4 {
			return id + "::float4" // the domain's base type; decoded as float32
		}
		return id + "::float8"
	case pgkind.Array:
		switch c.Type.Elem {
		case pgkind.Int:
			return id + "::int8[]"
		case pgkind.Float:
			if c.Type.Float4 {
				return id + "::float4[]"
			}
			return id + "::float8[]"
		case pgkind.Numeric:
			return id + "::numeric[]"
		case pgkind.Bool, pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz, pgkind.Bytea:
			return id
		default:
			return id + "::text[]"
		}
	}
	return id
}

// Rows streams the rows of q inside the snapshot.
func (s *Snapshot) Rows(ctx context.Context, q Query) iter.Seq2[Row, error] {
	return Rows(ctx, s.tx, q)
}

// Rows streams the rows of q through any querier.
func Rows(ctx context.Context, db querier, q Query) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		where := q.Schema + "." + q.Table
		sql, args, err := q.SQL()
		if err != nil {
			yield(Row{}, err)
			return
		}
		rows, err := db.Query(ctx, sql, args...)
		if err != nil {
			yield(Row{}, fmt.Errorf("extract %s: %w", where, err))
			return
		}
		defer rows.Close()
		cols := q.Columns
		for _, j := range q.Joins {
			cols = append(cols[:len(cols):len(cols)], j.Columns...)
		}
		targets := make([]any, 0, q.Width())
		for _, c := range cols {
			targets = append(targets, scanTarget(c.Type))
		}
		for range q.Embeds {
			targets = append(targets, new(pgtype.Text))
		}
		match := -1 // position of the match's tuple index, if any
		if q.Match != nil {
			match = len(targets)
			targets = append(targets, new(pgtype.Int8))
		}
		var plan []rawDecoder // chosen at the first row, when the fields are known
		var text []byte       // the row's text values, to become one string
		for rows.Next() {
			raws := rows.RawValues()
			if plan == nil {
				plan = rawPlan(rows.FieldDescriptions(), cols, len(targets))
				if match >= 0 {
					plan[match] = decodeScan // an int8 past the columns: pgx
				}
			}
			// Text values share one string per row: one allocation for
			// all of them.
			text = text[:0]
			for i, d := range plan {
				if d == decodeText && raws[i] != nil {
					text = append(text, raws[i]...)
				}
			}
			rowText := string(text)
			vals := make([]any, len(targets))
			for i, d := range plan {
				raw := raws[i]
				var v any
				var err error
				switch {
				case raw == nil && d != decodeScan:
					v = nil
				case d == decodeText:
					str := rowText[:len(raw)]
					rowText = rowText[len(raw):]
					if i < len(cols) {
						v = textValue(str, cols[i].Type.Kind)
					} else {
						e := q.Embeds[i-len(cols)]
						if v, err = decodeEmbed(str, e.Columns); err != nil {
							err = fmt.Errorf("embedded %s.%s: %w", e.Schema, e.Table, err)
						}
					}
				case d == decodeScan:
					fd := rows.FieldDescriptions()[i]
					if err = rows.Conn().TypeMap().Scan(fd.DataTypeOID, fd.Format, raw, targets[i]); err == nil {
						switch {
						case i < len(cols):
							v, err = decode(targets[i], cols[i].Type)
						case i == match:
							v = targets[i].(*pgtype.Int8).Int64
						default:
							e := q.Embeds[i-len(cols)]
							if v, err = decodeEmbed(targets[i].(*pgtype.Text).String, e.Columns); err != nil {
								err = fmt.Errorf("embedded %s.%s: %w", e.Schema, e.Table, err)
							}
						}
					}
				default:
					v, err = d.binary(raw)
				}
				if err != nil {
					yield(Row{}, fmt.Errorf("extract %s: %w", where, err))
					return
				}
				vals[i] = v
			}
			if !yield(Row{Values: vals}, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(Row{}, fmt.Errorf("extract %s: %w", where, err))
		}
	}
}

// rawDecoder turns one raw field of a row into a value, without pgx's scan
// machinery, for the kinds a run reads most: text (every ::text column,
// numeric included) and the binary forms of int8, float8, bool, date and
// timestamps. Anything else goes through pgx (decodeScan).
type rawDecoder int

const (
	decodeScan rawDecoder = iota
	decodeText
	decodeInt8
	decodeFloat4
	decodeFloat8
	decodeBool
	decodeDate
	decodeTimestamp
)

// PostgreSQL type OIDs of the fields rawPlan decodes itself.
const (
	oidBool        = 16
	oidInt8        = 20
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
)

// rawPlan picks a decoder per field from the field's type and format and
// the column's kind; embeds (after the columns) are text.
func rawPlan(fields []pgconn.FieldDescription, cols []mapping.Column, n int) []rawDecoder {
	plan := make([]rawDecoder, n)
	for i := range plan {
		if i >= len(fields) {
			continue
		}
		fd := fields[i]
		var k pgkind.Kind
		if i < len(cols) {
			k = cols[i].Type.Kind
			if k == pgkind.Array || k == pgkind.Bytea {
				continue // pgx
			}
		}
		switch {
		case fd.Format == pgtype.TextFormatCode && fd.DataTypeOID == oidText:
			plan[i] = decodeText
		case fd.Format != pgtype.BinaryFormatCode || i >= len(cols):
		case fd.DataTypeOID == oidInt8 && k == pgkind.Int:
			plan[i] = decodeInt8
		case fd.DataTypeOID == oidFloat4 && k == pgkind.Float:
			plan[i] = decodeFloat4
		case fd.DataTypeOID == oidFloat8 && k == pgkind.Float:
			plan[i] = decodeFloat8
		case fd.DataTypeOID == oidBool && k == pgkind.Bool:
			plan[i] = decodeBool
		case fd.DataTypeOID == oidDate && k == pgkind.Date:
			plan[i] = decodeDate
		case (fd.DataTypeOID == oidTimestamp && k == pgkind.Timestamp) || (fd.DataTypeOID == oidTimestamptz && k == pgkind.Timestamptz):
			plan[i] = decodeTimestamp
		}
	}
	return plan
}

// textValue is a text field as the value of a column of kind k (see
// selectExpr: these kinds are read as text).
func textValue(s string, k pgkind.Kind) any {
	switch k {
	case pgkind.JSON:
		return JSON(s)
	case pgkind.Numeric:
		return Decimal(s)
	}
	return s
}

// binary decodes a field in PostgreSQL's binary form.
func (d rawDecoder) binary(raw []byte) (any, error) {
	switch d {
	case decodeInt8:
		if len(raw) != 8 {
			return nil, fmt.Errorf("int8: %d bytes", len(raw))
		}
		return int64(binary.BigEndian.Uint64(raw)), nil
	case decodeFloat4:
		// float32, not widened: the transform prints it with 32 bits.
		if len(raw) != 4 {
			return nil, fmt.Errorf("float4: %d bytes", len(raw))
		}
		return math.Float32frombits(binary.BigEndian.Uint32(raw)), nil
	case decodeFloat8:
		if len(raw) != 8 {
			return nil, fmt.Errorf("float8: %d bytes", len(raw))
		}
		return math.Float64frombits(binary.BigEndian.Uint64(raw)), nil
	case decodeBool:
		if len(raw) != 1 {
			return nil, fmt.Errorf("bool: %d bytes", len(raw))
		}
		return raw[0] != 0, nil
	case decodeDate:
		if len(raw) != 4 {
			return nil, fmt.Errorf("date: %d bytes", len(raw))
		}
		switch days := int32(binary.BigEndian.Uint32(raw)); days {
		case math.MaxInt32:
			return Infinity{1}, nil
		case math.MinInt32:
			return Infinity{-1}, nil
		default:
			return time.Date(2000, 1, int(1+days), 0, 0, 0, 0, time.UTC), nil
		}
	case decodeTimestamp:
		if len(raw) != 8 {
			return nil, fmt.Errorf("timestamp: %d bytes", len(raw))
		}
		switch us := int64(binary.BigEndian.Uint64(raw)); us {
		case math.MaxInt64:
			return Infinity{1}, nil
		case math.MinInt64:
			return Infinity{-1}, nil
		default:
			// Microseconds since 2000-01-01 00:00:00 UTC.
			return time.Unix(946_684_800+us/1_000_000, us%1_000_000*1_000).UTC(), nil
		}
	}
	return nil, fmt.Errorf("no binary decoder %d", d)
}

func scanTarget(t pgkind.Type) any {
	switch t.Kind {
	case pgkind.Int:
		return new(pgtype.Int8)
	case pgkind.Numeric:
		return new(pgtype.Text) // see selectExpr
	case pgkind.Float:
		if t.Float4 {
			return new(pgtype.Float4)
		}
		return new(pgtype.Float8)
	case pgkind.Bool:
		return new(pgtype.Bool)
	case pgkind.Date:
		return new(pgtype.Date)
	case pgkind.Timestamp:
		return new(pgtype.Timestamp)
	case pgkind.Timestamptz:
		return new(pgtype.Timestamptz)
	case pgkind.Bytea:
		return new([]byte)
	case pgkind.Array:
		switch t.Elem {
		case pgkind.Int:
			return new(pgtype.Array[pgtype.Int8])
		case pgkind.Float:
			if t.Float4 {
				return new(pgtype.Array[pgtype.Float4])
			}
			return new(pgtype.Array[pgtype.Float8])
		case pgkind.Numeric:
			return new(pgtype.Array[pgtype.Numeric])
		case pgkind.Bool:
			return new(pgtype.Array[pgtype.Bool])
		case pgkind.Date:
			return new(pgtype.Array[pgtype.Date])
		case pgkind.Timestamp:
			return new(pgtype.Array[pgtype.Timestamp])
		case pgkind.Timestamptz:
			return new(pgtype.Array[pgtype.Timestamptz])
		case pgkind.Bytea:
			return new(pgtype.Array[[]byte])
		default:
			return new(pgtype.Array[pgtype.Text])
		}
	}
	return new(pgtype.Text)
}

// decode turns a scan target into the package's value representation.
func decode(target any, t pgkind.Type) (any, error) {
	switch v := target.(type) {
	case *pgtype.Int8:
		if !v.Valid {
			return nil, nil
		}
		return v.Int64, nil
	case *pgtype.Numeric:
		return decodeNumeric(*v), nil
	case *pgtype.Float4:
		if !v.Valid {
			return nil, nil
		}
		return v.Float32, nil
	case *pgtype.Float8:
		if !v.Valid {
			return nil, nil
		}
		return v.Float64, nil
	case *pgtype.Bool:
		if !v.Valid {
			return nil, nil
		}
		return v.Bool, nil
	case *pgtype.Date:
		if !v.Valid {
			return nil, nil
		}
		return timeValue(v.Time, v.InfinityModifier), nil
	case *pgtype.Timestamp:
		if !v.Valid {
			return nil, nil
		}
		return timeValue(v.Time, v.InfinityModifier), nil
	case *pgtype.Timestamptz:
		if !v.Valid {
			return nil, nil
		}
		return timeValue(v.Time, v.InfinityModifier), nil
	case *[]byte:
		if *v == nil {
			return nil, nil
		}
		return bytes.Clone(*v), nil // an empty bytea stays empty, not nil (NULL)
	case *pgtype.Text:
		if !v.Valid {
			return nil, nil
		}
		switch t.Kind {
		case pgkind.JSON:
			return JSON(v.String), nil
		case pgkind.Numeric:
			return Decimal(v.String), nil
		}
		return v.String, nil
	case *pgtype.Array[pgtype.Int8]:
		return decodeArray(v, func(e pgtype.Int8) any { return pick(e.Valid, e.Int64) })
	case *pgtype.Array[pgtype.Float4]:
		return decodeArray(v, func(e pgtype.Float4) any { return pick(e.Valid, e.Float32) })
	case *pgtype.Array[pgtype.Float8]:
		return decodeArray(v, func(e pgtype.Float8) any { return pick(e.Valid, e.Float64) })
	case *pgtype.Array[pgtype.Numeric]:
		return decodeArray(v, func(e pgtype.Numeric) any { return decodeNumeric(e) })
	case *pgtype.Array[pgtype.Bool]:
		return decodeArray(v, func(e pgtype.Bool) any { return pick(e.Valid, e.Bool) })
	case *pgtype.Array[pgtype.Date]:
		return decodeArray(v, func(e pgtype.Date) any { return pickTime(e.Valid, e.Time, e.InfinityModifier) })
	case *pgtype.Array[pgtype.Timestamp]:
		return decodeArray(v, func(e pgtype.Timestamp) any { return pickTime(e.Valid, e.Time, e.InfinityModifier) })
	case *pgtype.Array[pgtype.Timestamptz]:
		return decodeArray(v, func(e pgtype.Timestamptz) any { return pickTime(e.Valid, e.Time, e.InfinityModifier) })
	case *pgtype.Array[[]byte]:
		return decodeArray(v, func(e []byte) any {
			if e == nil {
				return nil
			}
			return bytes.Clone(e)
		})
	case *pgtype.Array[pgtype.Text]:
		return decodeArray(v, func(e pgtype.Text) any {
			if !e.Valid {
				return nil
			}
			if t.Elem == pgkind.JSON {
				return JSON(e.String)
			}
			return e.String
		})
	}
	return nil, fmt.Errorf("no decoder for %T", target)
}

func pick[T any](valid bool, v T) any {
	if !valid {
		return nil
	}
	return v
}

func pickTime(valid bool, t time.Time, inf pgtype.InfinityModifier) any {
	if !valid {
		return nil
	}
	return timeValue(t, inf)
}

func timeValue(t time.Time, inf pgtype.InfinityModifier) any {
	switch inf {
	case pgtype.Infinity:
		return Infinity{1}
	case pgtype.NegativeInfinity:
		return Infinity{-1}
	}
	return t.UTC()
}

// decodeArray turns a possibly multi-dimensional array into nested []any.
// A NULL array is nil; an empty array is an empty, non-nil slice.
func decodeArray[T any](a *pgtype.Array[T], conv func(T) any) (any, error) {
	if !a.Valid {
		return nil, nil
	}
	var offset string // array_dims, when a lower bound is not 1
	for _, d := range a.Dims {
		if d.LowerBound != 1 {
			var dims strings.Builder
			for _, d := range a.Dims {
				fmt.Fprintf(&dims, "[%d:%d]", d.LowerBound, d.LowerBound+d.Length-1)
			}
			offset = dims.String()
			break
		}
	}
	flat := make([]any, len(a.Elements))
	for i, e := range a.Elements {
		flat[i] = conv(e)
	}
	if len(a.Dims) <= 1 {
		if offset != "" {
			return OffsetArray{offset, flat}, nil
		}
		return flat, nil
	}
	var build func(dim int, off int) ([]any, int)
	build = func(dim, off int) ([]any, int) {
		n := int(a.Dims[dim].Length)
		out := make([]any, n)
		for i := range n {
			if dim == len(a.Dims)-1 {
				out[i] = flat[off]
				off++
				continue
			}
			out[i], off = build(dim+1, off)
		}
		return out, off
	}
	out, _ := build(0, 0)
	if offset != "" {
		return OffsetArray{offset, out}, nil
	}
	return out, nil
}

// decodeNumeric formats a numeric exactly: digits of Int shifted by Exp.
func decodeNumeric(n pgtype.Numeric) any {
	if !n.Valid {
		return nil
	}
	if n.NaN {
		return Decimal("NaN")
	}
	switch n.InfinityModifier {
	case pgtype.Infinity:
		return Decimal("Infinity")
	case pgtype.NegativeInfinity:
		return Decimal("-Infinity")
	}
	return Decimal(FormatDecimal(n.Int, n.Exp))
}

// FormatDecimal prints i × 10^exp without rounding.
func FormatDecimal(i *big.Int, exp int32) string {
	if i == nil {
		i = new(big.Int)
	}
	digits := new(big.Int).Abs(i).String()
	neg := i.Sign() < 0
	var s string
	switch {
	case exp >= 0:
		if digits == "0" {
			s = "0"
		} else {
			s = digits + strings.Repeat("0", int(exp))
		}
	default:
		frac := int(-exp)
		if len(digits) <= frac {
			digits = strings.Repeat("0", frac-len(digits)+1) + digits
		}
		s = digits[:len(digits)-frac] + "." + digits[len(digits)-frac:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
