package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// Prune is what prune found, and deleted.
type Prune struct {
	Table  string `json:"table"`
	Exists bool   `json:"exists"` // false: the table does not exist, nothing to prune
	// Deleted says the stale items were deleted (engine.PruneConfig.Delete), not
	// only listed.
	Deleted bool `json:"deleted"`
	// Entities counts the stale items per entity, sorted by entity; with
	// Deleted, the items DynamoDB acknowledged as deleted.
	Entities []EntityCount `json:"entities"`
	// Total is the number of stale items found.
	Total int64 `json:"total"`
	// Listed are the first MaxDetails stale items.
	Listed []ItemRef `json:"listed"`
	// Foreign counts the items in the table that the mapping could not
	// have written (another entity name, or a key its templates cannot
	// produce): never deleted. ForeignListed are the first MaxDetails.
	Foreign       int64     `json:"foreign"`
	ForeignListed []ItemRef `json:"foreignListed"`
}

// EntityCount is a count of items of one entity.
type EntityCount struct {
	Entity string `json:"entity"`
	Items  int64  `json:"items"`
}

// PruneText renders res for a terminal; maxDetails is the limit the listing
// was made with, named in its "more not shown" line.
func PruneText(w io.Writer, res *Prune, maxDetails int) error {
	if !res.Exists {
		fmt.Fprintf(w, "table %s does not exist: nothing to prune\n", res.Table)
		return nil
	}
	verb := "would delete"
	if res.Deleted {
		verb = "deleted"
	}
	fmt.Fprintf(w, "prune %s: %s %s\n", res.Table, verb, countOf(res.Total, "stale item"))
	for _, e := range res.Entities {
		fmt.Fprintf(w, "  %-14s %d\n", e.Entity, e.Items)
	}
	listText(w, res.Listed, res.Total, maxDetails)
	foreignText(w, res, maxDetails)
	if !res.Deleted && res.Total > 0 {
		fmt.Fprintln(w, "nothing was deleted; pass --yes to delete them")
	}
	return nil
}

// foreignText lists the items prune leaves alone because the mapping could
// not have written them.
func foreignText(w io.Writer, res *Prune, maxDetails int) {
	if res.Foreign == 0 {
		return
	}
	fmt.Fprintf(w, "left alone: %s the mapping could not have written (another entity, or a key its templates cannot produce from the columns' types)\n", countOf(res.Foreign, "foreign item"))
	listText(w, res.ForeignListed, res.Foreign, maxDetails)
}

// listText lists the items listed of total, and says how many more the
// listing left out.
func listText(w io.Writer, listed []ItemRef, total int64, maxDetails int) {
	for _, it := range listed {
		fmt.Fprintf(w, "  - %-12s %s | %s\n", it.Entity, it.Key.PK, it.Key.SK)
	}
	if int64(len(listed)) < total {
		fmt.Fprintf(w, "  … %d more not shown (--max-details %d)\n", total-int64(len(listed)), maxDetails)
	}
}

// PruneMarkdown renders res as GitHub markdown.
func PruneMarkdown(w io.Writer, res *Prune) error {
	if !res.Exists {
		fmt.Fprintf(w, "Table `%s` does not exist: nothing to prune.\n", res.Table)
		return nil
	}
	verb := "Would delete"
	if res.Deleted {
		verb = "Deleted"
	}
	fmt.Fprintf(w, "### Prune `%s`\n\n%s %s.\n\n", res.Table, verb, countOf(res.Total, "stale item"))
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
		fmt.Fprintf(w, "\nLeft alone: %s the mapping could not have written.\n\n", countOf(res.Foreign, "foreign item"))
		for _, it := range res.ForeignListed {
			fmt.Fprintf(w, "- `%s` `%s | %s`\n", it.Entity, it.Key.PK, it.Key.SK)
		}
	}
	return nil
}

// PruneJSON writes p as indented JSON (HTML characters escaped, as prune
// has always written them, unlike the plan and verify documents).
func PruneJSON(w io.Writer, p *Prune) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// countOf renders "1 stale item", "2 stale items": digits without
// separators, as prune has always printed them.
func countOf(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
