package main

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/internal/render"
)

func init() { register(newProveCmd) }

type proveOpts struct {
	sourceFlags
	targetFlags
	cfg           prove.Config // what the flags set of it
	state, format string
	shards        []string
}

func newProveCmd(g *globals) *cobra.Command {
	var o proveOpts
	cmd := &cobra.Command{
		Use:   "prove [MAPPING] --pg URL [--table T] [--samples N] [--pattern NAME] [--format text|markdown|json]",
		Short: "Answer the mapping's access patterns with DynamoDB and with SQL, and compare",
		Long:  longHelp("prove"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if o.mapping == "" || o.pg == "" {
				return usagef("prove: --mapping and --pg (or MIGRATE_PG_URL) are required")
			}
			if o.format != "text" && o.format != "markdown" && o.format != "json" {
				return usagef("prove: --format must be text, markdown or json, not %q", o.format)
			}
			if o.cfg.Missing < 0 {
				// The flag's 0 is the Config's -1 (none): the flag
				// takes no negative.
				return usagef("prove: --missing must not be negative (0 = none)")
			}
			pc := engine.ProveConfig{Config: o.cfg, Postgres: o.pg}
			// The flag shows its default: 0 is a mistake.
			pc.Table, pc.Samples = o.table, cmp.Or(pc.Samples, -1)
			if err := checks(
				flagProblemIn("prove", pgNames(o.pgFrom), pc.Validate()),
				o.targetFlags.validate("prove"),
			); err != nil {
				return err
			}
			shards, err := parseShards(o.shards)
			if err != nil {
				return err
			}
			return runProve(cmd, g, &o, shards)
		},
	}
	f, c := cmd.Flags(), &o.cfg
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "DynamoDB table (default: the mapping's table)")
	f.StringVar(&o.format, "format", "text", "report format: text, markdown or json")
	f.StringArrayVar(&c.Patterns, "pattern", nil, "prove only this pattern (repeatable)")
	f.StringArrayVar(&o.shards, "shards", nil, "shard count of a sharded index, INDEX=N (repeatable)")
	f.StringVar(&o.state, "state", "", `state file of the run or sync that wrote the table, for its "count: auto" shard counts (default .migrate/<table>.state.json, when it exists)`)
	f.IntVar(&c.Samples, "samples", prove.DefaultSamples, "parameter sets per pattern when the source has more")
	f.IntVar(&c.Missing, "missing", prove.DefaultMissing, "parameter sets per pattern that do not exist in the source")
	f.Uint64Var(&c.Seed, "seed", prove.DefaultSeed, "seed of the sample: the same seed, the same parameter sets")
	f.IntVar(&c.MaxDetails, "max-details", 1, "differences shown per pattern")
	f.BoolVar(&c.ConsistentRead, "consistent", true, "strongly consistent reads of the table and local indexes")
	o.registerCalls(f, true)
	return cmd
}

func parseShards(specs []string) (map[string]int, error) {
	out := map[string]int{}
	for _, s := range specs {
		name, n, ok := strings.Cut(s, "=")
		count, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || count < 1 {
			return nil, usagef("prove: --shards wants INDEX=N with N at least 1, not %q", s)
		}
		out[name] = count
	}
	return out, nil
}

func runProve(cmd *cobra.Command, g *globals, o *proveOpts, shards map[string]int) error {
	ctx := cmd.Context()
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	if len(m.AccessPatterns) == 0 {
		return usagef("prove: %s declares no accessPatterns", o.mapping)
	}
	client, err := o.client(ctx, 0, g.logger)
	if err != nil {
		return err
	}
	written, err := engine.WrittenShards("prove", m, o.state, cmp.Or(o.table, m.Table))
	if err != nil {
		return err
	}
	_ = render.StateShards(g.stderr, "prove", written)
	cfg := o.cfg
	cfg.Mapping, cfg.Table, cfg.Shards, cfg.AutoShards = m, o.table, shards, written.Map()
	if cfg.Missing == 0 {
		cfg.Missing = -1 // none
	}
	g.logger.Debug("prove: asking", "table", cfg.WithDefaults().Table, "patterns", len(m.AccessPatterns), "samples", cfg.Samples)
	res, err := engine.Prove(ctx, engine.ProveConfig{Config: cfg, Postgres: o.pg, DynamoDB: client, StateFile: o.state})
	if err != nil {
		return err
	}
	if err := render.Report(g.stdout, o.format, res.WriteText, res.WriteMarkdown, res.WriteJSON); err != nil {
		return fmt.Errorf("prove: write report: %w", err)
	}
	switch {
	case res.Proven:
		return nil
	case res.Failed():
		return errors.New("prove: " + res.Summary())
	}
	for _, p := range res.Patterns {
		if p.Mismatched > 0 {
			return exitError{exitDiffers, errors.New("prove: " + res.Summary())}
		}
	}
	return errors.New("prove: " + res.Summary()) // nothing to try: not proven, not different
}
