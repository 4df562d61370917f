package engine

import (
	"context"
	"sync"
	"time"

	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// A Starter is a Target that keeps its own durable record of what it
// stored, in groups it commits itself (the files of an export), and so
// must agree with the state file on where a run starts. Run calls Start
// once, after the state file and the source were checked and before Open.
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
	// Fresh says the caller asked to start over (RunConfig.Fresh): a
	// target holding the result of an earlier run may replace it. With
	// neither Fresh nor Resumed it should refuse to overwrite one.
	Fresh bool
	// SnapshotTime is when the source snapshot of this run began, by the
	// database's clock.
	SnapshotTime time.Time
	// Atomically runs f, which acknowledges a group of items (a committed
	// file), so that no checkpoint is taken in the middle of it: the state
	// file then always records whole groups.
	Atomically func(f func())
	// UniqueEntities are the entities whose keys the source proves unique
	// (mapping.ProveUniqueKeys), whose items a run into a table does not
	// check for duplicate keys (load.Config.UniqueEntities): a target that
	// checks items as the table's writer does skips the same checks.
	UniqueEntities []string
}

// startTarget calls the target's Start, if it has one.
func startTarget(ctx context.Context, t Target, src *source, prev *checkpoint.State, fresh bool, commits *sync.Mutex) error {
	st, ok := t.(Starter)
	if !ok {
		return nil
	}
	ts := TargetStart{Resumed: prev != nil, Fresh: fresh, Done: map[string]int64{}, Atomically: func(f func()) {
		commits.Lock()
		defer commits.Unlock()
		f()
	}, UniqueEntities: src.keys.UniqueEntities()}
	if prev != nil {
		for _, s := range prev.Sources {
			for _, c := range s.Entities {
				ts.Done[c.Entity] += c.Items
			}
		}
	}
	var err error
	if ts.SnapshotTime, err = src.snap.StartedAt(ctx); err != nil {
		return err
	}
	return st.Start(ctx, ts)
}
