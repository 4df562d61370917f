package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
)

// printSummary prints a run's per-entity table, in the plan's and
// verify's table style. Rows read are per entity: the entities of one
// source table each count its rows. Retries and throttled count item
// sends (an item re-sent in three calls is two retries), not calls.
func printSummary(w io.Writer, s *engine.RunResult) {
	rows := [][]string{{"ENTITY", "SOURCE", "ROWS READ", "ITEMS WRITTEN", "REJECTS", "ITEM RETRIES", "ITEMS THROTTLED", "WCU", "SECONDS"}}
	for _, e := range append(s.Entities, s.Total) {
		rows = append(rows, []string{e.Entity, e.Source, report.Count(e.RowsRead), report.Count(e.ItemsWritten), report.Count(e.Rejects),
			report.Count(e.Retries), report.Count(e.Throttled), report.Count(e.WCU), fmt.Sprintf("%.1f", e.Seconds)})
	}
	_ = report.WriteTable(w, "", "ll", rows)
	if wr := s.Writer; wr.Calls > 0 {
		fmt.Fprintf(w, "%s BatchWriteItem calls, %s throttled or partly unprocessed", report.Count(wr.Calls), report.Count(wr.ThrottledCalls))
		if wr.DirectCalls > 0 {
			fmt.Fprintf(w, "; %s sent directly, %s of them made again through the SDK", report.Count(wr.DirectCalls), report.Count(wr.DirectFallbacks))
		}
		fmt.Fprintln(w)
	}
	if sn := s.Snapshot; sn != nil {
		fmt.Fprintf(w, "source snapshot held %.1f s of the run's %.1f s (until the last row was read)\n", sn.HeldSeconds, s.Seconds)
		for _, o := range sn.Overrides {
			fmt.Fprintf(w, "  %s = %s (source: %s) is off for the snapshot's transaction\n", o.Name, o.Value, o.Source)
		}
	}
}

// writeSummaryJSON writes the summary to path (atomically enough for a
// report: a temporary file renamed into place).
func writeSummaryJSON(path string, s *engine.RunResult) error {
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
