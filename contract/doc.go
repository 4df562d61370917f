// Package contract holds the interfaces and value types that join the
// stages of a migration, and nothing else: what flows between them and
// who implements what. It sits below every stage and the engine, so that
// a target or a source can be written without importing the engine that
// drives it.
//
// A run is a pipeline:
//
//	Source ─────────┐
//	(PostgreSQL     │
//	 through        ▼
//	 extract and   engine ──► Item ──► Target ──► Ack / Fail ──► engine
//	 transform, or  (checks, watermark,  (stores items)          (checkpoints
//	 an export)      checkpoints)                                 what settled)
//	                │
//	                └──► Observer (progress: RunStart, Progress)
//
// Who implements what:
//
//   - [Target] (and [Starter], for targets that commit items in groups of
//     their own): package load's table writer (the default, into DynamoDB
//     with BatchWriteItem), the export's file target (internal/export), or
//     your own type passed as engine.RunConfig.Target.
//   - [Source]: an export read back (internal/export), loaded by
//     engine.Run instead of the database (engine.RunConfig.Export).
//   - [Observer]: the caller of a verb (the CLI's progress bars, a test's
//     recorder); embed [NopObserver] to implement only some methods.
//   - [Item], [Origin], [ItemError], [Stats]: the values the engine
//     sends to a target and gets back from it.
//
// The error kinds ([ErrConfig], [ErrState], [ErrTable], [ErrInterrupted])
// are what a target or a verb wraps so that callers can branch on the kind
// of a failure with errors.Is; package engine exports the same values.
//
// The package imports only the standard library and the DynamoDB
// attribute value types.
package contract
