package main

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/internal/gcpace"
	"github.com/pgdynamo/migrate/internal/metrics"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/load"
)

func init() { register(newExportCmd) }

// registerS3 adds the flags that say how to reach S3, setting s.
func registerS3(f *pflag.FlagSet, s *engine.ExportS3) {
	f.StringVar(&s.Endpoint, "s3-endpoint", "", "S3 endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_S3)")
	f.BoolVar(&s.PathStyle, "s3-path-style", false, "address buckets as ENDPOINT/BUCKET (S3-compatible stores)")
}

type exportOpts struct {
	sourceFlags
	cfg        engine.ExportConfig // what the flags set of it
	fileSize   string
	partSizeMB int64
	outputFlags
	metrics  metricsOpts
	profiles profiles
}

func (o *exportOpts) validate(f *pflag.FlagSet) error {
	switch {
	case o.mapping == "":
		return usagef("export: a mapping file is required (the argument, --mapping or $%s)", envMapping)
	case o.pg == "":
		return errNoPG("export")
	case o.cfg.To == "":
		return usagef("export: --to is required: a directory or s3://bucket/prefix")
	case parseFileSize(o.fileSize) == 0:
		// Not a size (the engine would take 0 for its default).
		return usagef("export: --file-size %s", export.FileSizeProblem(0, strconv.Quote(o.fileSize)))
	}
	// The flags show their defaults: 0 there is a mistake, not a request
	// for the default.
	c := o.config()
	if o.partSizeMB < 1 || o.partSizeMB > 1<<20 {
		c.S3.PartSize = -1
	}
	c.S3.Concurrency = cmp.Or(c.S3.Concurrency, -1)
	if err := flagProblem("export", c.Validate()); err != nil {
		return err
	}
	if err := checkRejectFlags("export", f, c.Run); err != nil {
		return err
	}
	return checks(
		flagProblemIn("export", pgNames(o.pgFrom), c.Run.Validate()),
		checkOutput("export", "--reject-file", c.Run.RejectFile),
		checkOutput("export", "--summary-json", o.summaryJSON),
		o.profiles.validate("export"),
	)
}

func newExportCmd(g *globals) *cobra.Command {
	var o exportOpts
	cmd := &cobra.Command{
		Use:   "export [MAPPING] --pg URL --to DIR|s3://BUCKET/PREFIX [flags]",
		Short: "Write the items as DYNAMODB_JSON files for Import from S3 (or run --from-export)",
		Long:  longHelp("export"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if err := o.validate(cmd.Flags()); err != nil {
				return err
			}
			if err := o.metrics.validate("export"); err != nil {
				return err
			}
			return o.profiles.profiled(func() error { return runExport(cmd.Context(), g, o, cmd) })
		},
	}
	f := cmd.Flags()
	o.sourceFlags.register(cmd)
	f.StringVar(&o.cfg.To, "to", "", "destination: a directory, or s3://bucket/prefix")
	f.StringVar(&o.cfg.Run.Table, "table", "", "table named in the manifest, the default of import (default: the mapping's table)")
	f.StringVar(&o.cfg.Compression, "compression", export.CompressionGzip, "gzip, zstd or none")
	f.StringVar(&o.fileSize, "file-size", "64MiB", "uncompressed size of a file (KiB, MiB, GiB); the items of a file wait in memory for its commit")
	f.StringVar(&o.cfg.OnDuplicate, "on-duplicate", load.OnDuplicateFail, `two items with the same primary key: "fail" (a row error naming both rows) or "skip"`)
	registerRead(f, &o.cfg.Run, "export", ".export", "start over: ignore the state file and replace an export at the destination")
	registerS3(f, &o.cfg.S3)
	f.StringVar(&o.cfg.S3.Region, "region", "", "AWS region of the bucket (default: AWS configuration, e.g. $AWS_REGION)")
	f.Int64Var(&o.partSizeMB, "part-size", 8, "MiB per uploaded part of a file (S3)")
	f.IntVar(&o.cfg.S3.Concurrency, "upload-concurrency", 4, "parts of a file uploaded at a time (S3); memory is about part size x (this + 1)")
	o.outputFlags.register(f, "no progress bars or progress log lines", "also write the run's summary as JSON to this file")
	o.metrics.register(f, false)
	o.profiles.register(f, "export")
	return cmd
}

// config is the export's configuration as the flags give it; the command
// adds the mapping and the observer.
func (o exportOpts) config() engine.ExportConfig {
	c := o.cfg
	c.Run.Postgres, c.FileSize, c.S3.PartSize = o.pg, parseFileSize(o.fileSize), o.partSizeMB<<20
	return c
}

func runExport(ctx context.Context, g *globals, o exportOpts, cmd *cobra.Command) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	c := o.config()
	c.Run.Mapping, c.Run.Table = m, cmp.Or(c.Run.Table, m.Table)
	c.Run.StateFile = cmp.Or(c.Run.StateFile, filepath.Join(engine.DefaultStateDir, c.Run.Table+".export.state.json"))
	// The resume command of a run, with this command's name.
	resume := strings.Replace(resumeCommand(cmd.Flags(), o.pgFrom, c.Run.StateFile), "migrate run", "migrate export", 1)
	if _, err := export.ParseWhere(c.To); err != nil {
		return usageError(err)
	}
	gcpace.Hold(c.FileSize)
	prog := newProgress(g, o.quiet)
	mst, stopMetrics, err := o.metrics.serve(g, metrics.Config{Command: "export"})
	if err != nil {
		return err
	}
	defer stopMetrics()
	c.Run.ResumeCommand, c.Run.Observer, c.Run.Logger = resume, observeRun(prog, mst), prog.Logger()
	res, err := engine.Export(ctx, c)
	prog.Stop(res != nil && res.Run.Status == engine.StatusComplete)
	if res == nil {
		return err
	}
	r := res.Run
	endRead(g, o.cfg.Run, r, err)
	_ = render.RunSummary(g.stdout, r)
	_ = render.Export(g.stdout, res)
	if o.summaryJSON != "" {
		if werr := render.WriteJSONFile(o.summaryJSON, r); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return err
}

// parseFileSize reads a --file-size: a number with KiB, MiB or GiB, or 0
// when it is not one.
func parseFileSize(size string) int64 {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}} {
		if num, ok := strings.CutSuffix(size, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n < 0 || n > 1<<40>>u.shift {
				return 0
			}
			return n << u.shift
		}
	}
	return 0
}
