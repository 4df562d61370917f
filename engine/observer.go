package engine

import (
	"sync/atomic"
	"time"

	"github.com/pgdynamo/migrate/contract"
)

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

func (s *entityStats) progress() contract.EntityProgress {
	p := contract.EntityProgress{Entity: s.name, Source: s.source, Estimate: s.estimate,
		RowsRead: s.rows.Load(), ItemsWritten: s.written.Load(), Rejects: s.rejects.Load()}
	if n := s.started.Load(); n > 0 {
		p.Started = time.Unix(0, n)
	}
	if n := s.lastWrite.Load(); n > 0 {
		p.LastWrite = time.Unix(0, n)
	}
	return p
}
