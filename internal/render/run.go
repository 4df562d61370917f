package render

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/renameio/v2"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/internal/seed"
)

// RunSummary prints a run's per-entity table, in the plan's and verify's
// table style. Rows read are per entity: the entities of one source table
// each count its rows. Retries and throttled count item sends (an item
// re-sent in three calls is two retries), not calls.
func RunSummary(w io.Writer, s *engine.RunResult) error {
	rows := [][]string{{"ENTITY", "SOURCE", "ROWS READ", "ITEMS WRITTEN", "REJECTS", "ITEM RETRIES", "ITEMS THROTTLED", "WCU", "SECONDS"}}
	for _, e := range append(s.Entities, s.Total) {
		rows = append(rows, []string{e.Entity, e.Source, report.Count(e.RowsRead), report.Count(e.ItemsWritten), report.Count(e.Rejects),
			report.Count(e.Retries), report.Count(e.Throttled), report.Count(e.WCU), fmt.Sprintf("%.1f", e.Seconds)})
	}
	if err := report.WriteTable(w, "", "ll", rows); err != nil {
		return err
	}
	p := &printer{w: w}
	if wr := s.Writer; wr.Calls > 0 {
		p.f("%s BatchWriteItem calls, %s throttled or partly unprocessed", report.Count(wr.Calls), report.Count(wr.ThrottledCalls))
		if wr.DirectCalls > 0 {
			p.f("; %s sent directly, %s of them made again through the SDK", report.Count(wr.DirectCalls), report.Count(wr.DirectFallbacks))
		}
		p.f("\n")
	}
	if sn := s.Snapshot; sn != nil {
		p.f("source snapshot held %.1f s of the run's %.1f s (until the last row was read)\n", sn.HeldSeconds, s.Seconds)
		for _, o := range sn.Overrides {
			p.f("  %s = %s (source: %s) is off for the snapshot's transaction\n", o.Name, o.Value, o.Source)
		}
	}
	return p.err
}

// Export says what an export holds.
func Export(w io.Writer, res *engine.ExportResult) error {
	var items, bytes, raw int64
	for _, f := range res.Files {
		items, bytes, raw = items+f.Items, bytes+f.Bytes, raw+f.UncompressedBytes
	}
	p := &printer{w: w}
	p.f("export: %s, %s items, %s stored (%s uncompressed) in %s\n",
		Plural(len(res.Files), "file"), thousands(items), mebibytes(bytes), mebibytes(raw), res.Location)
	if res.Complete {
		p.f("manifest: %s/manifest.json, content hash %s\n", res.Location, res.ContentHash)
	}
	return p.err
}

func mebibytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// WriteJSONFile writes v as indented JSON to path (a --summary-json),
// through a temporary file renamed into place.
func WriteJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// StateShards says which recorded shard counts a verb reads with.
func StateShards(w io.Writer, verb string, st *engine.StateShards) error {
	if st == nil {
		return nil
	}
	p := &printer{w: w}
	for _, s := range st.Counts {
		p.f("%s: shards for %s %s: %d (count: auto, from %s)\n", verb, s.Entity, s.Index, s.Count, st.Path)
	}
	return p.err
}

// SourceChanges says which finished tables a resumed run did not read
// again although their rows changed, and how to check the table: verify
// is the verify command to run.
func SourceChanges(w io.Writer, changes []engine.SourceChange, verify string) error {
	if len(changes) == 0 {
		return nil
	}
	p := &printer{w: w}
	p.f("migrate: the source changed since the run being resumed; these finished tables were not read again:\n")
	for _, c := range changes {
		p.f("  %s: %d rows (last key %s) then, %d rows (last key %s) now\n", c.Source, c.RowsThen, c.LastKeyThen, c.RowsNow, c.LastKeyNow)
	}
	p.f("the table may differ from the source: see with\n  %s\nthen run again with --fresh (and migrate prune for deleted rows)\n", verify)
	return p.err
}

// Import says how an import from S3 ended.
func Import(w io.Writer, res *engine.ImportResult) error {
	_, err := fmt.Fprintf(w, "import %s: %s, %d items imported of %d in the export (%d processed, %d errors) into table %s in %.0f s\n",
		res.ARN, res.Status, res.Imported, res.Expected, res.Processed, res.Errors, res.Table, res.Seconds)
	return err
}

// Seed is the table of rows `migrate sample seed` loaded, and its speed.
func Seed(w io.Writer, cfg seed.Config, counts seed.Counts, elapsed time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TABLE\tROWS\t")
	for table, n := range counts.All() {
		fmt.Fprintf(tw, "%s\t%d\t\n", table, n)
	}
	fmt.Fprintf(tw, "TOTAL\t%d\t\n", counts.Total())
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "seeded scale %d, seed %d in %.1fs (%.0f rows/s)\n",
		cfg.Scale, cfg.Seed, elapsed.Seconds(), float64(counts.Total())/elapsed.Seconds())
	return err
}
