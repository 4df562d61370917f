package contract

import (
	"context"
	"time"
)

// Target stores the items of a run: the DynamoDB table by default
// (BatchWriteItem through load.Writer), or anything else that acknowledges
// what it stored, such as an export to files.
type Target interface {
	// Open gets the target ready before any source row is read (for a
	// table: check that it exists and fits the mapping, or create it) and
	// says which target it is, so that a resumed run can refuse a target
	// it did not write.
	Open(ctx context.Context) (TargetInfo, error)
	// Write stores the items received until the channel is closed or ctx
	// ends. It calls each item's Ack once the item is durably stored, or
	// its Fail once the item is refused; the engine checkpoints on those
	// calls only. The error is what stopped Write (row errors of refused
	// items included, see load.Writer.Write). Items come with their
	// Origin.SourceKey set.
	//
	// The items of one source row arrive one after another, never mixed
	// with another row's: a target that commits items in groups (files)
	// can end a group where Origin.Table or Origin.SourceKey changes, so
	// that no row is split between two groups. See also Starter.
	//
	// Write must not wait for more items before it acknowledges the ones
	// it holds for long: the engine reads at most
	// engine.RunConfig.MaxPendingRows rows ahead of the oldest row whose
	// items are not all settled, then waits for them. A Starter is the
	// exception: the engine does not bound its rows, its groups do.
	Write(ctx context.Context, items <-chan Item) (Stats, error)
}

// TargetInfo identifies a target. A resumed run continues only into the
// target its state file names.
type TargetInfo struct {
	Kind     string    `json:"kind"`               // "dynamodb" for a table
	Name     string    `json:"name"`               // the table name
	Endpoint string    `json:"endpoint,omitempty"` // a custom endpoint, when one is set
	Region   string    `json:"region,omitempty"`
	ARN      string    `json:"arn,omitempty"`
	ID       string    `json:"id,omitempty"` // DynamoDB's TableId: a new table of the same name has another
	Created  time.Time `json:"created,omitzero"`
}

// A Starter is a Target that keeps its own durable record of what it
// stored, in groups it commits itself (the files of an export), and so
// must agree with the state file on where a run starts. The engine calls
// Start once, after the state file and the source were checked and before
// Open.
type Starter interface {
	Start(ctx context.Context, s TargetStart) error
}

// TargetStart tells a Starter how a run begins.
type TargetStart struct {
	// Resumed says the run continues the one recorded in the state file.
	// Done then counts, per entity, the items acknowledged for the rows
	// that run (and the runs it continued) finished: what the target
	// stored beyond those is sent again.
	Resumed bool
	Done    map[string]int64
	// Fresh says the caller asked to start over (engine.RunConfig.Fresh):
	// a target holding the result of an earlier run may replace it. With
	// neither Fresh nor Resumed it should refuse to overwrite one.
	Fresh bool
	// SnapshotTime is when the source snapshot of this run began, by the
	// database's clock.
	SnapshotTime time.Time
	// Atomically runs f, which acknowledges a group of items (a committed
	// file), so that no checkpoint is taken in the middle of it: the state
	// file then always records whole groups.
	Atomically func(f func())
}
