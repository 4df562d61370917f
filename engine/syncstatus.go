package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/replicate"
)

// SyncStateConfig names the sync SyncState looks at.
type SyncStateConfig struct {
	Postgres          string // never logged or stored
	Slot, Publication string
	// StateFile is the initial load's state file; "" skips it.
	StateFile string
}

// SyncState is what the source and the state file say about a sync, read
// from outside it: whether or not a sync runs.
type SyncState struct {
	// Slot is nil when there is none.
	Slot *Slot
	// ServerLSN is the source's WAL position; LagBytes how far the slot's
	// confirmed position is behind it.
	ServerLSN LSN
	LagBytes  int64
	// Stream is the server's view of the sync streaming from the slot;
	// nil when none streams.
	Stream *StreamState
	// Publication is nil when there is none; else its tables.
	Publication []string
	// Load is the initial load's checkpoint; nil without a state file.
	Load *LoadCheckpoint
	// MaxSlotWALKeepSize is the server's max_slot_wal_keep_size (-1: no
	// limit): the server's own guard for a slot no sync consumes.
	MaxSlotWALKeepSize string
}

// StreamState is a walsender streaming a slot, from pg_stat_replication.
type StreamState struct {
	PID   int32
	State string
	// ReplyAge is how long ago the sync last confirmed a position.
	ReplyAge time.Duration
	// FlushLag is the server's measure of the time between writing WAL
	// and the sync confirming it (last measured; 0 when unknown).
	FlushLag time.Duration
}

// LoadCheckpoint is the initial load's state file.
type LoadCheckpoint struct {
	Path     string
	Table    string
	Complete bool
	Updated  time.Time
}

// ReadSyncState reads a sync's slot, publication, stream and checkpoint.
func ReadSyncState(ctx context.Context, cfg SyncStateConfig) (*SyncState, error) {
	for _, n := range []struct{ what, name string }{{"slot", cfg.Slot}, {"publication", cfg.Publication}} {
		if err := replicate.CheckName(n.what, n.name); err != nil {
			return nil, kinded(ErrConfig, err)
		}
	}
	conn, err := connect(ctx, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st := &SyncState{}
	if st.ServerLSN, err = replicate.CurrentLSN(ctx, conn); err != nil {
		return nil, err
	}
	if st.Slot, err = replicate.ReadSlot(ctx, conn, cfg.Slot); err != nil {
		return nil, err
	}
	if st.Slot != nil && st.ServerLSN > st.Slot.ConfirmedFlush {
		st.LagBytes = int64(st.ServerLSN - st.Slot.ConfirmedFlush)
	}
	if st.Slot != nil && st.Slot.Active {
		var s StreamState
		var reply, lag *float64
		var state *string
		err := conn.QueryRow(ctx, `SELECT pid, state, EXTRACT(EPOCH FROM clock_timestamp() - reply_time)::float8, EXTRACT(EPOCH FROM flush_lag)::float8
			FROM pg_catalog.pg_stat_replication WHERE pid = $1`, st.Slot.ActivePID).Scan(&s.PID, &state, &reply, &lag)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("sync status: read pg_stat_replication: %w", err)
		default:
			if state != nil {
				s.State = *state
			}
			if reply != nil {
				s.ReplyAge = time.Duration(*reply * float64(time.Second))
			}
			if lag != nil {
				s.FlushLag = time.Duration(*lag * float64(time.Second))
			}
			st.Stream = &s
		}
	}
	rows, err := conn.Query(ctx, `SELECT schemaname::text || '.' || tablename::text FROM pg_catalog.pg_publication_tables WHERE pubname = $1 ORDER BY 1`, cfg.Publication)
	if err != nil {
		return nil, fmt.Errorf("sync status: read the publication: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sync status: read the publication: %w", err)
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = $1)", cfg.Publication).Scan(&exists); err != nil {
		return nil, fmt.Errorf("sync status: read the publication: %w", err)
	}
	if exists {
		st.Publication = append([]string{}, tables...)
	}
	if err := conn.QueryRow(ctx, "SELECT current_setting('max_slot_wal_keep_size')").Scan(&st.MaxSlotWALKeepSize); err != nil {
		return nil, fmt.Errorf("sync status: %w", err)
	}
	if cfg.StateFile != "" {
		cp, err := checkpoint.Load(cfg.StateFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, kinded(ErrState, fmt.Errorf("sync status: %w", err))
		default:
			st.Load = &LoadCheckpoint{Path: cfg.StateFile, Table: cp.Table, Complete: cp.Complete}
			if fi, err := os.Stat(cfg.StateFile); err == nil {
				st.Load.Updated = fi.ModTime()
			}
		}
	}
	return st, nil
}
