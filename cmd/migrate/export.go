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

// s3Flags say how to reach S3.
type s3Flags struct {
	endpoint  string
	pathStyle bool
}

func (o *s3Flags) register(f *pflag.FlagSet) {
	f.StringVar(&o.endpoint, "s3-endpoint", "", "S3 endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_S3)")
	f.BoolVar(&o.pathStyle, "s3-path-style", false, "address buckets as ENDPOINT/BUCKET (S3-compatible stores)")
}

// config is the engine's S3 settings as the flags give them.
func (o s3Flags) config(region string) engine.ExportS3 {
	return engine.ExportS3{Endpoint: o.endpoint, Region: region, PathStyle: o.pathStyle}
}

type exportOpts struct {
	sourceFlags
	table       string
	to          string
	compression string
	fileSize    string
	onDuplicate string

	readFlags

	s3          s3Flags
	region      string
	partSizeMB  int64
	uploadParts int

	outputFlags
	metrics  metricsOpts
	profiles profiles
}

func (o *exportOpts) validate() error {
	switch {
	case o.mapping == "":
		return usagef("export: a mapping file is required (the argument, --mapping or $%s)", envMapping)
	case o.pg == "":
		return errNoPG("export")
	case o.to == "":
		return usagef("export: --to is required: a directory or s3://bucket/prefix")
	case o.fileSizeBytes() == 0:
		// Not a size (the engine would take 0 for its default).
		return usagef("export: --file-size %s", export.FileSizeProblem(0, strconv.Quote(o.fileSize)))
	}
	// The flags show their defaults: 0 there is a mistake, not a request
	// for the default.
	c := o.exportConfig(o.runConfig())
	if o.partSizeMB < 1 || o.partSizeMB > 1<<20 {
		c.S3.PartSize = -1
	}
	if o.uploadParts == 0 {
		c.S3.Concurrency = -1
	}
	if err := flagProblem("export", c.Validate()); err != nil {
		return err
	}
	if err := o.readFlags.validate("export"); err != nil {
		return err
	}
	return checks(
		flagProblemIn("export", pgNames(o.pgFrom), o.runConfig().Validate()),
		checkOutput("export", "--reject-file", o.rejectFile),
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
			o.given(cmd.Flags())
			if err := o.validate(); err != nil {
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
	f.StringVar(&o.to, "to", "", "destination: a directory, or s3://bucket/prefix")
	f.StringVar(&o.table, "table", "", "table named in the manifest, the default of import (default: the mapping's table)")
	f.StringVar(&o.compression, "compression", export.CompressionGzip, "gzip, zstd or none")
	f.StringVar(&o.fileSize, "file-size", "64MiB", "uncompressed size of a file (KiB, MiB, GiB); the items of a file wait in memory for its commit")
	f.StringVar(&o.onDuplicate, "on-duplicate", load.OnDuplicateFail, `two items with the same primary key: "fail" (a row error naming both rows) or "skip"`)
	o.readFlags.register(f, "export", ".export", "start over: ignore the state file and replace an export at the destination")
	o.s3.register(f)
	f.StringVar(&o.region, "region", "", "AWS region of the bucket (default: AWS configuration, e.g. $AWS_REGION)")
	f.Int64Var(&o.partSizeMB, "part-size", 8, "MiB per uploaded part of a file (S3)")
	f.IntVar(&o.uploadParts, "upload-concurrency", 4, "parts of a file uploaded at a time (S3); memory is about part size x (this + 1)")
	o.outputFlags.register(f, "no progress bars or progress log lines", "also write the run's summary as JSON to this file")
	o.metrics.register(f, false)
	o.profiles.register(f, "export")
	return cmd
}

// runConfig is the export's reading, as run's, as the flags give it; the
// command adds the mapping and the observer.
func (o exportOpts) runConfig() engine.RunConfig {
	c := engine.RunConfig{Postgres: o.pg, Table: o.table}
	o.readFlags.apply(&c)
	return c
}

func runExport(ctx context.Context, g *globals, o exportOpts, cmd *cobra.Command) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	statePath := cmp.Or(o.state, filepath.Join(engine.DefaultStateDir, table+".export.state.json"))
	// The resume command of a run, with this command's name.
	resume := strings.Replace(resumeCommand(cmd.Flags(), o.pgFrom, statePath), "migrate run", "migrate export", 1)
	if _, err := export.ParseWhere(o.to); err != nil {
		return usageError{err}
	}
	gcpace.Hold(o.fileSizeBytes())
	prog := newProgress(g, o.quiet)
	mst, stopMetrics, err := o.metrics.serve(g, metrics.Config{Command: "export"})
	if err != nil {
		return err
	}
	defer stopMetrics()
	run := o.runConfig()
	run.Mapping, run.Table, run.StateFile = m, table, statePath
	run.ResumeCommand, run.Observer, run.Logger = resume, observeRun(prog, mst), prog.Logger()
	res, err := engine.Export(ctx, o.exportConfig(run))
	prog.Stop(res != nil && res.Run.Status == engine.StatusComplete)
	if res == nil {
		return err
	}
	r := res.Run
	o.end(g, r, err)
	_ = render.RunSummary(g.stdout, r)
	_ = render.Export(g.stdout, res)
	if o.summaryJSON != "" {
		if werr := render.WriteJSONFile(o.summaryJSON, r); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return err
}

// fileSizeBytes reads --file-size.
// exportConfig is the export's configuration for these flags around run.
func (o exportOpts) exportConfig(run engine.RunConfig) engine.ExportConfig {
	c := engine.ExportConfig{Run: run, To: o.to, S3: o.s3.config(o.region), Compression: o.compression, FileSize: o.fileSizeBytes(), OnDuplicate: o.onDuplicate}
	c.S3.PartSize, c.S3.Concurrency = o.partSizeMB<<20, o.uploadParts
	return c
}

func (o *exportOpts) fileSizeBytes() int64 { return parseFileSize(o.fileSize) }

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
