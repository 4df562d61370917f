package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// Config configures Export.
type Config struct {
	// Run is the run whose items are exported, as for engine.Run: Mapping
	// and Postgres are required; OnError, RejectFile, MaxRejects, the
	// state file, Resume, Fresh, Observer and Logger apply as they do to a
	// run into a table. DynamoDB, CreateTable, Writer and Target are not
	// used. StateFile defaults to ".migrate/<table>.export.state.json" and
	// RejectFile to "<table>.export.rejects.jsonl", apart from a run's.
	Run engine.RunConfig
	// Target says where and how the files are written; its Mapping,
	// StopOnFail and Logger are set from Run.
	Target TargetConfig
}

// Result is what an export did.
type Result struct {
	// Run is the run's summary (nil when it stopped before reading).
	Run *engine.RunResult
	// Files are the data files committed, by this run and the runs it
	// resumed.
	Files []File
	// Manifest is the manifest written when the export completed, or nil.
	Manifest *Manifest
}

// Export reads the source as engine.Run does, with the same checks, row
// errors, reject file, checkpoints and resume, and writes the items as an
// export (see Target) instead of into a table. When every row is done it
// writes the manifest.
func Export(ctx context.Context, cfg Config) (*Result, error) {
	rc := cfg.Run
	if rc.Mapping != nil {
		table := cmp.Or(rc.Table, rc.Mapping.Table)
		rc.StateFile = cmp.Or(rc.StateFile, filepath.Join(engine.DefaultStateDir, table+".export.state.json"))
		if rc.OnError == engine.OnErrorReject {
			rc.RejectFile = cmp.Or(rc.RejectFile, table+".export.rejects.jsonl")
		}
	}
	tc := cfg.Target
	tc.Mapping = rc.Mapping
	tc.StopOnFail = rc.OnError != engine.OnErrorReject
	tc.Logger = cmp.Or(tc.Logger, rc.Logger)
	t, err := NewTarget(tc)
	if err != nil {
		return nil, err
	}
	rc.Target = t
	res, err := engine.Run(ctx, rc)
	if errors.Is(err, engine.ErrNothingToResume) {
		// The state file says the export completed; a crash between its
		// last save and the manifest leaves the manifest to write.
		return t.recoverManifest(context.WithoutCancel(ctx), rc.StateFile, err)
	}
	if res == nil {
		return nil, err
	}
	out := &Result{Run: res, Files: t.Files()}
	if res.Status == engine.StatusComplete {
		m, ferr := t.Finish(context.WithoutCancel(ctx), res)
		if ferr != nil {
			return out, ferr
		}
		out.Manifest = m
	}
	return out, err
}

// recoverManifest finishes an export whose state file records it complete:
// when the manifest is there, there is nothing to do (done is returned);
// when it is missing (a crash after the last checkpoint), it is written
// from the committed files, which must add up to what the state file
// records.
func (t *Target) recoverManifest(ctx context.Context, statePath string, done error) (*Result, error) {
	if _, _, err := readManifest(ctx, t.st); !errors.Is(err, fs.ErrNotExist) {
		return nil, done
	}
	st, err := checkpoint.Load(statePath)
	if err != nil {
		return nil, err
	}
	records, err := t.readRecords(ctx)
	if err != nil {
		return nil, err
	}
	res := &engine.RunResult{Version: 1, Status: engine.StatusComplete, Mapping: st.Mapping, MappingSHA256: st.MappingSHA256,
		Table: st.Table, StateFile: statePath, Resumed: true, StartedAt: st.StartedAt}
	var items, acked int64
	for _, s := range st.Sources {
		res.AllRuns.Rows += s.Rows
		for _, c := range s.Entities {
			res.AllRuns.Items += c.Items
			res.AllRuns.Rejects += c.Rejects
		}
	}
	t.files = nil
	for _, r := range records {
		if r.MappingSHA256 != t.cfg.Mapping.Digest {
			return nil, kindedState(fmt.Errorf("%s/%s was exported with another mapping; pass --fresh to start over", t.st.where(), r.Name))
		}
		t.files = append(t.files, r.File)
		items += r.Items
		acked += r.Acknowledged
	}
	if acked != res.AllRuns.Items {
		return nil, kindedState(fmt.Errorf("%s records a complete export of %d items, but the files committed at %s hold %d: pass --fresh to start over",
			statePath, res.AllRuns.Items, t.st.where(), acked))
	}
	m, err := t.Finish(ctx, res)
	if err != nil {
		return nil, err
	}
	t.cfg.Logger.Info("export: the export had completed without its manifest; the manifest is written now", "files", len(t.files), "items", items)
	return &Result{Run: res, Files: t.Files(), Manifest: m}, nil
}
