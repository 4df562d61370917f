package export

import (
	"cmp"
	"context"
	"path/filepath"

	"github.com/pgdynamo/migrate/engine"
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
