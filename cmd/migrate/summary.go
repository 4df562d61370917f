package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/pgdynamo/migrate/load"
)

// summary is what a run did, printed as a table on stdout and written as
// JSON by --summary-json. Its JSON form is documented in README.md; keep
// the field names stable.
type summary struct {
	Version int `json:"version"` // of this format: 1
	// Status is "complete", "interrupted" or "failed".
	Status   string `json:"status"`
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`

	Mapping       string    `json:"mapping"`
	MappingSHA256 string    `json:"mappingSHA256"`
	Table         string    `json:"table"`
	StateFile     string    `json:"stateFile"`
	RejectFile    string    `json:"rejectFile,omitempty"`
	Resumed       bool      `json:"resumed"`
	StartedAt     time.Time `json:"startedAt"`
	Seconds       float64   `json:"seconds"`

	// Entities and Total count this run's work.
	Entities []entitySummary `json:"entities"`
	Total    entitySummary   `json:"total"`
	Writer   writerSummary   `json:"writer"`
	// AllRuns counts the rows done, items written and rejects recorded
	// over this run and the runs it resumed, as the state file has them.
	AllRuns allRuns `json:"allRuns"`
}

type entitySummary struct {
	Entity       string  `json:"entity"`
	Source       string  `json:"source"`
	RowsRead     int64   `json:"rowsRead"`
	ItemsWritten int64   `json:"itemsWritten"`
	Rejects      int64   `json:"rejects"`
	Retries      int64   `json:"retries"`
	Throttled    int64   `json:"throttled"`
	WCU          int64   `json:"wcu"`
	Seconds      float64 `json:"seconds"`
}

type writerSummary struct {
	Calls             int64 `json:"calls"`
	SDKRetries        int64 `json:"sdkRetries"`
	ThrottledCalls    int64 `json:"throttledCalls"`
	DuplicatesSkipped int64 `json:"duplicatesSkipped"`
	ItemErrors        int64 `json:"itemErrors"`
}

type allRuns struct {
	Rows    int64 `json:"rows"`
	Items   int64 `json:"items"`
	Rejects int64 `json:"rejects"`
}

// fill sets the per-entity and total counts from the run's stats.
func (s *summary) fill(order []*entityStats, ls load.Stats, total time.Duration) {
	s.Entities = s.Entities[:0]
	s.Total = entitySummary{Entity: "TOTAL"}
	for _, e := range order {
		secs := 0.0
		if st, lw := e.started.Load(), e.lastWrite.Load(); st > 0 && lw > st {
			secs = time.Duration(lw - st).Seconds()
		}
		es := ls.Entities[e.name]
		row := entitySummary{
			Entity: e.name, Source: e.source,
			RowsRead: e.rows.Load(), ItemsWritten: e.written.Load(), Rejects: e.rejects.Load(),
			Retries: es.Retries, Throttled: es.Throttled, WCU: es.WCU, Seconds: secs,
		}
		s.Entities = append(s.Entities, row)
		s.Total.RowsRead += row.RowsRead
		s.Total.ItemsWritten += row.ItemsWritten
		s.Total.Rejects += row.Rejects
	}
	s.Total.Retries, s.Total.Throttled, s.Total.WCU = ls.Total.Retries, ls.Total.Throttled, ls.Total.WCU
	s.Total.Seconds = total.Seconds()
	s.Seconds = total.Seconds()
	s.Writer = writerSummary{Calls: ls.Calls, SDKRetries: ls.SDKRetries, ThrottledCalls: ls.ThrottledCalls, DuplicatesSkipped: ls.Duplicates, ItemErrors: ls.ItemErrors}
}

// printTable prints the per-entity table. Rows read are per entity: the
// entities of one source table each count its rows.
func (s *summary) printTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ENTITY\tSOURCE\tROWS READ\tITEMS WRITTEN\tREJECTS\tRETRIES\tTHROTTLED\tWCU\tSECONDS\t")
	for _, e := range append(s.Entities, s.Total) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t\n", e.Entity, e.Source, e.RowsRead, e.ItemsWritten, e.Rejects, e.Retries, e.Throttled, e.WCU, e.Seconds)
	}
	tw.Flush()
}

// writeJSON writes the summary to path (atomically enough for a report:
// a temporary file renamed into place).
func (s *summary) writeJSON(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}
