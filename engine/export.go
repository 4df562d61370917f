package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/load"
)

// ExportConfig configures Export.
type ExportConfig struct {
	// Run is the run whose items are exported, as for Run: Mapping and
	// Postgres are required; OnError, RejectFile, MaxRejects, the state
	// file, Resume, Fresh, Observer and Logger apply as they do to a run
	// into a table. DynamoDB, CreateTable, Writer, Target and Export are
	// not used. StateFile defaults to ".migrate/<table>.export.state.json"
	// and RejectFile to "<table>.export.rejects.jsonl", apart from a run's.
	Run RunConfig
	// To is where the files go: a directory, or s3://bucket/prefix.
	// Required.
	To string
	// S3 says how to reach S3 when To is an s3:// URL.
	S3 ExportS3
	// Compression is "gzip" (default), "zstd" or "none".
	Compression string
	// FileSize is the uncompressed size in bytes at which a data file is
	// committed and the next begins (files end between source rows).
	// Default 64 MiB, at least export.MinFileSize (16 KiB). Every item of a file waits for its
	// commit, so the run's memory grows with it.
	FileSize int64
	// OnDuplicate is load.Config.OnDuplicate: "fail" (default) or "skip".
	OnDuplicate string
}

// ExportS3 says how Export reaches S3. The client is built from the
// standard AWS configuration chain (environment, shared config and
// credentials, instance roles) with these overrides.
type ExportS3 struct {
	// Endpoint overrides the S3 endpoint (an S3-compatible store).
	Endpoint string
	// Region overrides the configured region.
	Region string
	// PathStyle addresses buckets as endpoint/bucket/key, as most
	// S3-compatible stores want.
	PathStyle bool
	// PartSize is the bytes per uploaded part of a file (default 8 MiB,
	// at least 5 MiB); Concurrency the parts of a file in flight (default
	// 4). Memory is about PartSize × (Concurrency + 1).
	PartSize    int64
	Concurrency int
}

// ExportResult is what an export did.
type ExportResult struct {
	// Run is the run's summary.
	Run *RunResult
	// Location is where the export is, as given in ExportConfig.To.
	Location string
	// Files are the data files committed, by this run and the runs it
	// resumed, in order.
	Files []ExportedFile
	// Complete says the manifest (Location/manifest.json) is written:
	// every row is done. ContentHash is the content hash it records, the
	// one `migrate verify` computes of the table the export is loaded
	// into.
	Complete    bool
	ContentHash string
}

// ExportedFile is one committed data file of an export.
type ExportedFile struct {
	Name              string // relative to Location: data/part-000001.json.gz
	Items             int64
	Bytes             int64 // as stored (compressed)
	UncompressedBytes int64
}

