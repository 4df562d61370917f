package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
)

type syncStatusOpts struct {
	sourceFlags
	table             string
	slot, publication string
	state             string
	format            string
}

func newSyncStatusCmd(g *globals) *cobra.Command {
	var o syncStatusOpts
	cmd := &cobra.Command{
		Use:   "status [MAPPING] --pg URL [--table NAME] [--slot S] [--publication P] [--format text|json]",
		Short: "Show a sync's slot, lag, retained WAL, stream and initial load, whether or not it runs",
		Long: `status reads, from the source and the state file, what an operator checks
about a sync: the replication slot (active or not, its confirmed position, the
WAL it holds back on the source and the server's wal_status), the lag in bytes
behind the source's WAL position, the sync streaming from it (the server's
pg_stat_replication view: last reply, flush lag), the publication's tables and
the initial load's checkpoint. It writes nothing.

Exit codes: 0 the slot exists, 1 failed, 2 usage, 3 there is no slot.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if o.pg == "" {
				return errNoPG("sync status")
			}
			if o.format != "text" && o.format != "json" {
				return usagef("sync status: --format must be text or json, not %q", o.format)
			}
			table := o.table
			if o.mapping != "" {
				m, err := engine.LoadMapping(o.mapping)
				if err != nil {
					return err
				}
				table = cmp.Or(table, m.Table)
			}
			if table == "" && (o.slot == "" || o.publication == "") {
				return usagef("sync status: give the mapping (or --table), or both --slot and --publication")
			}
			slot, pub := syncNames(syncOpts{slot: o.slot, publication: o.publication}, table)
			state := o.state
			if state == "" && table != "" {
				state = engine.StatePath(table)
			}
			return runSyncStatus(cmd.Context(), g, o, slot, pub, state)
		},
	}
	f := cmd.Flags()
	o.register(cmd)
	f.StringVar(&o.table, "table", "", tableUsage)
	f.StringVar(&o.slot, "slot", "", "replication slot (default migrate_<table>)")
	f.StringVar(&o.publication, "publication", "", "publication (default migrate_<table>)")
	f.StringVar(&o.state, "state", "", "the initial load's state file (default .migrate/<table>.state.json)")
	f.StringVar(&o.format, "format", "text", "text or json")
	return cmd
}

func runSyncStatus(ctx context.Context, g *globals, o syncStatusOpts, slot, pub, state string) error {
	st, err := engine.ReadSyncState(ctx, engine.SyncStateConfig{Postgres: o.pg, Slot: slot, Publication: pub, StateFile: state})
	if err != nil {
		return err
	}
	if o.format == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(syncStateJSON(slot, pub, st)); err != nil {
			return err
		}
	} else {
		printSyncState(g.stdout, slot, pub, st)
	}
	if st.Slot == nil {
		return exitError{code: exitDiffers}
	}
	return nil
}

func printSyncState(w io.Writer, slot, pub string, st *engine.SyncState) {
	row := func(k, format string, args ...any) { fmt.Fprintf(w, "%-12s %s\n", k, fmt.Sprintf(format, args...)) }
	if st.Slot == nil {
		row("slot", "%s: none (no WAL is held for it)", slot)
	} else {
		s := st.Slot
		active := "inactive: no sync streams from it"
		if s.Active {
			active = fmt.Sprintf("active (server process %d)", s.ActivePID)
		}
		row("slot", "%s, %s", s.Name, active)
		row("confirmed", "%s (every change before it is in the table)", s.ConfirmedFlush)
		row("source WAL", "%s", st.ServerLSN)
		row("lag", "%s behind the source", report.Bytes(st.LagBytes))
		row("WAL held", "%s from %s (wal_status %s; max_slot_wal_keep_size %s)", report.Bytes(s.RetainedBytes), s.RestartLSN, s.WALStatus, st.MaxSlotWALKeepSize)
		if st.Stream != nil {
			row("stream", "%s, last reply %s ago, flush lag %s", st.Stream.State, st.Stream.ReplyAge.Round(time.Millisecond), st.Stream.FlushLag.Round(time.Millisecond))
		}
	}
	if st.Publication == nil {
		row("publication", "%s: none", pub)
	} else {
		row("publication", "%s: %s", pub, strings.Join(st.Publication, ", "))
	}
	switch {
	case st.Load == nil:
		row("initial load", "no state file")
	case st.Load.Complete:
		row("initial load", "complete into table %s (%s, written %s)", st.Load.Table, st.Load.Path, st.Load.Updated.UTC().Format(time.RFC3339))
	default:
		row("initial load", "not complete: last checkpoint %s (%s); sync resumes it", st.Load.Updated.UTC().Format(time.RFC3339), st.Load.Path)
	}
}

type syncStateDoc struct {
	Slot               string   `json:"slot"`
	Exists             bool     `json:"exists"`
	Active             bool     `json:"active"`
	ActivePID          int32    `json:"activePid,omitempty"`
	Confirmed          string   `json:"confirmedLsn,omitempty"`
	ServerLSN          string   `json:"sourceLsn"`
	LagBytes           int64    `json:"lagBytes"`
	RetainedBytes      int64    `json:"retainedWalBytes"`
	WALStatus          string   `json:"walStatus,omitempty"`
	MaxSlotWALKeepSize string   `json:"maxSlotWalKeepSize"`
	ReplyAgeSeconds    float64  `json:"replyAgeSeconds,omitempty"`
	FlushLagSeconds    float64  `json:"flushLagSeconds,omitempty"`
	Publication        string   `json:"publication"`
	PublicationTables  []string `json:"publicationTables"`
	StateFile          string   `json:"stateFile,omitempty"`
	LoadComplete       bool     `json:"initialLoadComplete"`
	CheckpointTime     string   `json:"checkpointTime,omitempty"`
}

func syncStateJSON(slot, pub string, st *engine.SyncState) syncStateDoc {
	d := syncStateDoc{Slot: slot, ServerLSN: st.ServerLSN.String(), LagBytes: st.LagBytes, MaxSlotWALKeepSize: st.MaxSlotWALKeepSize,
		Publication: pub, PublicationTables: st.Publication}
	if s := st.Slot; s != nil {
		d.Exists, d.Active, d.ActivePID, d.Confirmed, d.RetainedBytes, d.WALStatus = true, s.Active, s.ActivePID, s.ConfirmedFlush.String(), s.RetainedBytes, s.WALStatus
	}
	if st.Stream != nil {
		d.ReplyAgeSeconds, d.FlushLagSeconds = st.Stream.ReplyAge.Seconds(), st.Stream.FlushLag.Seconds()
	}
	if st.Load != nil {
		d.StateFile, d.LoadComplete, d.CheckpointTime = st.Load.Path, st.Load.Complete, st.Load.Updated.UTC().Format(time.RFC3339)
	}
	return d
}
