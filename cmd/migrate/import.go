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
	mapping     string
	cfg         engine.ImportConfig // what the flags set of it
	summaryJSON string
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
			case o.cfg.From == "":
				return usagef("import: --from is required: the export's s3://bucket/prefix")
			case o.mapping == "":
				return usagef("import: the mapping the export was made with is required (the argument, --mapping or $%s)", envMapping)
			case o.cfg.PollEvery <= 0:
				return usagef("import: --poll must be positive")
			}
			if err := checks(
				flagProblemIn("import", flagNames{"To": "--from"}, engine.CheckExportPlace("import", o.cfg.From, engine.ExportS3{Endpoint: o.cfg.S3.Endpoint}, true)),
				checkTable("import", o.table),
				o.targetFlags.validate("import"),
				checkOutput("import", "--summary-json", o.summaryJSON),
			); err != nil {
				return err
			}
			return runImport(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cfg.From, "from", "", "the export: s3://bucket/prefix")
	addMappingFlag(cmd, &o.mapping)
	o.targetFlags.register(f, "the table to create (default: the mapping's table)")
	registerS3(f, &o.cfg.S3)
	f.BoolVar(&o.cfg.DryRun, "dry-run", false, "print the ImportTable request; call nothing")
	f.DurationVar(&o.cfg.PollEvery, "poll", engine.DefaultImportPollEvery, "how often to ask DynamoDB how the import goes")
	f.StringVar(&o.summaryJSON, "summary-json", "", "also write the result as JSON to this file")
	o.registerCalls(f, true)
	return cmd
}

func runImport(ctx context.Context, g *globals, o importOpts) error {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	cfg := o.cfg
	cfg.S3.Region, cfg.Mapping, cfg.Table, cfg.Logger = o.dynamo.Region, m, o.table, g.logger
	cfg.Progress = func(r engine.ImportResult) {
		g.logger.Info("import", "status", r.Status, "processed", r.Processed, "imported", r.Imported, "errors", r.Errors,
			"of", r.Expected, "processedBytes", r.ProcessedBytes, "elapsed", time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	}
	if !cfg.DryRun {
		if cfg.DynamoDB, err = o.client(ctx, 0, g.logger); err != nil {
			// Import reads the export before it calls DynamoDB: its
			// problems (S3's missing region among them) come first.
			if _, oerr := engine.OpenExport(ctx, engine.OpenExportConfig{From: cfg.From, S3: cfg.S3}); oerr != nil {
				return oerr
			}
			return err
		}
	}
	res, err := engine.Import(ctx, cfg)
	if cfg.DryRun && res != nil {
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
