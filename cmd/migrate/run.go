package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/transform"
)

func init() { register(newRunCmd) }

// Values of --on-error.
const (
	onErrorFail   = "fail"
	onErrorReject = "reject"
)

type runOpts struct {
	mapping     string
	pg          string
	table       string
	endpoint    string
	region      string
	createTable bool
	concurrency int

	maxWCU          float64
	minWCU          float64
	window          int
	maxBatchElapsed time.Duration
	onDuplicate     string

	onError    string
	rejectFile string
	maxRejects int

	state  string
	resume bool
	fresh  bool

	quiet       bool
	summaryJSON string

	// Set by the command from the flags, not flags themselves.
	pgFrom        string // where the URL came from: "flag" or the environment variable's name
	rejectFileSet bool
	maxRejectsSet bool
	resumeCommand string // the command that resumes this run, without secrets
}

func (o *runOpts) validate() error {
	if o.mapping == "" {
		return usagef("run: --mapping is required")
	}
	if o.pg == "" {
		return usagef("run: --pg is required (or set MIGRATE_PG_URL or DATABASE_URL)")
	}
	if o.concurrency < 1 {
		return usagef("run: --concurrency must be at least 1")
	}
	if o.maxWCU < 0 {
		return usagef("run: --max-wcu must not be negative (0 = no cap)")
	}
	if o.minWCU < 0 || o.maxWCU > 0 && o.minWCU > o.maxWCU {
		return usagef("run: --min-wcu must be between 0 and --max-wcu (0 = the default, %d)", load.DefaultMinWCU)
	}
	if o.window != 0 && o.window < load.MaxBatchItems {
		return usagef("run: --window must be at least %d (0 = the default, %d)", load.MaxBatchItems, load.DefaultWindow)
	}
	if o.maxBatchElapsed < 0 {
		return usagef("run: --max-batch-elapsed must not be negative (0 = the default, %v)", load.DefaultMaxBatchElapsed)
	}
	if o.onDuplicate != load.OnDuplicateFail && o.onDuplicate != load.OnDuplicateSkip {
		return usagef("run: --on-duplicate must be %q or %q, not %q", load.OnDuplicateFail, load.OnDuplicateSkip, o.onDuplicate)
	}
	switch o.onError {
	case onErrorFail:
		if o.rejectFileSet || o.maxRejectsSet {
			return usagef("run: --reject-file and --max-rejects apply only with --on-error reject")
		}
	case onErrorReject:
	default:
		return usagef("run: --on-error must be %q or %q, not %q", onErrorFail, onErrorReject, o.onError)
	}
	if o.maxRejects < -1 {
		return usagef("run: --max-rejects must be -1 (no limit) or more")
	}
	if o.resume && o.fresh {
		return usagef("run: --resume and --fresh exclude each other")
	}
	return nil
}

