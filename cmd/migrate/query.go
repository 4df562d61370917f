package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/mapping"
)

func init() { register(newQueryCmd) }

type queryOpts struct {
	targetFlags
	mapping, state   string
	index            string
	pk, skPrefix     string
	skFrom, skTo     string
	desc, consistent bool
	limit            int32
	attributes       []string
	output           string
	pattern          string
	params           []string
	calls            callFlags
}

func newQueryCmd(g *globals) *cobra.Command {
	var o queryOpts
	cmd := &cobra.Command{
		Use:   "query [MAPPING] --pk VALUE [--table NAME] [--index NAME] [--sk-prefix P | --sk-from A --sk-to B] [--desc]",
		Short: "Query the target table or one of its indexes (one partition, optional sort-key condition)",
		Long:  longHelp("query"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolveMapping(cmd, args, &o.mapping); err != nil {
				return err
			}
			// The sort-key flags are checked with the query (see runQuery).
			in := engine.QueryInput{Limit: o.limit, Attributes: o.attributes, Table: o.table, Index: o.index}
			if err := checks(
				flagProblem("query", in.Validate()),
				o.targetFlags.validate("query", o.calls),
			); err != nil {
				return err
			}
			return runQuery(cmd, g, &o)
		},
	}
	f := cmd.Flags()
	addMappingFlag(cmd, &o.mapping)
	f.StringVar(&o.state, "state", "", "state file with the run's computed shard counts (default .migrate/<table>.state.json)")
	f.StringVar(&o.index, "index", "", "secondary index to query")
	f.StringVar(&o.pk, "pk", "", "partition key value (of one shard, or, with a mapping, without the shard)")
	f.StringVar(&o.skPrefix, "sk-prefix", "", "only items whose sort key begins with this")
	f.StringVar(&o.skFrom, "sk-from", "", "sort key lower bound (inclusive)")
	f.StringVar(&o.skTo, "sk-to", "", "sort key upper bound (inclusive)")
	f.BoolVar(&o.desc, "desc", false, "descending sort-key order")
	f.BoolVar(&o.consistent, "consistent", false, "strongly consistent reads (not on global secondary indexes)")
	f.Int32Var(&o.limit, "limit", 0, "at most this many items")
	f.StringSliceVar(&o.attributes, "attributes", nil, "only these attributes (comma-separated)")
	f.StringVar(&o.output, "output", "json", "json (plain values) or dynamodb-json (typed)")
	f.StringVar(&o.pattern, "pattern", "", "run this access pattern of the mapping (with --param)")
	f.StringArrayVar(&o.params, "param", nil, "a parameter of --pattern, name=value (repeatable)")
	o.calls.register(f, true)
	o.targetFlags.register(f, "table name (default: the mapping's table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "dynamodb-json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("index", func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		// The mapping's indexes, when the mapping is known.
		if err := resolveMapping(cmd, args, &o.mapping); err != nil || o.mapping == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		m, err := engine.LoadMapping(o.mapping)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, ix := range m.Indexes {
			names = append(names, ix.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func runQuery(cmd *cobra.Command, g *globals, o *queryOpts) error {
	var m *mapping.Mapping
	if o.mapping != "" {
		var err error
		if m, err = engine.LoadMapping(o.mapping); err != nil {
			return err
		}
		o.table = cmp.Or(o.table, m.Table)
	}
	if o.pattern != "" {
		return runPatternQuery(cmd, g, o, m)
	}
	switch {
	case len(o.params) > 0:
		return usagef("query: --param goes with --pattern")
	case o.table == "" || o.pk == "":
		return usagef("query: --pk is required, and --table (or a mapping that names the table)")
	}
	q := engine.QueryInput{
		Table: o.table, Index: o.index, PK: o.pk,
		SKPrefix: o.skPrefix, SKFrom: o.skFrom, SKTo: o.skTo,
		Desc: o.desc, Limit: o.limit, Attributes: o.attributes, Consistent: o.consistent,
	}
	if err := flagProblem("query", q.Validate()); err != nil {
		return err
	}
	if o.output != "json" && o.output != "dynamodb-json" {
		return usagef("query: --output must be json or dynamodb-json, not %q", o.output)
	}
	if m != nil {
		pks, err := engine.MappingShardKeys(m, o.table, o.index, o.pk, o.state)
		if err != nil {
			return err
		}
		if pks != nil {
			q.PK, q.PKs = "", pks
		}
		if len(q.PKs) > 1 {
			g.logger.Debug("query: fanning out over the shards", "index", o.index, "shards", len(q.PKs))
		}
	}
	ctx := cmd.Context()
	client, err := o.client(ctx, o.calls, 1, g.logger)
	if err != nil {
		return err
	}
	items, err := engine.Query(ctx, client, q)
	if err != nil {
		return err
	}
	if err := render.Items(g.stdout, o.output, items); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	fmt.Fprintf(g.stderr, "%s\n", render.Plural(len(items), "item"))
	return nil
}

// runPatternQuery runs --pattern with its --param values.
func runPatternQuery(cmd *cobra.Command, g *globals, o *queryOpts, m *mapping.Mapping) error {
	switch {
	case m == nil:
		return usagef("query: --pattern needs the mapping (argument, --mapping or $MIGRATE_MAPPING)")
	case o.pk != "" || o.index != "" || o.skPrefix != "" || o.skFrom != "" || o.skTo != "" || o.desc || o.limit != 0:
		return usagef("query: --pattern takes its key condition, index, direction and limit from the mapping: leave out --pk, --index, --sk-*, --desc and --limit")
	case o.output != "json" && o.output != "dynamodb-json":
		return usagef("query: --output must be json or dynamodb-json, not %q", o.output)
	}
	in := engine.PatternQueryInput{Table: o.table, Mapping: m, Pattern: o.pattern, Params: map[string]string{},
		Attributes: o.attributes, Consistent: o.consistent}
	for _, p := range o.params {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return usagef("query: --param %q: want name=value", p)
		}
		in.Params[name] = value
	}
	shards, err := engine.PatternShards(m, o.pattern, o.state, o.table)
	if err != nil {
		return err
	}
	in.Shards = shards
	ctx := cmd.Context()
	client, err := o.client(ctx, o.calls, 1, g.logger)
	if err != nil {
		return err
	}
	items, err := engine.QueryPattern(ctx, client, in)
	if err != nil {
		return err
	}
	if err := render.Items(g.stdout, o.output, items); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	fmt.Fprintf(g.stderr, "%s\n", render.Plural(len(items), "item"))
	return nil
}
