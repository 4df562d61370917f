package render

import (
	"fmt"
	"io"

	"github.com/pgdynamo/migrate/internal/draft"
	"github.com/pgdynamo/migrate/mapping"
)

// KeyProof says, per entity, whether a run must check its keys for
// duplicates.
func KeyProof(w io.Writer, kp mapping.KeyProof) error {
	p := &printer{w: w}
	width := 0
	for _, e := range kp.Entities {
		width = max(width, len(e.Entity))
	}
	if kp.Proven() {
		p.f("keys: proven unique for every entity; a run keeps no record of them\n")
	} else {
		p.f("keys: a run checks the keys of the entities not proven unique for duplicates (on disk)\n")
	}
	for _, e := range kp.Entities {
		verdict := "unique:    "
		if !e.Unique {
			verdict = "not proven:"
		}
		p.f("  %-*s  %s %s\n", width, e.Entity, verdict, e.Reason)
	}
	return p.err
}

// InitSummary says what init drafted and what to do next. output is the
// -o value ("-" for stdout); embed says the offered embeds are active.
func InitSummary(w io.Writer, output string, embed bool, d *draft.Draft) error {
	p := &printer{w: w}
	where, file := output, output
	if output == "-" {
		where, file = "stdout", "mapping.yaml"
	}
	indexes := fmt.Sprintf("%d indexes", d.Indexes)
	if d.Indexes == 1 {
		indexes = "1 index"
	}
	p.f("init: wrote %s: table %s, %s, %s", where, d.Table, Plural(d.Entities, "entity"), indexes)
	if d.Offers > 0 {
		state := "commented out"
		if embed {
			state = "active"
		}
		p.f(", %s (%s)", Plural(d.Offers, "embed offer"), state)
	}
	p.f("\n")
	for _, s := range d.Skipped {
		p.f("  not drafted: %s\n", s)
	}
	p.f("Next: review the access patterns at the top of the file, then\n  migrate validate --mapping %s --pg \"$MIGRATE_PG_URL\"\n  migrate plan --mapping %s --pg \"$MIGRATE_PG_URL\"\nand after migrate run, check each access pattern against SQL:\n  migrate prove --mapping %s --pg \"$MIGRATE_PG_URL\"\n", file, file, file)
	return p.err
}

// SyncReadiness says whether the source can feed sync, or what keeps it
// from doing so: notes, or errors when strict (validate --for-sync).
func SyncReadiness(w io.Writer, file string, problems []error, strict bool) error {
	p := &printer{w: w}
	if len(problems) == 0 {
		p.f("%s: ready for sync (wal_level = logical; replica identities carry what deletes and key changes need)\n", file)
		return p.err
	}
	kind := "note"
	if strict {
		kind = "error"
	}
	for _, pr := range problems {
		p.f("%s: %s for sync: %v\n", file, kind, pr)
	}
	return p.err
}
