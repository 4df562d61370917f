package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/pgdynamo/migrate/engine"
)

// printSummary prints a run's per-entity table. Rows read are per entity:
// the entities of one source table each count its rows.
func printSummary(w io.Writer, s *engine.RunResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ENTITY\tSOURCE\tROWS READ\tITEMS WRITTEN\tREJECTS\tRETRIES\tTHROTTLED\tWCU\tSECONDS\t")
	for _, e := range append(s.Entities, s.Total) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t\n", e.Entity, e.Source, e.RowsRead, e.ItemsWritten, e.Rejects, e.Retries, e.Throttled, e.WCU, e.Seconds)
	}
	tw.Flush()
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
