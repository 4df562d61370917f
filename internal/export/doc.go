// Package export writes a migration's items as files for DynamoDB's Import
// from S3, and reads them back.
//
// Import from S3 is how very large loads into DynamoDB are done: it
// creates a new table from DYNAMODB_JSON files in S3 without consuming
// write capacity, priced per GB of uncompressed data. An export is made by
// engine.Export, which runs the same engine.Run as a migration into a
// table (same snapshot,
// transform, row errors, reject file, item checks and duplicate-key
// detection, checkpoints and resume); only the target differs:
//
//	mapping ──► extract ──► transform ──► engine ──► Target (this package, a contract.Target)
//	                                                  data/part-000001.json.gz ...
//
// An export is a directory or an S3 prefix holding
//
//	data/part-NNNNNN.json[.gz|.zst]  the items, {"Item":{...}} per line; ImportTable's S3KeyPrefix
//	parts/part-NNNNNN.json           one record per data file, written when it was committed
//	manifest.json                    written when the export completes (Manifest)
//
// A data file is committed atomically (a local file is renamed into place,
// an S3 object appears when its multipart upload completes), and only then
// are its items acknowledged to the engine, all at once, so the state file
// always ends at a file boundary: a resumed export keeps the files its
// state file covers, deletes any committed after, and continues with the
// next. Lines are the canonical DynamoDB JSON of each item, interleaved by
// partition key within blocks, so the same source gives the same files.
//
// The manifest records the mapping's hash, the snapshot times, and per
// file its items per entity, bytes and SHA-256, with the content hash
// `migrate verify` computes (package diff), per entity and in all.
//
// The package implements package contract's interfaces and never imports
// the engine that drives it.
//
// Source reads an export (a contract.Source): engine.Run loads it into an existing table
// (RunConfig.Export, `migrate run --from-export`), optionally one share of
// its files (Source.Select), and Import starts an ImportTable from it.
package export
