// Package extract reads source rows from PostgreSQL for the transform.
//
// Every table of a run is read inside one REPEATABLE READ, READ ONLY
// transaction (a Snapshot), so that items built from different tables agree
// with each other. Rows are streamed: each table is read with one query
// ordered by its key and iterated as the server sends it, so memory does not
// grow with table size. A resumed run starts after the last acknowledged key
// with a keyset condition ((k1, k2) > ($1, $2)).
//
// Values are decoded without loss: integers as int64, numeric as an exact
// Decimal string, floats as float64, dates and timestamps as time.Time in
// UTC, bytea as []byte, json/jsonb as JSON text, arrays as []any. Types
// without an exact native decoding (enums, citext, interval, inet, money,
// ...) are cast to text by the query. Identifiers are always quoted with
// pgx.Identifier, never pasted into SQL.
package extract
