package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Values of RunConfig.OnError.
const (
	OnErrorFail   = "fail"   // stop at the first bad row (default)
	OnErrorReject = "reject" // write bad rows to the reject file and go on
)

// Defaults of RunConfig.
const (
	DefaultProgressEvery   = 250 * time.Millisecond
	DefaultCheckpointEvery = time.Second
	DefaultStateDir        = ".migrate"
)

// RunConfig configures Run. Mapping, Postgres and DynamoDB (or Target) are
// required; every other zero value means its documented default.
type RunConfig struct {
	// Mapping is the parsed mapping (LoadMapping); its Digest is recorded
	// in the state file, and a resume refuses a changed mapping.
	Mapping *mapping.Mapping
	// Postgres is the source database URL. It is never logged or stored.
	Postgres string
	// DynamoDB is the client of the target table; *dynamodb.Client fits.
	DynamoDB DynamoDB
	// Table is the target table. Default: the mapping's table.
	Table string
	// CreateTable creates the table with the mapping's keys and indexes
	// (on-demand) when it is missing, and waits until it is ACTIVE.
	CreateTable bool
	// Writer tunes the batch writer (Concurrency, MaxWCU, MinWCU,
	// MaxBatchElapsed, OnDuplicate, ...). Its Table, keys, Indexes and
	// Logger are set by Run from the mapping and this Config.
	Writer load.Config
	// Target replaces the DynamoDB table as the place items go (DynamoDB,
	// Table, CreateTable and Writer are then unused).
	Target contract.Target
	// Readers is the number of connections reading the source at once,
	// all in one snapshot (exported by the first, joined by the others, as
	// pg_dump -j does): tables are read concurrently, and a table of more
	// than RangeRows rows (by the planner's estimate, so analyzed tables
	// only) is split into key ranges read concurrently too, each with its
	// own checkpoint. The items are the same whatever the number. Default
	// 1: one connection reads the tables in turn.
	Readers int
	// RangeRows is the table size in rows above which parallel readers
	// split a table, and about the size of each range (at most 4 ×
	// Readers ranges per table). Default DefaultRangeRows.
	RangeRows int64
	// Snapshot, when set, is an exported snapshot (pg_export_snapshot(),
	// or a replication slot's) that the run reads in instead of taking
	// its own. The transaction or slot that exported it must stay open
	// until every row is read.
	Snapshot string

	// Export, when set, is read instead of the database (Postgres is then
	// unused): the items of an export (package export) are loaded with the
	// same checks, checkpoints (per file and line), rejects and resume.
	// The mapping must be the one the export was made with.
	Export contract.Source

	// OnError is OnErrorFail (default) or OnErrorReject.
	OnError string
	// RejectFile is the JSON-lines file of rejected rows, with
	// OnErrorReject. Default "<table>.rejects.jsonl".
	RejectFile string
	// MaxRejects is how many rejects (over all resumed runs) a complete run
	// tolerates before Run returns ErrTooManyRejects; -1 means no limit.
	// It applies with OnErrorReject.
	MaxRejects int

	// StateFile records the checkpoints. Default ".migrate/<table>.state.json".
	StateFile string
	// Resume continues the run recorded in StateFile; Fresh starts over and
	// overwrites it. With neither, an unfinished state file makes Run
	// refuse (ErrState).
	Resume, Fresh bool
	// ResumeCommand is how the caller resumes this run, quoted in the
	// messages of an interrupted or failed run (the CLI passes its command
	// line, without secrets). Default: a description in words.
	ResumeCommand string

	// Observer receives progress. Default: none.
	Observer contract.Observer
	// ProgressEvery is how often Observer.Progress is called. Default 250ms.
	ProgressEvery time.Duration
	// CheckpointEvery is how often the state file is rewritten. Default 1s.
	CheckpointEvery time.Duration
	// MaxPendingRows bounds the rows read ahead of the oldest row whose
	// items are not all acknowledged: reading waits there. It bounds the
	// checkpoint's memory when a batch keeps retrying (or a Target holds
	// items back) while later ones go through. Default
	// DefaultMaxPendingRows (65,536 rows, a few MB).
	MaxPendingRows int
	// TempDir holds the sorted runs of the duplicate-key check of entities
	// whose keys are not proven unique (see ValidateKeys). Default
	// os.TempDir().
	TempDir string
	// Logger receives the run's log lines. Default: discard.
	Logger *slog.Logger
}

