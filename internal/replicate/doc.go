// Package replicate follows a PostgreSQL database through logical
// replication: it creates (or reuses) the publication of a mapping's
// source tables and a replication slot with the pgoutput plugin, exports
// the slot's snapshot for the initial load, and streams the committed
// changes as Messages, confirming to the server only the positions the
// caller says are applied.
//
// A slot makes the server keep every WAL segment from the slot's restart
// position on, for as long as the slot exists, whether anybody reads it or
// not. Callers must say so, print the slot's name, and drop it when the
// stream is no longer wanted (DropSlot).
//
// The package knows nothing of DynamoDB or of mappings: it deals in
// tables, columns and text values as pgoutput sends them.
package replicate
