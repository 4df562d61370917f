// Package mapping parses and validates the declarative mapping file that says
// how relational rows become single-table DynamoDB items.
//
// The package is pure: it reads bytes and a catalog description and returns a
// Mapping or Diagnostics; it performs no I/O. Every diagnostic carries the
// position of the offending YAML node, and all problems are reported at once.
//
// A mapping names the target table and its key attributes, declares the
// secondary indexes, and lists entities. Each entity reads one source table
// and produces one item per row: its primary key and index keys come from
// templates such as "CUSTOMER#{customer_id}", its attributes from selected,
// renamed or converted columns.
//
// In the pipeline (package engine draws it whole):
//
//	MAPPING ──► extract ──► transform ──► engine ──► load (the Target)
//
// mapping imports no other package of this project but internal/pgkind;
// every other stage imports it.
package mapping