// WithDefaults returns c with every unset field set to its default.
func (c RunConfig) WithDefaults() RunConfig {
	if c.Mapping != nil {
		c.Table = cmp.Or(c.Table, c.Mapping.Table)
	}
	c.OnError = cmp.Or(c.OnError, OnErrorFail)
	c.Readers = cmp.Or(c.Readers, 1)
	c.RangeRows = cmp.Or(c.RangeRows, DefaultRangeRows)
	if c.OnError == OnErrorReject {
		c.RejectFile = cmp.Or(c.RejectFile, c.Table+".rejects.jsonl")
	}
	c.StateFile = cmp.Or(c.StateFile, filepath.Join(DefaultStateDir, c.Table+".state.json"))
	c.ResumeCommand = cmp.Or(c.ResumeCommand, "the same run again with Resume (--resume) and StateFile (--state) "+c.StateFile)
	c.ProgressEvery = cmp.Or(c.ProgressEvery, DefaultProgressEvery)
	c.CheckpointEvery = cmp.Or(c.CheckpointEvery, DefaultCheckpointEvery)
	c.MaxPendingRows = cmp.Or(c.MaxPendingRows, DefaultMaxPendingRows)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = contract.NopObserver{}
	}
	return c
}

// Validate reports every problem with c at once, each wrapping ErrConfig.
// Call it on WithDefaults().
func (c RunConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, configErrorf(format, args...)) }
	if c.Mapping == nil {
		bad("run: a mapping is required")
	}
	if c.Postgres == "" && c.Export == nil {
		bad("run: a source database URL is required")
	}
	if c.Target == nil && c.DynamoDB == nil {
		bad("run: a DynamoDB client (or another Target) is required")
	}
	if c.Table == "" {
		bad("run: a target table name is required")
	}
	switch c.OnError {
	case OnErrorFail, OnErrorReject:
	default:
		errs = append(errs, fieldf("run", "OnError", "must be %q or %q, not %q", OnErrorFail, OnErrorReject, c.OnError))
	}
	if c.MaxRejects < -1 {
		errs = append(errs, fieldf("run", "MaxRejects", "must be -1 (no limit) or more"))
	}
	if c.MaxPendingRows < 1 {
		bad("run: MaxPendingRows must be at least 1")
	}
	if c.Readers < 1 || c.RangeRows < 1 {
		errs = append(errs, fieldf("run", "Readers", "and RangeRows must be at least 1"))
	}
	if c.Resume && c.Fresh {
		errs = append(errs, fieldf("run", "Resume", "and Fresh exclude each other"))
	}
	writer := validateWriter("run", c.Writer, c.CreateTable)
	errs = append(errs, writer...)
	// Last, as a command checks them after its other flags.
	errs = append(errs, checkName("run", "Table", "table", c.Table), CheckPostgres("run", c.Postgres))
	// The writer's own check would repeat what is wrong with the bounds.
	if c.Target == nil && len(writer) == 0 {
		if err := c.writerConfig().Validate(); err != nil {
			errs = append(errs, kinded(ErrConfig, err))
		}
	}
	return errors.Join(errs...)
}

// validateWriter checks the writer's bounds as a caller sets them, 0
// meaning the default: load.Config.Validate checks them after defaults,
// where a problem can no longer be told from a default.
func validateWriter(verb string, w load.Config, createTable bool) []error {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, fieldf(verb, field, format, args...)) }
	for _, f := range []struct {
		name string
		v    float64
	}{{"Writer.MaxWCU", w.MaxWCU}, {"Writer.MinWCU", w.MinWCU}} {
		// NaN passes every comparison below.
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad(f.name, "must be a finite number, not %v", f.v)
		}
	}
	if w.MaxWCU < 0 {
		bad("Writer.MaxWCU", "must not be negative (0 = no cap)")
	}
	if w.MinWCU < 0 || w.MaxWCU > 0 && w.MinWCU > w.MaxWCU {
		bad("Writer.MinWCU", "must be between 0 and Writer.MaxWCU (0 = the default, %d)", load.DefaultMinWCU)
	}
	if w.Window != 0 && w.Window < load.MaxBatchItems {
		bad("Writer.Window", "must be at least %d (0 = the default, %d)", load.MaxBatchItems, load.DefaultWindow)
	}
	if w.Concurrency < 0 {
		bad("Writer.Concurrency", "must be at least 1")
	}
	if w.MaxBatchElapsed < 0 {
		bad("Writer.MaxBatchElapsed", "must not be negative (0 = the default, %v)", load.DefaultMaxBatchElapsed)
	}
	switch w.OnDuplicate {
	case "", load.OnDuplicateFail, load.OnDuplicateSkip:
	default:
		bad("Writer.OnDuplicate", "must be %q or %q, not %q", load.OnDuplicateFail, load.OnDuplicateSkip, w.OnDuplicate)
	}
	// A warm throughput is set on the table created: an existing table is
	// not changed, and less than a new on-demand table takes at once
	// anyway would be a mistake.
	switch {
	case w.WarmWCU == 0:
	case w.WarmWCU < 0:
		bad("Writer.WarmWCU", "must not be negative (0 = no warm throughput)")
	case !createTable:
		bad("Writer.WarmWCU", "applies only with CreateTable (it sets the warm throughput of the table created)")
	case w.WarmWCU < load.OnDemandInitialWCU:
		bad("Writer.WarmWCU", "must be at least %d, what a new on-demand table takes at once without it; got %d", load.OnDemandInitialWCU, w.WarmWCU)
	}
	return errs
}