func newRunCmd(g *globals) *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "run --mapping FILE --pg URL [--table NAME] [--endpoint URL] [flags]",
		Short: "Migrate: read the source in one snapshot, transform, batch-write to DynamoDB",
		Long: `run validates the mapping against the source catalog, then reads every source
table in one read-only snapshot, turns rows into items and writes them with
BatchWriteItem (25 items a call; throttling, unprocessed items, 5xx and
connection errors retried with backoff).

Progress is checkpointed in a state file (--state): per source table, the key
of the last row whose items DynamoDB has all acknowledged. After an interrupt
(Ctrl-C, a crash, kill -9) run again with --resume to continue from there. An
existing unfinished state file makes run refuse to start until you choose
--resume or --fresh.

Bad rows (values DynamoDB cannot hold, keys that cannot be built, items over
400 KB, duplicate keys) stop the run with --on-error fail (the default), or
are written to a JSON-lines reject file with --on-error reject.

The DynamoDB client uses the standard AWS configuration (credential chain,
AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB); --endpoint and --region override it.

Exit codes: 0 done, 1 failed (or more rejects than --max-rejects), 2 usage,
mapping or state-file problem, 130 interrupted (resumable).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.pg, o.pgFrom = pgURLFrom(o.pg)
			f := cmd.Flags()
			o.rejectFileSet, o.maxRejectsSet = f.Changed("reject-file"), f.Changed("max-rejects")
			if err := o.validate(); err != nil {
				return err
			}
			return runMigration(cmd.Context(), g, o, cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.mapping, "mapping", "", "mapping file (YAML)")
	f.StringVar(&o.pg, "pg", "", "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	f.StringVar(&o.table, "table", "", "target DynamoDB table (default: the mapping's table)")
	f.StringVar(&o.endpoint, "endpoint", "", "DynamoDB endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_DYNAMODB)")
	f.StringVar(&o.region, "region", "", "AWS region (default: AWS configuration, e.g. $AWS_REGION)")
	f.BoolVar(&o.createTable, "create-table", false, "create the table and its indexes (on-demand) if missing, and wait until it is ACTIVE")
	f.IntVar(&o.concurrency, "concurrency", load.DefaultConcurrency, "parallel BatchWriteItem calls")
	f.Float64Var(&o.maxWCU, "max-wcu", 0, "cap on write units per second, table plus indexes (0 = no cap; the writer still slows down when throttled)")
	f.Float64Var(&o.minWCU, "min-wcu", 0, fmt.Sprintf("floor below which throttling never slows the writer, in write units per second (0 = %d)", load.DefaultMinWCU))
	f.IntVar(&o.window, "window", 0, fmt.Sprintf("items buffered to spread consecutive writes over partitions (0 = %d); a smaller window checkpoints sooner", load.DefaultWindow))
	_ = f.MarkHidden("window")
	f.DurationVar(&o.maxBatchElapsed, "max-batch-elapsed", 0, fmt.Sprintf("how long one batch may keep retrying before the run stops with a resumable checkpoint (0 = %v)", load.DefaultMaxBatchElapsed))
	f.StringVar(&o.onDuplicate, "on-duplicate", load.OnDuplicateFail, `two items with the same primary key: "fail" (a row error naming both rows) or "skip" (keep the first, count the rest)`)
	f.StringVar(&o.onError, "on-error", onErrorFail, `bad rows: "fail" (stop at the first) or "reject" (write them to the reject file and go on)`)
	f.StringVar(&o.rejectFile, "reject-file", "", "reject file, JSON lines (default <table>.rejects.jsonl; with --on-error reject)")
	f.IntVar(&o.maxRejects, "max-rejects", 0, "rejects allowed before the run exits 1 (it still runs to the end; -1 = no limit; with --on-error reject)")
	f.StringVar(&o.state, "state", "", "state file for checkpoints and --resume (default .migrate/<table>.state.json)")
	f.BoolVar(&o.resume, "resume", false, "continue the run recorded in the state file")
	f.BoolVar(&o.fresh, "fresh", false, "start over, ignoring and overwriting the state file")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bars or progress log lines")
	f.StringVar(&o.summaryJSON, "summary-json", "", "also write the summary as JSON to this file")
	return cmd
}

// pgURLFrom returns the source URL and where it came from: "flag",
// "MIGRATE_PG_URL" or "DATABASE_URL".
func pgURLFrom(flag string) (string, string) {
	if flag != "" {
		return flag, "flag"
	}
	for _, env := range []string{"MIGRATE_PG_URL", "DATABASE_URL"} {
		if v := os.Getenv(env); v != "" {
			return v, env
		}
	}
	return "", ""
}

// checkpointEvery is how often the state file is rewritten during a run.
var checkpointEvery = time.Second

// runner is one migration run.
type runner struct {
	g      *globals
	o      runOpts
	log    *slog.Logger
	src    *source
	wm     *watermark
	reject bool
	// stopReading ends the read side of the pipeline (fail mode: on the
	// first refused item).
	stopReading func(error)
	sources     map[string]*transform.Source
	// stats by entity, and the entities of each source table.
	stats    map[string]*entityStats
	bySource map[string][]*entityStats
}

func runMigration(ctx context.Context, g *globals, o runOpts, cmd *cobra.Command) error {
	start := time.Now()
	data, err := os.ReadFile(o.mapping)
	if err != nil {
		return usagef("read mapping: %w", err)
	}
	m, err := parseMapping(o.mapping, data)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	statePath := cmp.Or(o.state, filepath.Join(".migrate", table+".state.json"))
	rejectPath := ""
	if o.onError == onErrorReject {
		rejectPath = cmp.Or(o.rejectFile, table+".rejects.jsonl")
	}
	o.resumeCommand = resumeCommand(cmd.Flags(), o.pgFrom, statePath)
	hash := checkpoint.Hash(data)

	prev, err := previousRun(g.logger, statePath, hash, table, o)
	if errors.Is(err, errAlreadyComplete) {
		fmt.Fprintf(g.stderr, "migrate: nothing to resume: the run recorded in %s completed (%s); pass --fresh to run it again\n", statePath, prev.UpdatedAt.Format(time.RFC3339))
		return nil
	}
	if err != nil {
		return err
	}
	var preset map[[2]string]int
	if prev != nil {
		preset = map[[2]string]int{}
		for _, s := range prev.Shards {
			preset[[2]string{s.Entity, s.Index}] = s.Count
		}
	}

	src, err := openSourceWith(ctx, m, o.pg, preset)
	if err != nil {
		return err
	}
	defer src.close(ctx)
	for _, r := range src.shards {
		fmt.Fprintln(g.stdout, r)
	}

	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: o.endpoint, Region: o.region, Concurrency: o.concurrency, Logger: g.logger})
	if err != nil {
		return err
	}
	cfg := load.Config{
		Table:           table,
		PartitionKey:    m.PartitionKey,
		SortKey:         m.SortKey,
		Indexes:         src.indexes(),
		Concurrency:     o.concurrency,
		MaxWCU:          o.maxWCU,
		MinWCU:          o.minWCU,
		Window:          o.window,
		MaxBatchElapsed: o.maxBatchElapsed,
		OnDuplicate:     o.onDuplicate,
		Logger:          g.logger,
	}
	// The writer never stops on a refused item by itself: each one is
	// reported by Item.Fail, and run decides (reject it, or stop reading
	// while the items already read are written).
	cfg.MaxItemErrors = -1
	if err := prepareTarget(ctx, client, cfg, o.createTable); err != nil {
		return err
	}
	r := &runner{
		g: g, o: o, log: g.logger, src: src, reject: o.onError == onErrorReject,
		sources: map[string]*transform.Source{}, stats: map[string]*entityStats{}, bySource: map[string][]*entityStats{},
	}
	var order []*entityStats
	var names []string
	for _, s := range src.plan.Sources {
		r.sources[s.Name] = s
		names = append(names, s.Name)
		for _, e := range m.Entities {
			if s.HasEntity(e.Name) {
				es := &entityStats{name: e.Name, source: s.Name}
				r.stats[e.Name] = es
				r.bySource[s.Name] = append(r.bySource[s.Name], es)
				order = append(order, es)
			}
		}
	}

	var rejects *rejectFile
	if r.reject {
		keep := int64(-1)
		if prev != nil && prev.RejectFile == rejectPath {
			keep = prev.RejectBytes
		} else if prev != nil && prev.RejectFile != "" {
			g.logger.Warn("the run being resumed wrote its rejects to another file; they stay there", "file", prev.RejectFile)
		}
		if rejects, err = openRejectFile(rejectPath, keep, g.logger); err != nil {
			return err
		}
		defer rejects.close()
	}
	r.wm = newWatermark(names, rejects)
	state := &checkpoint.State{
		Mapping: o.mapping, MappingSHA256: hash, Table: table,
		StartedAt: start.UTC(), RejectFile: rejectPath,
	}
	for _, s := range src.shards {
		state.Shards = append(state.Shards, checkpoint.Shard{Entity: s.Entity, Index: s.Index, Count: s.Inputs.Count})
	}
	toRead, after := src.plan.Sources, map[string][]any(nil)
	if prev != nil {
		state.StartedAt = prev.StartedAt
		toRead, after = r.resumeFrom(prev)
		g.logger.Info("resuming", "state", statePath, "rows done", prev.Rows(), "sources done", len(src.plan.Sources)-len(toRead))
	}
	save := func(complete bool) (mark, error) {
		mk := r.wm.snapshot()
		if mk.err != nil {
			return mk, mk.err
		}
		state.Sources, state.RejectBytes = mk.sources, mk.rejectBytes
		state.Complete = complete && mk.complete
		state.UpdatedAt = time.Now().UTC()
		return mk, checkpoint.Save(statePath, state)
	}
	// The state file exists before the first write: a kill from here on
	// leaves something to resume.
	if _, err := save(false); err != nil {
		return err
	}

	var estimates map[string]int64
	if !o.quiet {
		if estimates, err = src.estimates(ctx); err != nil {
			g.logger.Debug("no row estimates", "err", err)
		}
	}
	prog, runLog := startProgress(g.stderr, o.quiet, g.logger, levelOf(g), order, estimates)
	r.log = runLog
	cfg.Logger = runLog
	w, err := load.NewWriter(client, cfg)
	if err != nil {
		prog.stop(false)
		return err
	}

	ls, failure := r.pipeline(ctx, w, toRead, after, save)
	mk, err := save(failure == nil)
	if err != nil {
		failure = errors.Join(failure, fmt.Errorf("save checkpoint: %w", err))
	}
	complete := failure == nil && mk.complete
	prog.stop(complete)

	sum := &summary{
		Version: 1, Mapping: o.mapping, MappingSHA256: hash, Table: table,
		StateFile: statePath, RejectFile: rejectPath, Resumed: prev != nil, StartedAt: start.UTC(),
	}
	sum.fill(order, ls, time.Since(start))
	for _, s := range mk.sources {
		sum.AllRuns.Rows += s.Rows
		for _, c := range s.Entities {
			sum.AllRuns.Items += c.Items
			sum.AllRuns.Rejects += c.Rejects
		}
	}
	var result error
	switch {
	case complete && r.reject && o.maxRejects >= 0 && sum.AllRuns.Rejects > int64(o.maxRejects):
		result = fmt.Errorf("%s, more than --max-rejects %d allows; see %s", plural(int(sum.AllRuns.Rejects), "reject"), o.maxRejects, rejectPath)
		sum.Status, sum.ExitCode = "complete", exitFailure
	case complete:
		sum.Status, sum.ExitCode = "complete", exitOK
		if sum.AllRuns.Rejects > 0 && r.reject {
			fmt.Fprintf(g.stderr, "migrate: %s (no more than --max-rejects allows), see %s\n", plural(int(sum.AllRuns.Rejects), "reject"), rejectPath)
		}
	case failure == nil && ctx.Err() != nil:
		result = interruptedError{fmt.Errorf("run interrupted; progress is saved in %s. Resume with:\n  %s", statePath, o.resumeCommand)}
		sum.Status, sum.ExitCode = "interrupted", exitInterrupted
	default:
		if failure == nil {
			failure = errors.New("run ended before every row was written") // not expected: the walk ended without an error
		}
		result = fmt.Errorf("%w\nprogress up to the last acknowledged row is saved in %s; after fixing the cause, resume with:\n  %s", failure, statePath, o.resumeCommand)
		sum.Status, sum.ExitCode = "failed", exitFailure
	}
	if result != nil {
		sum.Error = result.Error()
	}
	sum.printTable(g.stdout)
	if o.summaryJSON != "" {
		if err := sum.writeJSON(o.summaryJSON); err != nil {
			result = errors.Join(result, err)
		}
	}
	return result
}

// pipeline reads, checks and writes until the sources are done, the
// context ends (the first signal) or something fails, and returns the
// writer's stats and the failure, if any. Reading stops on the signal or
// when writing failed; writing does not stop on the signal: the items
// already read are written and acknowledged, then the caller saves the
// checkpoint. The state file is saved every checkpointEvery meanwhile.
func (r *runner) pipeline(ctx context.Context, w *load.Writer, toRead []*transform.Source, after map[string][]any, save func(bool) (mark, error)) (load.Stats, error) {
	readCtx, cancelRead := context.WithCancelCause(ctx)
	defer cancelRead(nil)
	r.stopReading = cancelRead
	writeCtx, cancelWrite := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWrite()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			r.log.Warn("interrupted: reading stopped; waiting for the items already read to be written, then saving the checkpoint",
				"resume with", r.o.resumeCommand)
		case <-finished:
		}
	}()

	items := make(chan load.Item, 2*load.MaxBatchItems*r.o.concurrency)
	var produceErr error
	var producer sync.WaitGroup
	producer.Go(func() {
		defer close(items)
		produceErr = r.produce(readCtx, toRead, after, items)
	})
	var saveErr error
	stopSaving := make(chan struct{})
	var saver sync.WaitGroup
	saver.Go(func() {
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-stopSaving:
				return
			case <-t.C:
				if _, err := save(false); err != nil {
					saveErr = fmt.Errorf("save checkpoint: %w", err)
					cancelRead(saveErr)
					return
				}
			}
		}
	})
	ls, writeErr := w.Write(writeCtx, items)
	var writeFatal error
	if writeErr != nil {
		itemErrs, rest := splitItemErrors(writeErr)
		writeFatal = writeErr
		if r.reject {
			// Each refused item was already turned into a reject line by
			// its Fail callback; only what is not about one item is fatal.
			_ = itemErrs
			writeFatal = rest
		}
		if writeFatal != nil {
			cancelRead(writeFatal)
		}
	}
	producer.Wait()
	close(stopSaving)
	saver.Wait()
	return ls, r.outcome(ctx, produceErr, writeFatal, saveErr)
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

func levelOf(g *globals) slog.Level {
	if g.verbose {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

const rejectHint = " (rerun with --on-error reject to write bad rows to a reject file and go on)"

// outcome picks the error a run ends with, if any: a bad row in fail mode,
// a write that could not be done, a read or checkpoint failure. Errors that
// only follow from the interruption (reading canceled) are not failures.
func (r *runner) outcome(ctx context.Context, produceErr, writeFatal, saveErr error) error {
	var re *transform.RowError
	var ie *load.ItemError
	switch {
	case writeFatal != nil:
		if items, rest := splitItemErrors(writeFatal); len(items) > 0 && rest == nil {
			more := ""
			if len(items) > 1 {
				more = fmt.Sprintf(" (and %s)", plural(len(items)-1, "more bad row"))
			}
			return fmt.Errorf("bad row: %s%s%s", describeItemError(items[0]), more, rejectHint)
		}
		return writeFatal
	case saveErr != nil:
		return saveErr
	case errors.As(produceErr, &re):
		return fmt.Errorf("bad row: %w%s", re, rejectHint)
	case errors.As(produceErr, &ie):
		return fmt.Errorf("bad row: %s%s", describeItemError(ie), rejectHint)
	case produceErr != nil && ctx.Err() != nil:
		return nil // reading stopped on the signal
	}
	return produceErr
}

// readRow is a row read and transformed, on its way to the writer.
type readRow struct {
	src   *transform.Source
	row   extract.Row
	items []load.Item
	lines []rejectLine // transform rejects
}

// produce reads the sources, turns rows into items and sends them to the
// writer, registering each row with the watermark in read order.
func (r *runner) produce(ctx context.Context, sources []*transform.Source, after map[string][]any, out chan<- load.Item) error {
	var current *transform.Source
	err := r.src.walkSources(ctx, sources, after, func(s *transform.Source, row extract.Row, transformed []transform.Item, rowErrs []*transform.RowError) error {
		if s != current {
			current = s
			for _, es := range r.bySource[s.Name] {
				es.touch(&es.started)
			}
		}
		for _, es := range r.bySource[s.Name] {
			es.rows.Add(1)
		}
		rr := &readRow{src: s, row: row, items: make([]load.Item, len(transformed))}
		for i, it := range transformed {
			rr.items[i] = load.Item{Attrs: it.Attrs, Origin: load.Origin{Entity: it.Entity, Table: it.Table, SourceKey: it.SourceKey}}
		}
		if len(rowErrs) > 0 {
			if !r.reject {
				return rowErrs[0] // the checkpoint stays before this row
			}
			rr.lines = rowRejects(s, row, rowErrs)
			for _, re := range rowErrs {
				r.rejected(re.Entity, re)
			}
		}
		return r.send(ctx, rr, out)
	})
	if err == nil {
		r.wm.finishReading()
	}
	return err
}

// send registers a row with the watermark and sends its items. Each item
// settles its row once: Ack when DynamoDB acknowledged it, or, in reject
// mode, Fail when the writer refused it (a reject line for the row). In
// fail mode a refused item stops the writer, and the row never settles,
// so the checkpoint stays before it.
func (r *runner) send(ctx context.Context, rr *readRow, out chan<- load.Item) error {
	entities := make([]string, len(rr.items))
	for i, it := range rr.items {
		entities[i] = it.Origin.Entity
	}
	var keep *extract.Row
	if r.reject {
		keep = &rr.row
	}
	rm := r.wm.add(rr.src.Name, rr.src.Position(rr.row), rr.src.SourceKey(rr.row), keep, entities, rr.lines)
	for _, it := range rr.items {
		es := r.stats[it.Origin.Entity]
		it.Ack = func() {
			es.written.Add(1)
			es.touch(&es.lastWrite)
			r.wm.ack(rm)
		}
		if r.reject {
			it.Fail = func(ie *load.ItemError) {
				r.wm.reject(rm, ie.Origin.Entity, itemReject(rr.src, &rr.row, ie))
				r.rejected(ie.Origin.Entity, ie)
			}
		} else {
			// Stop reading; the items already read are still written, so
			// the checkpoint reaches the row before this one, which never
			// settles. Write reports the item error when it returns.
			it.Fail = func(ie *load.ItemError) { r.stopReading(ie) }
		}
		select {
		case out <- it:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *runner) rejected(entity string, err error) {
	if es := r.stats[entity]; es != nil {
		es.rejects.Add(1)
	}
	r.log.Debug("rejected", "entity", entity, "err", err)
}