// Export reads the source as Run does, with the same checks, row errors,
// reject file, checkpoints and resume, and writes the items as files for
// DynamoDB's Import from S3 (DYNAMODB_JSON) instead of into a table. A
// file's items are acknowledged once the file is committed, so a resumed
// export continues after the last file its state file covers. When every
// row is done it writes the manifest. Load an export into a table with
// Run and RunConfig.Export.
func Export(ctx context.Context, cfg ExportConfig) (*ExportResult, error) {
	rc := cfg.Run
	if rc.Mapping == nil {
		return nil, configErrorf("export: a mapping is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	table := cmp.Or(rc.Table, rc.Mapping.Table)
	rc.StateFile = cmp.Or(rc.StateFile, filepath.Join(DefaultStateDir, table+".export.state.json"))
	if rc.OnError == OnErrorReject {
		rc.RejectFile = cmp.Or(rc.RejectFile, table+".export.rejects.jsonl")
	}
	logger := rc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st, err := openExportStore(ctx, cfg.To, cfg.S3, logger, export.UploadOptions{PartSize: cfg.S3.PartSize, Concurrency: cfg.S3.Concurrency})
	if err != nil {
		return nil, err
	}
	t, err := export.NewTarget(export.TargetConfig{
		Mapping: rc.Mapping, Store: st, Compression: cfg.Compression, FileSize: cfg.FileSize,
		OnDuplicate: cfg.OnDuplicate, StopOnFail: rc.OnError != OnErrorReject, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	rc.Target = t
	res, err := Run(ctx, rc)
	if errors.Is(err, ErrNothingToResume) {
		// The state file says the export completed; a crash between its
		// last save and the manifest leaves the manifest to write.
		m, state, rerr := t.Recover(context.WithoutCancel(ctx), rc.StateFile)
		if rerr != nil {
			return nil, rerr
		}
		if m == nil {
			return nil, err
		}
		s := export.SummaryOf(state)
		res := &RunResult{Version: 1, Status: StatusComplete, Mapping: state.Mapping, MappingSHA256: state.MappingSHA256,
			Table: state.Table, StateFile: rc.StateFile, Resumed: true, StartedAt: state.StartedAt}
		res.AllRuns.Rows, res.AllRuns.Rejects = s.Rows, s.Rejects
		for _, src := range state.Sources {
			for _, c := range src.Entities {
				res.AllRuns.Items += c.Items
			}
		}
		return exportResult(res, st, t, m), nil
	}
	if res == nil {
		return nil, err
	}
	var m *export.Manifest
	if res.Status == StatusComplete {
		var ferr error
		if m, ferr = t.Finish(context.WithoutCancel(ctx), export.Summary{Table: res.Table, StartedAt: res.StartedAt, Rows: res.AllRuns.Rows, Rejects: res.AllRuns.Rejects}); ferr != nil {
			return exportResult(res, st, t, nil), ferr
		}
	}
	return exportResult(res, st, t, m), err
}

func exportResult(res *RunResult, st export.Store, t *export.Target, m *export.Manifest) *ExportResult {
	out := &ExportResult{Run: res, Location: st.String()}
	for _, f := range t.Files() {
		out.Files = append(out.Files, ExportedFile{Name: f.Name, Items: f.Items, Bytes: f.Bytes, UncompressedBytes: f.UncompressedBytes})
	}
	if m != nil {
		out.Complete, out.ContentHash = true, m.ContentHash
	}
	return out
}

// openExportStore opens an export's place: a directory, or S3 through a
// client made from the AWS configuration and s.
func openExportStore(ctx context.Context, where string, s ExportS3, logger *slog.Logger, upload export.UploadOptions) (export.Store, error) {
	w, err := export.ParseWhere(where)
	if err != nil {
		return export.Store{}, kinded(ErrConfig, err)
	}
	var client export.S3
	if w.IsS3() {
		c, err := export.NewS3Client(ctx, export.S3ClientConfig{Endpoint: s.Endpoint, Region: s.Region, PathStyle: s.PathStyle, Logger: logger})
		if err != nil {
			return export.Store{}, err
		}
		client = c
	}
	return export.NewStore(w, client, upload)
}

// OpenExportConfig says which export OpenExport opens, and which of its
// files a run of it loads.
type OpenExportConfig struct {
	// From is the export: a directory, or s3://bucket/prefix. Required.
	From string
	// S3 says how to reach S3 when From is an s3:// URL: Endpoint, Region
	// and PathStyle apply; PartSize and Concurrency (uploads) do not.
	S3 ExportS3
	// Share and Shares take share Share of Shares of the export's files
	// (1 <= Share <= Shares), so that Shares machines, each given its own
	// Share, load every file once between them. Default: 1 of 1, every
	// file. A share that holds no file is an ErrConfig.
	Share, Shares int
	// Logger receives a line naming the export and the files taken
	// (Info), and the S3 client's debug lines. Default: discard.
	Logger *slog.Logger
}

// OpenExport opens a complete export as the source of a run: pass it as
// RunConfig.Export to load its items (or the share of them cfg takes)
// into a table instead of reading the database.
func OpenExport(ctx context.Context, cfg OpenExportConfig) (contract.Source, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	k, n := cfg.Share, cfg.Shares
	if k == 0 && n == 0 {
		k, n = 1, 1
	}
	if err := CheckExportPlace("run", cfg.From, cfg.S3, false); err != nil {
		return nil, err
	}
	st, err := openExportStore(ctx, cfg.From, cfg.S3, logger, export.UploadOptions{})
	if err != nil {
		return nil, err
	}
	src, err := export.Open(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := src.Select(k, n); err != nil {
		return nil, err
	}
	logger.Info("loading an export", "export", st.String(), "files", fmt.Sprintf("%d of %d (share %d/%d)", len(src.Taken()), len(src.Manifest.Files), k, n),
		"items", src.Manifest.Items, "snapshots", src.Manifest.Snapshots)
	return src, nil
}

// Validate reports every problem with the export's own settings at once
// (Run is checked by Run), each wrapping ErrConfig; the problems with a
// value are FieldErrors. Zero values mean the defaults. The S3 endpoint
// checked is S3.Endpoint or, when To is in S3 and it is "", the one the
// SDK would take from the environment.
func (c ExportConfig) Validate() error {
	var errs []error
	field := func(name, problem string) {
		if problem != "" {
			errs = append(errs, &FieldError{Verb: "export", Field: name, Problem: problem})
		}
	}
	if c.Compression != "" {
		field("Compression", export.CompressionProblem(c.Compression))
	}
	if c.FileSize != 0 {
		field("FileSize", export.FileSizeProblem(c.FileSize, strconv.Quote(sizeText(c.FileSize))))
	}
	if c.S3.PartSize != 0 {
		field("S3.PartSize", export.PartSizeProblem(c.S3.PartSize))
	}
	if c.S3.Concurrency < 0 {
		field("S3.Concurrency", "must be at least 1")
	}
	switch c.OnDuplicate {
	case "", load.OnDuplicateFail, load.OnDuplicateSkip:
	default:
		field("OnDuplicate", fmt.Sprintf("must be %q or %q, not %q", load.OnDuplicateFail, load.OnDuplicateSkip, c.OnDuplicate))
	}
	if c.To == "" {
		errs = append(errs, configErrorf("export: To is required: a directory or s3://bucket/prefix"))
	}
	errs = append(errs, CheckExportPlace("export", c.To, c.S3, false))
	return errors.Join(errs...)
}

// CheckExportPlace checks an export's place as Export and OpenExport take
// it: where, a directory or s3://bucket/prefix (s3Only: only the latter;
// "" passes) with a bucket name S3 accepts, and how S3 is reached: the
// endpoint (or, without one and for a place in S3, the one the SDK would
// take from the environment) and the region. Its problems are FieldErrors
// of verb's fields To, S3.Endpoint and S3.Region, all at once.
func CheckExportPlace(verb, where string, s ExportS3, s3Only bool) error {
	var errs []error
	if where != "" {
		if p := export.WhereProblem(where, s3Only); p != "" {
			errs = append(errs, &FieldError{Verb: verb, Field: "To", Problem: p})
		}
	}
	env, endpoint := "", s.Endpoint
	if endpoint == "" && strings.HasPrefix(where, "s3://") {
		env, endpoint = load.EnvEndpoint("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	}
	if p := load.EndpointProblem(endpoint); p != "" {
		errs = append(errs, &FieldError{Verb: verb, Field: "S3.Endpoint", Env: env, Problem: p})
	}
	if p := load.RegionProblem(s.Region); p != "" {
		errs = append(errs, &FieldError{Verb: verb, Field: "S3.Region", Problem: p})
	}
	return errors.Join(errs...)
}

// sizeText is n bytes as the largest unit of KiB, MiB or GiB that
// divides it, as export's --file-size takes sizes.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
