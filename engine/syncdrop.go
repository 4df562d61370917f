package engine

import (
	"context"
	"errors"
	"time"

	"github.com/pgdynamo/migrate/internal/replicate"
)

// DropSyncConfig names what DropSync removes.
type DropSyncConfig struct {
	Postgres          string
	Slot, Publication string
}

// DropSyncResult says what DropSync removed.
type DropSyncResult struct {
	Slot, Publication  string
	SlotDropped        bool
	PublicationDropped bool
	// RetainedBytes is the WAL the slot held back when it was dropped.
	RetainedBytes int64
}

// DropSync removes a sync's replication slot, which releases the WAL it
// held back, and its publication. Neither existing is not an error. A
// slot still in use by a running sync is waited for a few seconds (a sync
// that just stopped releases it), then refused.
func DropSync(ctx context.Context, cfg DropSyncConfig) (*DropSyncResult, error) {
	errs := []error{CheckPostgres("sync", cfg.Postgres)}
	for _, n := range []struct{ what, name string }{{"slot", cfg.Slot}, {"publication", cfg.Publication}} {
		if err := replicate.CheckName(n.what, n.name); err != nil {
			errs = append(errs, kinded(ErrConfig, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	conn, err := connect(ctx, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res := &DropSyncResult{Slot: cfg.Slot, Publication: cfg.Publication}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := replicate.ReadSlot(ctx, conn, cfg.Slot)
		if err != nil {
			return res, err
		}
		if s == nil {
			break
		}
		res.RetainedBytes = s.RetainedBytes
		if s.Active && time.Now().Before(deadline) {
			select {
			case <-time.After(200 * time.Millisecond):
				continue
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if res.SlotDropped, err = replicate.DropSlot(ctx, conn, cfg.Slot); err != nil {
			return res, err
		}
		break
	}
	res.PublicationDropped, err = replicate.DropPublication(ctx, conn, cfg.Publication)
	return res, err
}
