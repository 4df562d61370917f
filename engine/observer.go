package engine

import (
	"sync/atomic"
	"time"
)

// Observer receives a run's progress. The CLI draws bars or logs lines from
// it; a test records it. Methods are called from one engine goroutine at a
// time and must return quickly.
type Observer interface {
	// Started is called once, after the source and the target were checked
	// and before the first row is read.
	Started(RunStart)
	// Progress is called every RunConfig.ProgressEvery while the run goes
	// on, and once more at the end with the final counts.
	Progress(Progress)
	// Interrupted is called once when ctx ends: reading has stopped, and
	// the run is writing the items already read before it saves the
	// checkpoint and returns.
	Interrupted()
}

// NopObserver ignores everything; embed it to implement only some methods.
type NopObserver struct{}

func (NopObserver) Started(RunStart)  {}
func (NopObserver) Progress(Progress) {}
func (NopObserver) Interrupted()      {}

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

// entityStats counts one entity's progress in this run, from the reading
// goroutine and the target's Ack callbacks.
type entityStats struct {
	name, source       string
	estimate           int64
	rows, rejects      atomic.Int64
	written            atomic.Int64
	started, lastWrite atomic.Int64 // unix nanos
}

func (s *entityStats) touch(field *atomic.Int64) { field.Store(time.Now().UnixNano()) }

func (s *entityStats) progress() EntityProgress {
	p := EntityProgress{Entity: s.name, Source: s.source, Estimate: s.estimate,
		RowsRead: s.rows.Load(), ItemsWritten: s.written.Load(), Rejects: s.rejects.Load()}
	if n := s.started.Load(); n > 0 {
		p.Started = time.Unix(0, n)
	}
	if n := s.lastWrite.Load(); n > 0 {
		p.LastWrite = time.Unix(0, n)
	}
	return p
}
