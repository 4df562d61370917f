package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
)

// Values of --compare.
const (
	compareScan = engine.CompareScan
	compareGet  = engine.CompareGet
)

// compareFlags are the flags plan and verify share.
type compareFlags struct {
	sourceFlags
	targetFlags
	cfg                 engine.CompareConfig // what the flags set of it
	consistent          bool
	format, color, html string
}

// register adds the flags; withCompare offers --compare (and the flags
// only get reads use), for the commands that can read either way.
func (o *compareFlags) register(cmd *cobra.Command, withCompare, consistent bool) {
	f, c := cmd.Flags(), &o.cfg
	c.Mode, c.Concurrency = compareScan, engine.DefaultReadCalls
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.IntVar(&c.Segments, "segments", engine.DefaultSegments, "parallel Scan segments")
	if withCompare {
		f.StringVar(&c.Mode, "compare", compareScan, "how to read the target: scan or get (read costs below)")
		f.IntVar(&c.Concurrency, "concurrency", engine.DefaultReadCalls, "BatchGetItem calls in flight (--compare get)")
	}
	f.BoolVar(&o.consistent, "consistent", consistent, "strongly consistent reads (twice the read units)")
	o.registerCalls(f, true)
	f.IntVar(&c.SortMemoryMB, "sort-memory", 32, "MB of items each side buffers before sorted runs spill to --temp-dir")
	f.StringVar(&c.TempDir, "temp-dir", "", "directory for sorted runs (default $TMPDIR or /tmp)")
	f.IntVar(&c.MaxDetails, "max-details", 20, "list at most this many items per category (counts are always complete)")
	f.StringVar(&o.format, "format", "text", "report format on stdout: text, markdown or json")
	f.StringVar(&o.color, "color", "auto", "colour in text reports: auto (on a terminal, unless NO_COLOR is set), always, never")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "markdown", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	if withCompare {
		_ = cmd.RegisterFlagCompletionFunc("compare", cobra.FixedCompletions([]string{compareScan, compareGet}, cobra.ShellCompDirectiveNoFileComp))
	}
}

// validate checks the flags; problems is what the verb's Config says of
// the flags' values (see values).
func (o *compareFlags) validate(cmd string, problems error) error {
	switch {
	case o.mapping == "":
		return usagef("%s: --mapping is required", cmd)
	case o.pg == "":
		return errNoPG(cmd)
	case o.cfg.MaxDetails < 0:
		return usagef("%s: --max-details must not be negative", cmd)
	case o.format != "text" && o.format != "markdown" && o.format != "json":
		return usagef("%s: --format must be text, markdown or json, not %q", cmd, o.format)
	case o.color != "auto" && o.color != "always" && o.color != "never":
		return usagef("%s: --color must be auto, always or never, not %q", cmd, o.color)
	}
	return checks(
		flagProblemIn(cmd, pgNames(o.pgFrom), problems),
		o.targetFlags.validate(cmd),
		checkDir(cmd, "--temp-dir", o.cfg.TempDir),
		checkOutput(cmd, "--html", o.html),
	)
}

// values is the comparison's configuration as the flags give it; config
// adds the mapping and the client.
func (o *compareFlags) values() engine.CompareConfig {
	c := o.cfg
	c.Postgres, c.Table, c.Consistency = o.pg, o.table, engine.ConsistencyEventual
	if o.consistent {
		c.Consistency = engine.ConsistencyStrong
	}
	if c.MaxDetails == 0 {
		c.MaxDetails = -1 // none; the engine's 0 means its default
	}
	return c
}

// config opens the DynamoDB client and returns the engine's configuration
// for these flags, with the mapping loaded.
func (o *compareFlags) config(ctx context.Context, g *globals) (engine.CompareConfig, error) {
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return engine.CompareConfig{}, err
	}
	client, err := o.client(ctx, max(o.cfg.Concurrency, o.cfg.Segments), g.logger)
	if err != nil {
		return engine.CompareConfig{}, err
	}
	c := o.values()
	c.Mapping, c.DynamoDB, c.Logger = m, client, g.logger
	return c, nil
}