// writerConfig is the load.Config of the default target.
func (c RunConfig) writerConfig() load.Config {
	w := c.Writer
	w.Table = c.Table
	if c.Mapping != nil {
		w.PartitionKey, w.SortKey = c.Mapping.PartitionKey, c.Mapping.SortKey
		w.PartitionKeyType, w.SortKeyType = tableconf.KeyTypes(c.Mapping)
		w.Indexes = tableconf.Indexes(c.Mapping)
	}
	w.Logger = c.Logger
	// The writer never stops on a refused item by itself: each one is
	// reported by Item.Fail, and the run decides (reject it, or stop
	// reading while the items already read are written).
	w.MaxItemErrors = -1
	return w.WithDefaults()
}

// Run statuses.
const (
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// RunResult is what a run did: the summary the CLI prints as a table and
// writes with --summary-json. The JSON form is documented in README.md;
// the field names are stable.
type RunResult struct {
	Version int `json:"version"` // of this format: 1
	// Status is StatusComplete, StatusInterrupted or StatusFailed.
	Status string `json:"status"`
	// ExitCode is the caller's exit code for this outcome; Run leaves it 0
	// and the CLI sets it.
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`

	Mapping       string              `json:"mapping"`
	MappingSHA256 string              `json:"mappingSHA256"`
	Table         string              `json:"table"`
	Target        contract.TargetInfo `json:"target"`
	StateFile     string              `json:"stateFile"`
	RejectFile    string              `json:"rejectFile,omitempty"`
	Resumed       bool                `json:"resumed"`
	StartedAt     time.Time           `json:"startedAt"`
	Seconds       float64             `json:"seconds"`

	// Shards are the "count: auto" shard counts this run used.
	Shards []contract.ShardCount `json:"-"`

	// Entities and Total count this run's work.
	Entities []EntityResult `json:"entities"`
	Total    EntityResult   `json:"total"`
	Writer   WriterResult   `json:"writer"`
	// AllRuns counts the rows done, items written and rejects recorded
	// over this run and the runs it resumed, as the state file has them.
	AllRuns AllRuns `json:"allRuns"`
	// Snapshot is how long the run held the source's snapshot, and which
	// of the user's settings it overrode; nil for a run that read an
	// export.
	Snapshot *SnapshotResult `json:"snapshot,omitempty"`
	// SourceChanges lists the tables a resumed run found finished whose
	// rows changed since (count or last key): they are not read again, so
	// the table may differ from the source until verify and a fresh run
	// or prune.
	SourceChanges []SourceChange `json:"sourceChanges,omitempty"`
}

// SnapshotResult is what a run cost the source: the time its snapshot was
// held, during which VACUUM keeps every row version it may see.
type SnapshotResult struct {
	// HeldSeconds runs from the snapshot's BEGIN to the end of reading (the
	// snapshot is released then, while the last items are written), or to
	// the end of a run that stopped before reading every row.
	HeldSeconds float64 `json:"heldSeconds"`
	// Overrides are the source's timeouts (server, database, role or URL
	// settings) the snapshot's transaction turned off for itself.
	Overrides []extract.Setting `json:"overrides,omitempty"`
}

// SourceChange is a finished source table that changed since the run that
// finished it.
type SourceChange struct {
	Source      string `json:"source"`
	RowsThen    int64  `json:"rowsThen"`
	RowsNow     int64  `json:"rowsNow"`
	LastKeyThen string `json:"lastKeyThen"`
	LastKeyNow  string `json:"lastKeyNow"`
}

// EntityResult is one entity's line of the summary.
type EntityResult struct {
	Entity       string  `json:"entity"`
	Source       string  `json:"source"`
	RowsRead     int64   `json:"rowsRead"`
	ItemsWritten int64   `json:"itemsWritten"`
	Rejects      int64   `json:"rejects"`
	Retries      int64   `json:"retries"`
	Throttled    int64   `json:"throttled"`
	WCU          int64   `json:"wcu"`
	Seconds      float64 `json:"seconds"`
}

// WriterResult counts the writer's calls.
type WriterResult struct {
	Calls             int64 `json:"calls"`
	SDKRetries        int64 `json:"sdkRetries"`
	ThrottledCalls    int64 `json:"throttledCalls"`
	DuplicatesSkipped int64 `json:"duplicatesSkipped"`
	ItemErrors        int64 `json:"itemErrors"`
	// DirectCalls were sent without the SDK's per-call middleware;
	// DirectFallbacks of them were made again through the SDK whole,
	// their answer being one the direct path does not act on (see
	// contract.Stats).
	DirectCalls     int64 `json:"directCalls"`
	DirectFallbacks int64 `json:"directFallbacks"`
}

// AllRuns are the totals over a run and the runs it resumed.
type AllRuns struct {
	Rows    int64 `json:"rows"`
	Items   int64 `json:"items"`
	Rejects int64 `json:"rejects"`
}

// fill sets the per-entity and total counts from the run's stats.
func (s *RunResult) fill(order []*entityStats, ls contract.Stats, total time.Duration) {
	s.Entities = s.Entities[:0]
	s.Total = EntityResult{Entity: "TOTAL"}
	for _, e := range order {
		secs := 0.0
		if st, lw := e.started.Load(), e.lastWrite.Load(); st > 0 && lw > st {
			secs = time.Duration(lw - st).Seconds()
		}
		es := ls.Entities[e.name]
		row := EntityResult{
			Entity: e.name, Source: e.source,
			RowsRead: e.rows.Load(), ItemsWritten: e.written.Load(), Rejects: e.rejects.Load(),
			Retries: es.Retries, Throttled: es.Throttled, WCU: es.WCU, Seconds: secs,
		}
		s.Entities = append(s.Entities, row)
		s.Total.RowsRead += row.RowsRead
		s.Total.ItemsWritten += row.ItemsWritten
		s.Total.Rejects += row.Rejects
	}
	s.Total.Retries, s.Total.Throttled, s.Total.WCU = ls.Total.Retries, ls.Total.Throttled, ls.Total.WCU
	s.Total.Seconds = total.Seconds()
	s.Seconds = total.Seconds()
	s.Writer = WriterResult{Calls: ls.Calls, SDKRetries: ls.SDKRetries, ThrottledCalls: ls.ThrottledCalls, DuplicatesSkipped: ls.Duplicates, ItemErrors: ls.ItemErrors,
		DirectCalls: ls.DirectCalls, DirectFallbacks: ls.DirectFallbacks}
}

// Run migrates: it checks the mapping against the source catalog and the
// target, reads every source table in one read-only snapshot, turns rows
// into items and hands them to the target, checkpointing in the state file
// the last row of each table whose items were all acknowledged.
//
// It returns a nil result only when it stopped before reading anything (a
// bad Config, mapping, state file, source or target; see the Err values).
// Otherwise the result describes the run, and the error says why it did
// not complete: ErrInterrupted after ctx ended (the checkpoint is saved),
// ErrTooManyRejects, a bad row or a write that could not be done.
func Run(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Two runs on one state file would overwrite each other's positions.
	lock, err := checkpoint.Acquire(cfg.StateFile)
	if err != nil {
		return nil, kinded(ErrState, err)
	}
	defer lock.Unlock()
	if cfg.Export != nil {
		return runExport(ctx, cfg, start)
	}
	m, log := cfg.Mapping, cfg.Logger
	reject := cfg.OnError == OnErrorReject

	prev, err := previousRun(log, cfg.StateFile, m.Digest, cfg.Table, cfg.Resume, cfg.Fresh)
	if err != nil {
		return nil, err
	}

	// Check everything that can refuse the run before reading a row: the
	// mapping against the catalog, then the target.
	src, err := openSourceAt(ctx, m, cfg.Postgres, cfg.Snapshot)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)
	src.logOverrides(log)
	target := cfg.Target
	if target == nil {
		tt := newTableTarget(cfg, prev)
		tt.cfg.UniqueEntities = src.keys.UniqueEntities()
		target = tt
	}
	// A Starter's group of acknowledgements and a checkpoint exclude each
	// other (TargetStart.Atomically).
	var commits sync.Mutex
	if err := startTarget(ctx, target, src, prev, cfg.Fresh, &commits); err != nil {
		return nil, err
	}
	info, err := target.Open(ctx)
	if err != nil {
		return nil, err
	}
	var preset map[[2]string]int
	if prev != nil {
		preset = map[[2]string]int{}
		for _, s := range prev.Shards {
			preset[[2]string{s.Entity, s.Index}] = s.Count
		}
	}
	if err := src.computeShards(ctx, preset); err != nil {
		return nil, err
	}
	var changed []SourceChange
	if prev != nil {
		if changed, err = src.changedSince(ctx, prev); err != nil {
			return nil, err
		}
	}

	r := &runner{cfg: cfg, log: log, src: src, reject: reject, stats: map[string]*entityStats{}, bySource: map[string][]*entityStats{}, targetKind: info.Kind, target: target}
	var estimates map[string]int64
	if _, nop := cfg.Observer.(contract.NopObserver); !nop {
		if estimates, err = src.estimates(ctx); err != nil {
			log.Debug("no row estimates", "err", err)
		}
	}
	var names []string
	for _, s := range src.plan.Sources {
		names = append(names, s.Name)
		for _, e := range m.Entities {
			if s.HasEntity(e.Name) {
				es := &entityStats{name: e.Name, source: s.Name, estimate: estimates[s.Name]}
				r.stats[e.Name] = es
				r.bySource[s.Name] = append(r.bySource[s.Name], es)
				r.order = append(r.order, es)
			}
		}
	}

	if r.parallel(prev) {
		if names, err = r.planUnits(ctx, prev); err != nil {
			return nil, err
		}
		r.read = r.readParallel
	}

	var rejects *rejectFile
	if reject {
		keep := int64(-1)
		if prev != nil && prev.RejectFile == cfg.RejectFile {
			keep = prev.RejectBytes
		} else if prev != nil && prev.RejectFile != "" {
			log.Warn("the run being resumed wrote its rejects to another file; they stay there", "file", prev.RejectFile)
		}
		if rejects, err = openRejectFile(cfg.RejectFile, keep, log); err != nil {
			return nil, err
		}
		defer rejects.close()
	}
	r.wm = newWatermark(names, rejects, pendingLimit(target, cfg.MaxPendingRows))
	r.wm.unordered = r.read != nil
	if r.keys, err = newKeyCheck(m, src.keys, nil, cfg.TempDir); err != nil {
		return nil, err
	}
	defer r.keys.close()
	for _, e := range src.keys.Entities {
		if !e.Unique {
			log.Info("keys of this entity are not proven unique: the run checks them for duplicates", "entity", e.Entity, "why", e.Reason)
		}
	}
	state := &checkpoint.State{
		Mapping: m.File, MappingSHA256: m.Digest, Table: cfg.Table,
		StartedAt: start.UTC(), RejectFile: cfg.RejectFile, Target: targetCheckpoint(info),
	}
	for _, s := range src.shards {
		state.Shards = append(state.Shards, checkpoint.Shard{Entity: s.Entity, Index: s.Index, Count: s.Inputs.Count})
	}
	toRead, after := src.plan.Sources, map[string][]any(nil)
	if prev != nil {
		state.StartedAt = prev.StartedAt
		toRead, after = r.resumeFrom(prev)
		log.Info("resuming", "state", cfg.StateFile, "rows done", prev.Rows(), "sources done", len(src.plan.Sources)-len(toRead))
	}
	save := func(complete bool) (mark, error) {
		commits.Lock()
		mk := r.wm.snapshot()
		commits.Unlock()
		if mk.err != nil {
			return mk, mk.err
		}
		state.Sources, state.RejectBytes = mk.sources, mk.rejectBytes
		r.annotate(state.Sources)
		state.Complete = complete && mk.complete
		state.UpdatedAt = time.Now().UTC()
		return mk, checkpoint.Save(cfg.StateFile, state)
	}
	// The state file exists before the first write: a kill from here on
	// leaves something to resume.
	if _, err := save(false); err != nil {
		return nil, err
	}

	res := &RunResult{
		Version: 1, Mapping: m.File, MappingSHA256: m.Digest, Table: cfg.Table, Target: info,
		StateFile: cfg.StateFile, RejectFile: cfg.RejectFile, Resumed: prev != nil, StartedAt: start.UTC(),
		Shards: publicShards(src.shards), SourceChanges: changed,
	}
	begin := contract.RunStart{Table: cfg.Table, Target: info, StateFile: cfg.StateFile, Resumed: prev != nil, Shards: publicShards(src.shards)}
	for _, es := range r.order {
		begin.Entities = append(begin.Entities, es.progress())
	}
	cfg.Observer.Started(begin)
	stopProgress := r.reportProgress(start)

	ls, failure := r.pipeline(ctx, target, toRead, after, save)
	res.Snapshot = &SnapshotResult{HeldSeconds: src.heldFor().Seconds(), Overrides: src.overrides}
	// Duplicates found now were written: the run is complete, and wrong.
	var duplicates error
	if failure == nil && ctx.Err() == nil && r.keys != nil {
		duplicates = r.checkKeys()
	}
	mk, err := save(failure == nil)
	if err != nil {
		failure = errors.Join(failure, fmt.Errorf("save checkpoint: %w", err))
	}
	stopProgress()
	return r.result(ctx, res, ls, mk, failure, duplicates, start)
}

// reportProgress calls the observer every ProgressEvery until the returned
// function is called, which reports once more with Done set.
func (r *runner) reportProgress(start time.Time) (stop func()) {
	snapshot := func(done bool) contract.Progress {
		p := contract.Progress{Elapsed: time.Since(start), Done: done}
		for _, es := range r.order {
			p.Entities = append(p.Entities, es.progress())
		}
		if ws, ok := r.target.(writeStatser); ok {
			if st, ok := ws.WriteStats(); ok {
				p.Writes = contract.WriteProgress{Calls: st.Calls, ThrottledCalls: st.ThrottledCalls, Retries: st.Total.Retries, Throttled: st.Total.Throttled}
			}
		}
		return p
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(r.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				r.cfg.Observer.Progress(snapshot(false))
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
		r.cfg.Observer.Progress(snapshot(true))
	}
}

// resumeFrom restores the watermark from a state file and returns the
// sources still to read and where each starts.
func (r *runner) resumeFrom(prev *checkpoint.State) ([]*transform.Source, map[string][]any) {
	after := map[string][]any{}
	done := map[string]bool{}
	for _, s := range prev.Sources {
		r.wm.restore(s)
		done[s.Name] = s.Done
		if !s.Done && len(s.After) > 0 {
			after[s.Name] = s.After
		}
	}
	var toRead []*transform.Source
	for _, s := range r.src.plan.Sources {
		if !done[s.Name] {
			toRead = append(toRead, s)
		}
	}
	return toRead, after
}

// changedSince compares the tables the state file records as done with the
// source as it is now.
func (s *source) changedSince(ctx context.Context, prev *checkpoint.State) ([]SourceChange, error) {
	var out []SourceChange
	for _, ps := range prev.Sources {
		if !ps.Done {
			continue
		}
		for _, src := range s.plan.Sources {
			if src.Name != ps.Name {
				continue
			}
			ext, err := s.snap.Extent(ctx, src.Query)
			if err != nil {
				return nil, err
			}
			then, now := keyText(ps.After), keyText(ext.Last)
			if ext.Rows != ps.Rows || then != now {
				out = append(out, SourceChange{Source: ps.Name, RowsThen: ps.Rows, RowsNow: ext.Rows, LastKeyThen: then, LastKeyNow: now})
			}
		}
	}
	return out, nil
}

// keyText renders a key position for people, and for comparison.
func keyText(pos []any) string {
	if len(pos) == 0 {
		return "none"
	}
	data, err := json.Marshal(checkpoint.Position(pos))
	if err != nil {
		return fmt.Sprint(pos...)
	}
	var tagged []struct{ Value string }
	if json.Unmarshal(data, &tagged) != nil {
		return string(data)
	}
	parts := make([]string, len(tagged))
	for i, t := range tagged {
		parts[i] = t.Value
	}
	return strings.Join(parts, ", ")
}
