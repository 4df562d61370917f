package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/metrics"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/load"
)

func init() { register(newRunCmd) }

// sdkMiddlewareUsage is the help of run's and sync's --sdk-middleware.
const sdkMiddlewareUsage = "send every BatchWriteItem call through the AWS SDK's whole middleware stack, not only the first (slower; to rule out the direct calls when diagnosing)"

type runOpts struct {
	sourceFlags
	targetFlags
	writerFlags
	createTable bool
	warmWCU     int64
	window      int
	onDuplicate string
	readFlags
	outputFlags
	tempDir  string
	profiles profiles

	fromExportOpts // run --from-export (fromexport.go)
	metrics        metricsOpts
}

func (o *runOpts) validate() error {
	if o.mapping == "" {
		return usagef("run: --mapping is required")
	}
	if o.pg == "" && o.fromExport == "" {
		return errNoPG("run")
	}
	if err := o.metrics.validate("run"); err != nil {
		return err
	}
	if err := o.fromExportOpts.validate(); err != nil {
		return err
	}
	if err := o.readFlags.validate("run"); err != nil {
		return err
	}
	c := o.config()
	c.Writer = o.checked(c.Writer)
	return checks(
		flagProblemIn("run", pgNames(o.pgFrom), c.Validate()),
		o.targetFlags.validate("run", o.calls),
		flagProblemIn("run", flagNames{"To": "--from-export"}, engine.CheckExportPlace("run", o.fromExport, engine.ExportS3{Endpoint: o.s3.endpoint}, false)),
		checkDir("run", "--temp-dir", o.tempDir),
		checkOutput("run", "--reject-file", o.rejectFile),
		checkOutput("run", "--summary-json", o.summaryJSON),
		o.profiles.validate("run"),
	)
}

func newRunCmd(g *globals) *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "run [MAPPING] --pg URL [--table NAME] [--endpoint URL] [flags]",
		Short: "Migrate: read the source in one snapshot, transform, batch-write to DynamoDB",
		Long:  longHelp("run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			o.given(cmd.Flags())
			if err := o.validate(); err != nil {
				return err
			}
			return o.profiles.profiled(func() error { return runMigration(cmd.Context(), g, o, cmd) })
		},
	}
	f := cmd.Flags()
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.BoolVar(&o.createTable, "create-table", false, "create the table and its indexes (on-demand) if missing, and wait until it is ACTIVE")
	o.writerFlags.register(f, "parallel BatchWriteItem calls (default: 32 per processor, 8 to 128)",
		"cap on write units per second, table plus indexes (0 = no cap; the writer still slows down when throttled)",
		"floor below which throttling never slows the writer, in write units per second", "the run stops with a resumable checkpoint")
	f.Int64Var(&o.warmWCU, "warm-wcu", 0, "with --create-table: pre-warm the new table for this many write units per second (its warm throughput; 0 = none, a new on-demand table takes 4,000 at once)")
	f.IntVar(&o.window, "window", 0, fmt.Sprintf("items buffered to spread consecutive writes over partitions (0 = %d); a smaller window checkpoints sooner", load.DefaultWindow))
	_ = f.MarkHidden("window")
	f.StringVar(&o.onDuplicate, "on-duplicate", load.OnDuplicateFail, `two items with the same primary key: "fail" (a row error naming both rows) or "skip" (keep the first, count the rest)`)
	o.readFlags.register(f, "run", "", "start over, ignoring and overwriting the state file")
	o.outputFlags.register(f, "no progress bars or progress log lines", "also write the summary as JSON to this file")
	f.StringVar(&o.tempDir, "temp-dir", "", "directory for the duplicate-key check of entities whose keys are not proven unique (default $TMPDIR or /tmp)")
	o.profiles.register(f, "run")
	o.fromExportOpts.register(f)
	o.metrics.register(f, false)
	return cmd
}

// writerConfig is the writer's configuration: the writer flags and run's own.
func (o runOpts) writerConfig() load.Config {
	c := o.writerFlags.config()
	c.WarmWCU, c.Window, c.OnDuplicate = o.warmWCU, o.window, o.onDuplicate
	return c
}

// config is the run's configuration as the flags give it; the command
// adds the mapping, the client, the source and the observer.
func (o runOpts) config() engine.RunConfig {
	c := engine.RunConfig{Postgres: o.pg, Table: o.table, CreateTable: o.createTable, Writer: o.writerConfig(), TempDir: o.tempDir}
	o.readFlags.apply(&c)
	return c
}

func runMigration(ctx context.Context, g *globals, o runOpts, cmd *cobra.Command) error {
	m, err := engine.LoadMappingWithCatalog(ctx, o.mapping, o.pg)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	statePath := cmp.Or(o.state, o.defaultState(table))
	resume := resumeCommand(cmd.Flags(), o.pgFrom, statePath)

	client, err := o.writerFlags.client(ctx, o.targetFlags, g.logger)
	if err != nil {
		return err
	}
	exp, err := o.source(ctx, g, o.region)
	if err != nil {
		return err
	}
	prog := newProgress(g, o.quiet)
	mst, stopMetrics, err := o.metrics.serve(g, metrics.Config{Command: "run"})
	if err != nil {
		return err
	}
	defer stopMetrics()
	cfg := o.config()
	cfg.Export, cfg.Mapping, cfg.DynamoDB, cfg.Table, cfg.StateFile = exp, m, client, table, statePath
	cfg.ResumeCommand, cfg.Observer, cfg.Logger = resume, observeRun(prog, mst), prog.Logger()
	res, err := engine.Run(ctx, cfg)
	prog.Stop(res != nil && res.Status == engine.StatusComplete)
	if res == nil {
		return err
	}
	o.end(g, res, err)
	if errors.Is(err, engine.ErrBadRow) && o.onError == engine.OnErrorFail {
		again := resume
		if errors.Is(err, load.ErrDuplicateKey) {
			// A resumed run does not see the rows before the checkpoint,
			// so it could not tell the duplicate's first row: start over.
			again = strings.TrimSuffix(again, " --resume") + " --fresh"
		}
		err = fmt.Errorf("%w\nor, to write bad rows to a reject file (%s) and go on, run:\n  %s --on-error reject --max-rejects -1",
			err, cmp.Or(o.rejectFile, res.Table+".rejects.jsonl"), again)
	}
	_ = render.RunSummary(g.stdout, res)
	_ = render.SourceChanges(g.stderr, res.SourceChanges, "migrate verify "+render.ShellQuote(o.mapping)+" --table "+render.ShellQuote(res.Table))
	if o.summaryJSON != "" {
		if werr := render.WriteJSONFile(o.summaryJSON, res); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return err
}
