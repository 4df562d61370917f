// Package extract reads source rows from PostgreSQL for the transform.
//
// Every table of a run is read inside one REPEATABLE READ, READ ONLY
// transaction (a Snapshot), so that items built from different tables agree
// with each other. Rows are streamed: each table is read with one query
// ordered by its key and iterated as the server sends it, so memory does not
// grow with table size. A resumed run starts after the last acknowledged key
// with a keyset condition ((k1, k2) > ($1, $2)).
//
// Joins are pushed down to PostgreSQL rather than merged in memory: a
// copied parent is a LEFT JOIN on a unique key (at most one row), and
// embedded children are a correlated subquery that aggregates at most
// max+1 child rows into JSON (so an overflow is detected without reading
// every child). PostgreSQL uses the foreign-key indexes for both, the
// stream stays one row per base row, and memory is bounded by one row and
// its embedded children. The alternative, merge-joining key-ordered
// streams, would need one sorted stream per relation and more round trips.
//
// Values are decoded without loss: integers as int64, numeric as an exact
// Decimal string, real as float32 and double precision as float64 (a real
// widened to float64 would print as a longer decimal than PostgreSQL
// shows), dates and timestamps as time.Time in UTC, bytea as []byte,
// json/jsonb as JSON text, arrays as []any. Types without an exact native
// decoding (enums, citext, interval, inet, money, ...) are cast to text by
// the query. Identifiers are always quoted with
// pgx.Identifier, never pasted into SQL.
//
// In the pipeline (package engine draws it whole):
//
//	mapping ──► EXTRACT ──► transform ──► engine ──► load (the Target)
//
// extract imports pgx and mapping only: it knows nothing of DynamoDB.
package extract
