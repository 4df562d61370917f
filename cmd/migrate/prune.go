package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
)

func init() { register(newPruneCmd) }

type pruneOpts struct {
	compareFlags
	yes bool
}

func newPruneCmd(g *globals) *cobra.Command {
	var o pruneOpts
	cmd := &cobra.Command{
		Use:   "prune [MAPPING] --pg URL [--table T] [--endpoint URL] [--yes]",
		Short: "Delete stale items: items of this mapping's entities that the source no longer produces",
		Long: `prune compares the source (one snapshot, transformed exactly as run does) with
the target table, like plan, and deletes the stale items: items whose entity
attribute names an entity of this mapping but whose key the mapping no longer
produces (rows deleted from the source, keys that changed). Items of other
entities are never touched, nor items whose keys the mapping could not have
written: every key placeholder must hold a value of its column's type as the
template renders it (CUSTOMER#abc is not a bigint's key; a shard number is
below the count). Those are listed as foreign. Without --yes it only lists
what it would delete.

It refuses to delete anything when a source row cannot be transformed: that
row's item would look stale while it is only unreadable.

It reads the whole table with one parallel Scan (--segments at a time), the
only way to find stale items: the table's total size / 4 KB x 1 read unit
(x 0.5 with --consistent=false). Deletes cost one write unit per item and
per index it is in.

` + sortMemoryHelp + `

Exit codes: 0 done (or nothing to do); 1 failure; 2 usage or mapping errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			o.pg, o.pgFrom = pgURLFrom(o.pg)
			if err := o.compareFlags.validate("prune"); err != nil {
				return err
			}
			return runPrune(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(cmd, false, true)
	f.BoolVar(&o.yes, "yes", false, "delete the stale items (without it, only list them)")
	return cmd
}

func runPrune(ctx context.Context, g *globals, o *pruneOpts) error {
	cc, err := o.config(ctx, g)
	if err != nil {
		return err
	}
	res, err := engine.Prune(ctx, engine.PruneConfig{CompareConfig: cc, Delete: o.yes})
	if err != nil {
		return err
	}
	return writeReport(g.stdout, o.format,
		func(w io.Writer) error { return pruneText(w, res, o.maxDetails) },
		func(w io.Writer) error { return pruneMarkdown(w, res) },
		func(w io.Writer) error { return writeJSON(w, res) })
}

func pruneText(w io.Writer, res *engine.PruneResult, maxDetails int) error {
	if !res.Exists {
		fmt.Fprintf(w, "table %s does not exist: nothing to prune\n", res.Table)
		return nil
	}
	verb := "would delete"
	if res.Deleted {
		verb = "deleted"
	}
	fmt.Fprintf(w, "prune %s: %s %s\n", res.Table, verb, plural(int(res.Total), "stale item"))
	for _, e := range res.Entities {
		fmt.Fprintf(w, "  %-14s %d\n", e.Entity, e.Items)
	}
	for _, it := range res.Listed {
		fmt.Fprintf(w, "  - %-12s %s | %s\n", it.Entity, it.Key.PK, it.Key.SK)
	}
	if int64(len(res.Listed)) < res.Total {
		fmt.Fprintf(w, "  … %d more not shown (--max-details %d)\n", res.Total-int64(len(res.Listed)), maxDetails)
	}
	foreignText(w, res, maxDetails)
	if !res.Deleted && res.Total > 0 {
		fmt.Fprintln(w, "nothing was deleted; pass --yes to delete them")
	}
	return nil
}

// foreignText lists the items prune leaves alone because the mapping could
// not have written them.
func foreignText(w io.Writer, res *engine.PruneResult, maxDetails int) {
	if res.Foreign == 0 {
		return
	}
	fmt.Fprintf(w, "left alone: %s the mapping could not have written (another entity, or a key its templates cannot produce from the columns' types)\n", plural(int(res.Foreign), "foreign item"))
	for _, it := range res.ForeignListed {
		fmt.Fprintf(w, "  - %-12s %s | %s\n", it.Entity, it.Key.PK, it.Key.SK)
	}
	if int64(len(res.ForeignListed)) < res.Foreign {
		fmt.Fprintf(w, "  … %d more not shown (--max-details %d)\n", res.Foreign-int64(len(res.ForeignListed)), maxDetails)
	}
}

func pruneMarkdown(w io.Writer, res *engine.PruneResult) error {
	if !res.Exists {
		fmt.Fprintf(w, "Table `%s` does not exist: nothing to prune.\n", res.Table)
		return nil
	}
	verb := "Would delete"
	if res.Deleted {
		verb = "Deleted"
	}
	fmt.Fprintf(w, "### Prune `%s`\n\n%s %s.\n\n", res.Table, verb, plural(int(res.Total), "stale item"))
	if len(res.Entities) > 0 {
		fmt.Fprintln(w, "| entity | items |\n|---|---:|")
		for _, e := range res.Entities {
			fmt.Fprintf(w, "| %s | %d |\n", e.Entity, e.Items)
		}
		fmt.Fprintln(w)
	}
	for _, it := range res.Listed {
		fmt.Fprintf(w, "- `%s` `%s | %s`\n", it.Entity, it.Key.PK, it.Key.SK)
	}
	if res.Foreign > 0 {
		fmt.Fprintf(w, "\nLeft alone: %s the mapping could not have written.\n\n", plural(int(res.Foreign), "foreign item"))
		for _, it := range res.ForeignListed {
			fmt.Fprintf(w, "- `%s` `%s | %s`\n", it.Entity, it.Key.PK, it.Key.SK)
		}
	}
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
