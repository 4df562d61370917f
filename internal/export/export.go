package export

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// Summary is what the run says about a complete export, for its manifest.
type Summary struct {
	Table     string // default: the mapping's table
	StartedAt time.Time
	// Rows and Rejects count every run of the export (the run and the
	// runs it resumed).
	Rows, Rejects int64
}

// SummaryOf is the summary a state file records.
func SummaryOf(st *checkpoint.State) Summary {
	s := Summary{Table: st.Table, StartedAt: st.StartedAt}
	for _, src := range st.Sources {
		s.Rows += src.Rows
		for _, c := range src.Entities {
			s.Rejects += c.Rejects
		}
	}
	return s
}

// Recover finishes an export whose state file (at statePath) records it
// complete. When the manifest is there, there is nothing to do: it
// returns nil, nil. When it is missing (a crash after the last
// checkpoint), it is written from the committed files, which must add up
// to what the state file records; Recover returns it with the state.
func (t *Target) Recover(ctx context.Context, statePath string) (*Manifest, *checkpoint.State, error) {
	if _, _, err := readManifest(ctx, t.st); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	st, err := checkpoint.Load(statePath)
	if err != nil {
		return nil, nil, err
	}
	records, err := t.readRecords(ctx)
	if err != nil {
		return nil, nil, err
	}
	var want, items, acked int64
	for _, s := range st.Sources {
		for _, c := range s.Entities {
			want += c.Items
		}
	}
	t.files = nil
	for _, r := range records {
		if r.MappingSHA256 != t.cfg.Mapping.Digest {
			return nil, nil, kindedState(fmt.Errorf("%s/%s was exported with another mapping; pass --fresh to start over", t.st.where(), r.Name))
		}
		t.files = append(t.files, r.File)
		items += r.Items
		acked += r.Acknowledged
	}
	if acked != want {
		return nil, nil, kindedState(fmt.Errorf("%s records a complete export of %d items, but the files committed at %s hold %d: pass --fresh to start over",
			statePath, want, t.st.where(), acked))
	}
	m, err := t.Finish(ctx, SummaryOf(st))
	if err != nil {
		return nil, nil, err
	}
	t.cfg.Logger.Info("export: the export had completed without its manifest; the manifest is written now", "files", len(t.files), "items", items)
	return m, st, nil
}
