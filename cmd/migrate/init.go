package main

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/buildinfo"
	"github.com/pgdynamo/migrate/internal/draft"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/mapping"
)

func init() { register(newInitCmd) }

// jsonSchemaURL is where the mapping file's JSON Schema is published: the
// file docs/schema/mapping.schema.json of this repository, at the release
// the binary was built from (main for a development build).
func jsonSchemaURL(v buildinfo.Info) string {
	return "https://raw.githubusercontent.com/pgdynamo/migrate/" + v.Ref() + "/docs/schema/mapping.schema.json"
}

type initOpts struct {
	cfg    engine.DraftConfig // what the flags set of it
	output string
	force  bool
}

func (o *initOpts) validate() error {
	if o.cfg.Postgres == "" {
		return errNoPG("init")
	}
	if o.cfg.Schema == "" {
		// The Config's "" is the default; the flag shows it.
		return usagef("init: --schema must name a schema (default %s)", mapping.DefaultSchema)
	}
	if o.output == "" {
		return usagef("init: --output must name a file, or - for stdout")
	}
	c := o.cfg
	// The flag shows its default: 0 there is a mistake.
	c.EmbedMax = cmp.Or(c.EmbedMax, -1)
	return checks(flagProblemIn("init", pgNames(""), c.Validate()), checkOutput("init", "--output", o.output))
}

func newInitCmd(g *globals) *cobra.Command {
	var o initOpts
	cmd := &cobra.Command{
		Use:   "init --pg URL [--schema S] [--tables T1,T2] [--table NAME] [-o FILE]",
		Short: "Draft a commented mapping file from the live source catalog",
		Long:  longHelp("init"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.Postgres, _ = pgURLFrom(o.cfg.Postgres)
			if err := o.validate(); err != nil {
				return err
			}
			return runInit(cmd.Context(), g, o)
		},
	}
	f, c := cmd.Flags(), &o.cfg
	f.StringVar(&c.Postgres, "pg", "", pgUsage)
	f.StringVar(&c.Schema, "schema", mapping.DefaultSchema, "PostgreSQL schema to draft")
	f.StringSliceVar(&c.Tables, "tables", nil, "draft only these tables (comma-separated; default every table but migration history)")
	f.StringVar(&c.Table, "table", "", "target DynamoDB table name (default: the database's name)")
	f.StringVarP(&o.output, "output", "o", "mapping.yaml", "file to write, - for stdout")
	f.BoolVar(&o.force, "force", false, "overwrite the output file if it exists")
	f.BoolVar(&c.AcceptEmbeds, "embed", false, "write the offered embeds active instead of commented out")
	f.Int64Var(&c.EmbedMax, "embed-max", draft.DefaultEmbedMax, "offer an embed when a parent has at most this many children in the data")
	f.StringVar(&c.JSONSchema, "json-schema", "", "URL or path of the mapping's JSON Schema for the yaml-language-server line (default: this release's published schema)")
	return cmd
}

func runInit(ctx context.Context, g *globals, o initOpts) error {
	if o.output != "-" && !o.force {
		if _, err := os.Stat(o.output); err == nil {
			return usagef("init: %s exists; pass --force to overwrite it, or -o another file", o.output)
		}
	}
	c := o.cfg
	c.JSONSchema, c.Name = cmp.Or(c.JSONSchema, jsonSchemaURL(currentVersion())), o.output
	if c.Name == "-" {
		c.Name = "mapping.yaml"
	}
	d, err := engine.Draft(ctx, c)
	if err != nil {
		return err
	}

	report := g.stdout
	if o.output == "-" {
		if _, err := g.stdout.Write(d.YAML); err != nil {
			return err
		}
		report = g.stderr
	} else if err := renameio.WriteFile(o.output, d.YAML, 0o644); err != nil {
		// Through a temporary file: an interrupted write leaves no half file.
		return fmt.Errorf("init: write %s: %w", o.output, err)
	}
	return render.InitSummary(report, o.output, c.AcceptEmbeds, d)
}
