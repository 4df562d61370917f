// Package transform turns source rows into DynamoDB items as a mapping
// says. It is pure: Compile joins a mapping with the source catalog into a
// Plan (what to read from each table, how to build each entity's items), and
// Source.Apply maps one row to its items without I/O.
//
// Conversions are exact: numbers never pass through float64 unless the
// column is a float, timestamps are fixed-width UTC text that sorts, and a
// value DynamoDB cannot hold is a RowError naming the entity, the source
// table, the row's key and the column, never a silent drop.
//
// Items are built as AttributeValues by hand, not with the SDK's
// attributevalue encoder, because its Go types lose what a migration must
// keep: numerics would pass through float64, timestamps would not be the
// fixed-width UTC text that sorts, and NULL handling, sets and embedded
// rows follow the mapping's rules, not Go's. Reading items back (package
// engine's Query and UnmarshalItems) does use attributevalue.
//
// In the pipeline (package engine draws it whole):
//
//	mapping ──► extract ──► TRANSFORM ──► engine ──► load (the Target)
//
// transform imports mapping and extract's value types (Row, Decimal, ...),
// never extract's reads; it stays pure.
package transform
