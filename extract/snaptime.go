package extract

import (
	"context"
	"fmt"
	"time"
)

// StartedAt returns when the snapshot's transaction began, by the server's
// clock: the moment the data it reads is as of, give or take the time
// between BEGIN and its first query.
func (s *Snapshot) StartedAt(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := s.tx.QueryRow(ctx, "SELECT now()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("snapshot time: %w", err)
	}
	return t.UTC(), nil
}
