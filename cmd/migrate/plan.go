package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/internal/report"
)

func init() { register(newPlanCmd) }

type planOpts struct {
	compareFlags
	plan             engine.PlanConfig // the prices and rates the flags set
	fileSize         string
	detailedExitCode bool
}

func (o *planOpts) validate() error {
	// The engine takes 0 for its default rate; the flag has its own.
	if o.plan.ImportGBPerHour <= 0 {
		return usagef("plan: --import-rate must be positive")
	}
	if err := o.compareFlags.validate("plan", o.planConfig(o.values()).Validate()); err != nil {
		return err
	}
	// The prices, rate and overhead are the engine's to check.
	if parseFileSize(o.fileSize) < capacity.MinExportFileSize {
		return usagef("plan: --file-size must be a size of at least %dKiB, as export takes it, such as 64MiB, not %q", capacity.MinExportFileSize>>10, o.fileSize)
	}
	return nil
}

// planConfig is the plan's configuration for these flags around c.
func (o *planOpts) planConfig(c engine.CompareConfig) engine.PlanConfig {
	p := o.plan
	p.CompareConfig, p.ExportFileSize = c, parseFileSize(o.fileSize)
	return p
}

func newPlanCmd(g *globals) *cobra.Command {
	var o planOpts
	cmd := &cobra.Command{
		Use:   "plan [MAPPING] --pg URL [--table T] [--endpoint URL] [--format text|markdown|json] [--html FILE] [--compare scan|get]",
		Short: "Dry run: what run would create, change and leave stale in the table, and what it costs; writes nothing",
		Long:  longHelp("plan"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return runPlan(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(cmd, true, false)
	f.StringVar(&o.html, "html", "", "also write the report as one self-contained HTML file")
	f.Float64Var(&o.plan.PricePerMillionWCU, "price-per-million-wcu", capacity.DefaultPricePerMillionWCU, "on-demand price in USD of a million write request units")
	f.Float64Var(&o.plan.WriteRate, "write-rate", capacity.DefaultWriteRate, "items per second assumed for the duration estimate")
	f.BoolVar(&o.detailedExitCode, "detailed-exitcode", false, "exit 0 when the table needs no change, 2 when it does, 1 on any error (problems included)")
	f.Float64Var(&o.plan.PricePerGBImport, "price-per-gb-import", capacity.DefaultPricePerGBImport, "Import from S3's price in USD per GB of uncompressed data")
	f.Float64Var(&o.plan.ImportGBPerHour, "import-rate", capacity.DefaultImportGBPerHour, "GB per hour assumed for an import (AWS publishes no rate: measure one)")
	f.DurationVar(&o.plan.ImportOverhead, "import-overhead", capacity.DefaultImportOverhead, "time an import takes whatever its size")
	f.StringVar(&o.fileSize, "file-size", "64MiB", "export --file-size the import path counts files at (Import from S3 takes at most 50,000)")
	return cmd
}

func runPlan(ctx context.Context, g *globals, o *planOpts) error {
	cc, err := o.config(ctx, g)
	if err != nil {
		return err
	}
	p, err := engine.Plan(ctx, o.planConfig(cc))
	if err != nil {
		return err
	}
	err = render.Report(g.stdout, o.format,
		func(w io.Writer) error {
			return report.Text(w, p, report.TextOptions{Color: render.WantColor(g.stdout, o.color)})
		},
		func(w io.Writer) error { return report.Markdown(w, p) },
		func(w io.Writer) error { return report.JSON(w, p) })
	if err != nil {
		return fmt.Errorf("plan: write report: %w", err)
	}
	if o.html != "" {
		if err := report.WriteHTMLFile(o.html, p); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		g.logger.Info("plan: wrote HTML report", "file", o.html)
	}
	if p.Summary.Problems > 0 {
		return fmt.Errorf("plan: %s: migrate run would fail", render.Plural(int(p.Summary.Problems), "problem"))
	}
	if o.detailedExitCode && p.Summary.Create+p.Summary.Change+p.Summary.Stale > 0 {
		return exitError{code: exitChanges}
	}
	return nil
}
