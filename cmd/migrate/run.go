package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	cfg engine.RunConfig // what the flags set of it
	outputFlags
	profiles profiles

	fromExportOpts // run --from-export (fromexport.go)
	metrics        metricsOpts
}

func (o *runOpts) validate(f *pflag.FlagSet) error {
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
	if err := checkRejectFlags("run", f, o.cfg); err != nil {
		return err
	}
	c := o.config()
	c.Writer = o.writer(c.Writer, true)
	return checks(
		flagProblemIn("run", pgNames(o.pgFrom), c.Validate()),
		o.targetFlags.validate("run"),
		flagProblemIn("run", flagNames{"To": "--from-export"}, engine.CheckExportPlace("run", o.fromExport, engine.ExportS3{Endpoint: o.s3.Endpoint}, false)),
		checkDir("run", "--temp-dir", c.TempDir),
		checkOutput("run", "--reject-file", c.RejectFile),
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
			if err := o.validate(cmd.Flags()); err != nil {
				return err
			}
			return o.profiles.profiled(func() error { return runMigration(cmd.Context(), g, o, cmd) })
		},
	}
	f, w := cmd.Flags(), &o.cfg.Writer
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.BoolVar(&o.cfg.CreateTable, "create-table", false, "create the table and its indexes (on-demand) if missing, and wait until it is ACTIVE")
	o.registerWriter(f, w, "parallel BatchWriteItem calls (default: 32 per processor, 8 to 128)",
		"cap on write units per second, table plus indexes (0 = no cap; the writer still slows down when throttled)",
		"floor below which throttling never slows the writer, in write units per second", "the run stops with a resumable checkpoint")
	f.Int64Var(&w.WarmWCU, "warm-wcu", 0, "with --create-table: pre-warm the new table for this many write units per second (its warm throughput; 0 = none, a new on-demand table takes 4,000 at once)")
	f.IntVar(&w.Window, "window", 0, fmt.Sprintf("items buffered to spread consecutive writes over partitions (0 = %d); a smaller window checkpoints sooner", load.DefaultWindow))
	_ = f.MarkHidden("window")
	f.StringVar(&w.OnDuplicate, "on-duplicate", load.OnDuplicateFail, `two items with the same primary key: "fail" (a row error naming both rows) or "skip" (keep the first, count the rest)`)
	registerRead(f, &o.cfg, "run", "", "start over, ignoring and overwriting the state file")
	o.outputFlags.register(f, "no progress bars or progress log lines", "also write the summary as JSON to this file")
	f.StringVar(&o.cfg.TempDir, "temp-dir", "", "directory for the duplicate-key check of entities whose keys are not proven unique (default $TMPDIR or /tmp)")
	o.profiles.register(f, "run")
	o.fromExportOpts.register(f)
	o.metrics.register(f, false)
	return cmd
}

// config is the run's configuration as the flags give it; the command
// adds the mapping, the client, the source and the observer.
func (o runOpts) config() engine.RunConfig {
	c := o.cfg
	c.Postgres, c.Table, c.Writer = o.pg, o.table, o.writer(c.Writer, false)
	return c
}

func runMigration(ctx context.Context, g *globals, o runOpts, cmd *cobra.Command) error {
	m, err := engine.LoadMappingWithCatalog(ctx, o.mapping, o.pg)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	statePath := cmp.Or(o.cfg.StateFile, o.defaultState(table))
	resume := resumeCommand(cmd.Flags(), o.pgFrom, statePath)

	client, err := o.writerClient(ctx, o.cfg.Writer, g.logger)
	if err != nil {
		return err
	}
	exp, err := o.source(ctx, g, o.dynamo.Region)
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
	endRead(g, o.cfg, res, err)
	if errors.Is(err, engine.ErrBadRow) && o.cfg.OnError == engine.OnErrorFail {
		again := resume
		if errors.Is(err, load.ErrDuplicateKey) {
			// A resumed run does not see the rows before the checkpoint,
			// so it could not tell the duplicate's first row: start over.
			again = strings.TrimSuffix(again, " --resume") + " --fresh"
		}
		err = fmt.Errorf("%w\nor, to write bad rows to a reject file (%s) and go on, run:\n  %s --on-error reject --max-rejects -1",
			err, cmp.Or(o.cfg.RejectFile, res.Table+".rejects.jsonl"), again)
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
