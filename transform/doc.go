// Package transform turns source rows into DynamoDB items as a mapping
// says. It is pure: Compile joins a mapping with the source catalog into a
// Plan (what to read from each table, how to build each entity's items), and
// Source.Apply maps one row to its items without I/O.
//
// Conversions are exact: numbers never pass through float64 unless the
// column is a float, timestamps are fixed-width UTC text that sorts, and a
// value DynamoDB cannot hold is a RowError naming the entity, the source
// table, the row's key and the column, never a silent drop.
package transform
