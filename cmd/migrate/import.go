package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

func init() { register(newImportCmd) }

type importOpts struct {
	targetFlags
	from, mapping string
	s3            s3Flags
	dryRun        bool
	poll          time.Duration
	summaryJSON   string
	calls         callFlags
}

func newImportCmd(g *globals) *cobra.Command {
	var o importOpts
	cmd := &cobra.Command{
		Use:   "import [MAPPING] --from s3://BUCKET/PREFIX [--table NAME] [--dry-run]",
		Short: "Create a table from an export with DynamoDB's Import from S3",
		Long:  longHelp("import"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			switch {
			case o.from == "":
				return usagef("import: --from is required: the export's s3://bucket/prefix")
			case o.mapping == "":
				return usagef("import: the mapping the export was made with is required (the argument, --mapping or $%s)", envMapping)
			case o.poll <= 0:
				return usagef("import: --poll must be positive")
			}
			if err := checks(
				flagProblemIn("import", flagNames{"To": "--from"}, engine.CheckExportPlace("import", o.from, engine.ExportS3{Endpoint: o.s3.endpoint}, true)),
				checkTable("import", "--table", o.table),
				o.targetFlags.validate("import", o.calls),
				checkOutput("import", "--summary-json", o.summaryJSON),
			); err != nil {
				return err
			}
			return runImport(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "the export: s3://bucket/prefix")
	addMappingFlag(cmd, &o.mapping)
	o.targetFlags.register(f, "the table to create (default: the mapping's table)")
	o.s3.register(f)
	f.BoolVar(&o.dryRun, "dry-run", false, "print the ImportTable request; call nothing")
	f.DurationVar(&o.poll, "poll", engine.DefaultImportPollEvery, "how often to ask DynamoDB how the import goes")
	f.StringVar(&o.summaryJSON, "summary-json", "", "also write the result as JSON to this file")
	o.calls.register(f, true)
	return cmd
}

func runImport(ctx context.Context, g *globals, o importOpts) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	cfg := engine.ImportConfig{From: o.from, S3: o.s3.config(o.region),
		Mapping: m, Table: o.table, DryRun: o.dryRun, PollEvery: o.poll, Logger: g.logger,
		Progress: func(r engine.ImportResult) {
			g.logger.Info("import", "status", r.Status, "processed", r.Processed, "imported", r.Imported, "errors", r.Errors,
				"of", r.Expected, "processedBytes", r.ProcessedBytes, "elapsed", time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
		}}
	if !o.dryRun {
		if cfg.DynamoDB, err = o.client(ctx, o.calls, 0, g.logger); err != nil {
			// Import reads the export before it calls DynamoDB: its
			// problems (S3's missing region among them) come first.
			if _, oerr := engine.OpenExport(ctx, engine.OpenExportConfig{From: o.from, S3: cfg.S3}); oerr != nil {
				return oerr
			}
			return err
		}
	}
	res, err := engine.Import(ctx, cfg)
	if o.dryRun && res != nil {
		return render.RequestJSON(g.stdout, res.Request)
	}
	if res != nil && res.ARN != "" {
		_ = render.Import(g.stdout, res)
		if o.summaryJSON != "" {
			if werr := render.WriteJSONFile(o.summaryJSON, res); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}
