package contract

import (
	"fmt"
	"time"
)

// Observer receives a run's progress. The CLI draws bars or logs lines from
// it; a test records it. Methods are called from one engine goroutine at a
// time and must return quickly.
type Observer interface {
	// Started is called once, after the source and the target were checked
	// and before the first row is read.
	Started(RunStart)
	// Progress is called every engine.RunConfig.ProgressEvery while the
	// run goes on, and once more at the end with the final counts.
	Progress(Progress)
	// Interrupted is called once when ctx ends: reading has stopped, and
	// the run is writing the items already read before it saves the
	// checkpoint and returns.
	Interrupted()
}

// NopObserver ignores everything; embed it to implement only some methods.
type NopObserver struct{}

// Started does nothing.
func (NopObserver) Started(RunStart) {}

// Progress does nothing.
func (NopObserver) Progress(Progress) {}

// Interrupted does nothing.
func (NopObserver) Interrupted() {}

// RunStart describes a run about to read its first row.
type RunStart struct {
	Table     string
	Target    TargetInfo
	StateFile string
	Resumed   bool
	// Entities are in read order; their Estimate is the planner's row
	// estimate of the source table (0 when unknown).
	Entities []EntityProgress
	// Shards are the "count: auto" shard counts, computed or preset.
	Shards []ShardCount
}

// ShardCount is the shard count of one sharded index of one entity with
// "count: auto", and how it was found.
type ShardCount struct {
	Entity, Index string
	Count         int
	// Basis is how Count was computed (average item size, reads per
	// partition, declared read rate), for people; empty when Preset.
	Basis string
	// Preset says the count was taken from the state file of the run being
	// resumed, not computed.
	Preset bool
}

// String renders the count as the CLI prints it before a run.
func (r ShardCount) String() string {
	if r.Preset {
		return fmt.Sprintf("shards for %s %s: %d (count: auto, as computed by the run being resumed)", r.Entity, r.Index, r.Count)
	}
	return fmt.Sprintf("shards for %s %s: %s (count: auto)", r.Entity, r.Index, r.Basis)
}

// Progress is a run's counts at one moment.
type Progress struct {
	Elapsed  time.Duration
	Entities []EntityProgress
	Done     bool // the final call
	// Writes are the DynamoDB writer's counts so far (calls, retries,
	// throttling); zero for targets that do not report them.
	Writes WriteProgress
}

// WriteProgress counts a run's DynamoDB calls so far.
type WriteProgress struct {
	Calls          int64
	ThrottledCalls int64 // calls throttled, or answered with UnprocessedItems
	Retries        int64 // item sends beyond the first
	Throttled      int64 // item sends throttled
}

// EntityProgress is one entity's counts. ItemsWritten counts items the
// target acknowledged, not items sent.
type EntityProgress struct {
	Entity       string
	Source       string // schema.table
	Estimate     int64  // rows, from the planner; 0 when unknown
	RowsRead     int64
	ItemsWritten int64
	Rejects      int64
	// Started is when the first row of its source was read (zero before);
	// LastWrite when its last item was acknowledged.
	Started, LastWrite time.Time
}
