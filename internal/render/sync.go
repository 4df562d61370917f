package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
)

// SyncStatusLine renders a sync's status: position, lag, counts and rates.
func SyncStatusLine(st engine.SyncStatus) string {
	state := "streaming"
	if st.CaughtUp {
		state = "caught up"
	}
	return fmt.Sprintf("%s, confirmed %s of %s, lag %s / %.1fs (last round %.2fs); %d transactions, %d changes (%.1f/s), %d items put, %d deleted (%.1f items/s)",
		state, st.Confirmed, st.ServerLSN, report.Bytes(st.LagBytes), st.LagSeconds, st.LastLatency,
		st.Transactions, st.Changes, st.ChangesPerSecond, st.ItemsPut, st.ItemsDeleted, st.ItemsPerSecond)
}

// SyncEnd prints a sync's last status line and its fan-out, if any change
// affected items.
func SyncEnd(w io.Writer, st engine.SyncStatus) error {
	p := &printer{w: w}
	p.f("sync: %s\n", SyncStatusLine(st))
	if st.Fanout.Changes > 0 {
		p.f("sync: fan-out: %d changes affected %d items (%.1f per change); the most: %d items, by %s\n",
			st.Fanout.Changes, st.Fanout.Items, float64(st.Fanout.Items)/float64(st.Fanout.Changes), st.Fanout.Max, st.Fanout.MaxChange)
	}
	return p.err
}

// SlotInfo says which slot and publication a sync uses, created or
// reused; dropCmd is the command that removes them.
func SlotInfo(w io.Writer, info engine.SlotInfo, dropCmd string) error {
	p := &printer{w: w}
	if info.PublicationCreated {
		p.f("migrate: created publication %s for %s\n", info.Publication, strings.Join(info.Tables, ", "))
	} else {
		p.f("migrate: using publication %s\n", info.Publication)
	}
	if info.SlotCreated {
		p.f("migrate: created replication slot %s (pgoutput) at %s; the initial load reads its snapshot. "+
			"The server keeps WAL from here on until the slot is dropped:\n  %s\n", info.Slot, info.ConsistentPoint, dropCmd)
		return p.err
	}
	p.f("migrate: using replication slot %s, confirmed up to %s, holding %s of WAL (remove it with: %s)\n",
		info.Slot, info.ConfirmedFlush, report.Bytes(info.RetainedBytes), dropCmd)
	return p.err
}

// DropSync says what sync --drop removed; complete says the drop
// succeeded, so that a publication it did not find is said to be absent.
func DropSync(w io.Writer, res *engine.DropSyncResult, complete bool) error {
	p := &printer{w: w}
	if res.SlotDropped {
		p.f("sync: dropped replication slot %s (it held %s of WAL)\n", res.Slot, report.Bytes(res.RetainedBytes))
	} else {
		p.f("sync: no replication slot %s\n", res.Slot)
	}
	if res.PublicationDropped {
		p.f("sync: dropped publication %s\n", res.Publication)
	} else if complete {
		p.f("sync: no publication %s\n", res.Publication)
	}
	return p.err
}

// SyncSummaryDoc is the document of sync --summary-json.
type SyncSummaryDoc struct {
	Slot        string            `json:"slot"`
	Publication string            `json:"publication"`
	SlotCreated bool              `json:"slotCreated"`
	Load        *engine.RunResult `json:"load,omitempty"`
	CaughtUp    bool              `json:"caughtUp"`
	Error       string            `json:"error,omitempty"`
	Confirmed   string            `json:"confirmedLSN"`
	Server      string            `json:"serverLSN"`
	LagBytes    int64             `json:"lagBytes"`
	LagSeconds  float64           `json:"lagSeconds"`
	Txns        int64             `json:"transactions"`
	Changes     int64             `json:"changes"`
	ItemsPut    int64             `json:"itemsPut"`
	ItemsDel    int64             `json:"itemsDeleted"`
	Rounds      int64             `json:"rounds"`
	FanoutItems int64             `json:"fanoutItems"`
	FanoutMax   int64             `json:"fanoutMax"`
	FanoutMaxBy string            `json:"fanoutMaxChange,omitempty"`
	Seconds     float64           `json:"seconds"`
}

// SyncSummary is the document sync --summary-json writes of a sync's
// outcome; runErr is the error it ended with, nil for none.
func SyncSummary(res *engine.SyncResult, runErr error) SyncSummaryDoc {
	f := res.Final
	doc := SyncSummaryDoc{
		Slot: res.Slot.Slot, Publication: res.Slot.Publication, SlotCreated: res.Slot.SlotCreated, Load: res.Load,
		CaughtUp: res.CaughtUp, Confirmed: f.Confirmed.String(), Server: f.ServerLSN.String(),
		LagBytes: f.LagBytes, LagSeconds: f.LagSeconds, Txns: f.Transactions, Changes: f.Changes,
		ItemsPut: f.ItemsPut, ItemsDel: f.ItemsDeleted, Rounds: f.Rounds,
		FanoutItems: f.Fanout.Items, FanoutMax: f.Fanout.Max, FanoutMaxBy: f.Fanout.MaxChange, Seconds: f.Elapsed.Seconds(),
	}
	if runErr != nil {
		doc.Error = runErr.Error()
	}
	return doc
}

// SyncState prints what sync status reads of a sync, one fact a line.
func SyncState(w io.Writer, slot, pub string, st *engine.SyncState) error {
	p := &printer{w: w}
	row := func(k, format string, args ...any) { p.f("%-12s %s\n", k, fmt.Sprintf(format, args...)) }
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
	return p.err
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

// SyncStateJSON prints SyncState as one indented JSON document.
func SyncStateJSON(w io.Writer, slot, pub string, st *engine.SyncState) error {
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// SyncCommands are the commands that continue a sync and that remove its
// slot, as messages quote them.
type SyncCommands struct {
	Table, Slot    string
	Again, DropCmd string
}

// SyncLeft says how a sync that did not drop its slot left it: caught up
// (on stdout, and the slot's reminder on stderr), stopped by a schema
// change (remove the slot, load again) or stopped otherwise (continue, or
// remove the slot). It says nothing when no slot was made, or when the
// WAL guard dropped it.
func SyncLeft(stdout, stderr io.Writer, res *engine.SyncResult, runErr error, c SyncCommands) error {
	switch {
	case res == nil || errors.Is(runErr, engine.ErrSlotWALLimit):
		return nil
	case runErr == nil && res.CaughtUp:
		if _, err := fmt.Fprintf(stdout, "sync: caught up with the source at %s; every change before it is in table %s\n", res.CaughtUpAt, c.Table); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stderr, "migrate: replication slot %s remains and keeps WAL on the server; continue with:\n  %s\nor remove it with:\n  %s\n", c.Slot, c.Again, c.DropCmd)
		return err
	case res.Slot.Slot == "":
		return nil
	case errors.Is(runErr, engine.ErrSchemaChanged):
		// Continuing would stop again: the items need a new load.
		_, err := fmt.Fprintf(stderr, "migrate: replication slot %s remains (confirmed up to %s) and keeps WAL on the server; after this schema change remove it with:\n  %s\nthen sync again into a new or emptied table\n", c.Slot, res.Final.Confirmed, c.DropCmd)
		return err
	}
	_, err := fmt.Fprintf(stderr, "migrate: replication slot %s remains (confirmed up to %s) and keeps WAL on the server; continue with:\n  %s\nor remove it with:\n  %s\n", c.Slot, res.Final.Confirmed, c.Again, c.DropCmd)
	return err
}
