// Package engine runs migrations: it owns each verb of the tool (Run, Plan,
// Verify, Prune, Sync, Export, Import, Docs) as a function that takes a Config and a context and
// returns a result value. The command line (cmd/migrate) is one caller; a deploy job,
// a Lambda or a service's integration test can be another.
//
// A run is a pipeline of the project's packages:
//
//	mapping ──► extract ──► transform ──► engine ──► Target (load.Writer: BatchWriteItem)
//	 (parse,     (one        (row → items,  (checks,     acknowledges each item
//	 validate)   snapshot,   pure)          watermark,   it stored)
//	             streaming)                 checkpoints,
//	                                        rejects)
//
// Sync runs the same pipeline once (the initial load, in a replication
// slot's snapshot), then applies the slot's change stream (replicate) to
// the items each change reaches (affect), re-rendered with the same plan.
//
// Plan, Verify and Prune run the same source side, then compare the
// expected items with the table (tableread, extsort, diff) instead of
// writing them; Plan also estimates the load (capacity) and all three
// describe what they found as report documents.
//
// The interfaces and values that join the stages (Target, Source, Item,
// Stats, Observer) are package contract's: targets implement them without
// importing the engine.
//
// Which package may import which (enforced by internal/archtest):
//
//	contract           the standard library and DynamoDB's attribute values only
//	mapping            pure: no I/O
//	transform          pure: mapping, extract's value types, ddbvalue
//	extract            PostgreSQL (pgx), mapping
//	load               the AWS SDK, contract, ddbvalue and peakrate only: a target
//	ddbvalue           pure: DynamoDB's value rules (numbers, key order, sizes, DynamoDB JSON), used by all
//	replicate          PostgreSQL logical replication (pgx, pglogrepl)
//	affect             extract, transform, replicate: reads, never writes
//	engine             all of the above, tableread, diff, capacity, report
//	export             contract, load, diff, never engine: files for Import from S3, a Target and a contract.Source
//	render             prints engine results; the engine never imports it
//	cmd/migrate        engine and render: flags and wiring; nothing imports it
//
// Progress leaves the engine through an Observer, never through a terminal;
// log lines through the slog.Logger of the Config. The engine writes nothing
// to stdout or stderr.
package engine
