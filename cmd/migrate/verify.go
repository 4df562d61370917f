package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/internal/report"
)

func init() { register(newVerifyCmd) }

type verifyOpts struct {
	compareFlags
	sample float64
	state  string
}

func (o *verifyOpts) validate(cmd *cobra.Command) error {
	// A sample is cheap only if only the sampled keys are read.
	if o.sample < 1 && !cmd.Flags().Changed("compare") {
		o.cfg.Mode = compareGet
	}
	return o.compareFlags.validate("verify", engine.VerifyConfig{CompareConfig: o.values(), Sample: o.sample}.Validate())
}

// errDifferent is returned when verify found differences; they are
// already printed, so the message is short.
var errDifferent = errors.New("verify: the table differs from the source")

func newVerifyCmd(g *globals) *cobra.Command {
	var o verifyOpts
	cmd := &cobra.Command{
		Use:   "verify [MAPPING] --pg URL [--table T] [--endpoint URL] [--sample P] [--format text|markdown|json]",
		Short: "Check a loaded table against the source: per-entity counts and content hashes, every differing item",
		Long:  longHelp("verify"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if err := o.validate(cmd); err != nil {
				return err
			}
			return runVerify(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(cmd, true, true)
	f.Float64Var(&o.sample, "sample", 1, "check this fraction of the keys (0 < P <= 1), chosen by a hash of the key")
	f.StringVar(&o.state, "state", "", `state file of the run or sync that wrote the table, for its "count: auto" shard counts (default .migrate/<table>.state.json, when it exists)`)
	return cmd
}

func runVerify(ctx context.Context, g *globals, o *verifyOpts) error {
	cc, err := o.config(ctx, g)
	if err != nil {
		return err
	}
	st, err := engine.WrittenShards("verify", cc.Mapping, o.state, cmp.Or(cc.Table, cc.Mapping.Table))
	if err != nil {
		return err
	}
	_ = render.StateShards(g.stderr, "verify", st)
	cc.Shards = st.Map()
	v, err := engine.Verify(ctx, engine.VerifyConfig{CompareConfig: cc, Sample: o.sample, StateFile: o.state})
	if err != nil {
		return err
	}
	err = render.Report(g.stdout, o.format,
		func(w io.Writer) error {
			return report.VerifyText(w, v, report.TextOptions{Color: render.WantColor(g.stdout, o.color)})
		},
		func(w io.Writer) error { return report.VerifyMarkdown(w, v) },
		func(w io.Writer) error { return report.VerifyJSON(w, v) })
	if err != nil {
		return fmt.Errorf("verify: write report: %w", err)
	}
	if !v.Identical {
		if cc.Shards == nil && engine.HasAutoShards(cc.Mapping) {
			fmt.Fprintf(g.stderr, "migrate: the \"count: auto\" shard counts were computed from the source as it is now; if the table was written by a sync, or by a run over data that has changed since, items in other shards differ: give that run's state file with --state\n")
		}
		return exitError{code: exitDiffers, err: errDifferent}
	}
	return nil
}
