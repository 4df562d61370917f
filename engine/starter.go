package engine

import (
	"context"
	"sync"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// startTarget calls the target's Start, if it has one.
func startTarget(ctx context.Context, t contract.Target, src *source, prev *checkpoint.State, fresh bool, commits *sync.Mutex) error {
	st, ok := t.(contract.Starter)
	if !ok {
		return nil
	}
	ts := contract.TargetStart{Resumed: prev != nil, Fresh: fresh, Done: map[string]int64{}, Atomically: func(f func()) {
		commits.Lock()
		defer commits.Unlock()
		f()
	}}
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
