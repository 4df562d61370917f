package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/mapping"
)

func init() { register(newQueryCmd) }

type queryOpts struct {
	targetFlags
	q                      engine.QueryInput // what the flags set of it
	mapping, state, output string
	pattern                string
	params                 []string
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
			in := engine.QueryInput{Limit: o.q.Limit, Attributes: o.q.Attributes, Table: o.table, Index: o.q.Index}
			if err := checks(
				flagProblem("query", in.Validate()),
				o.targetFlags.validate("query"),
			); err != nil {
				return err
			}
			return runQuery(cmd, g, &o)
		},
	}
	f, q := cmd.Flags(), &o.q
	addMappingFlag(cmd, &o.mapping)
	f.StringVar(&o.state, "state", "", "state file with the run's computed shard counts (default .migrate/<table>.state.json)")
	f.StringVar(&q.Index, "index", "", "secondary index to query")
	f.StringVar(&q.PK, "pk", "", "partition key value (of one shard, or, with a mapping, without the shard)")
	f.StringVar(&q.SKPrefix, "sk-prefix", "", "only items whose sort key begins with this")
	f.StringVar(&q.SKFrom, "sk-from", "", "sort key lower bound (inclusive)")
	f.StringVar(&q.SKTo, "sk-to", "", "sort key upper bound (inclusive)")
	f.BoolVar(&q.Desc, "desc", false, "descending sort-key order")
	f.BoolVar(&q.Consistent, "consistent", false, "strongly consistent reads (not on global secondary indexes)")
	f.Int32Var(&q.Limit, "limit", 0, "at most this many items")
	f.StringSliceVar(&q.Attributes, "attributes", nil, "only these attributes (comma-separated)")
	f.StringVar(&o.output, "output", "json", "json (plain values) or dynamodb-json (typed)")
	f.StringVar(&o.pattern, "pattern", "", "run this access pattern of the mapping (with --param)")
	f.StringArrayVar(&o.params, "param", nil, "a parameter of --pattern, name=value (repeatable)")
	o.registerCalls(f, true)
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
	case o.table == "" || o.q.PK == "":
		return usagef("query: --pk is required, and --table (or a mapping that names the table)")
	}
	q := o.q
	q.Table = o.table
	if err := flagProblem("query", q.Validate()); err != nil {
		return err
	}
	if o.output != "json" && o.output != "dynamodb-json" {
		return usagef("query: --output must be json or dynamodb-json, not %q", o.output)
	}
	if m != nil {
		pks, err := engine.MappingShardKeys(m, o.table, q.Index, q.PK, o.state)
		if err != nil {
			return err
		}
		if pks != nil {
			q.PK, q.PKs = "", pks
		}
		if len(q.PKs) > 1 {
			g.logger.Debug("query: fanning out over the shards", "index", q.Index, "shards", len(q.PKs))
		}
	}
	return o.answer(cmd.Context(), g, func(ctx context.Context, c engine.Querier) ([]map[string]types.AttributeValue, error) {
		return engine.Query(ctx, c, q)
	})
}

// answer asks DynamoDB through the query's client and prints the items.
func (o *queryOpts) answer(ctx context.Context, g *globals, ask func(context.Context, engine.Querier) ([]map[string]types.AttributeValue, error)) error {
	client, err := o.client(ctx, 1, g.logger)
	if err != nil {
		return err
	}
	items, err := ask(ctx, client)
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
	case o.q.PK != "" || o.q.Index != "" || o.q.SKPrefix != "" || o.q.SKFrom != "" || o.q.SKTo != "" || o.q.Desc || o.q.Limit != 0:
		return usagef("query: --pattern takes its key condition, index, direction and limit from the mapping: leave out --pk, --index, --sk-*, --desc and --limit")
	case o.output != "json" && o.output != "dynamodb-json":
		return usagef("query: --output must be json or dynamodb-json, not %q", o.output)
	}
	in := engine.PatternQueryInput{Table: o.table, Mapping: m, Pattern: o.pattern, Params: map[string]string{},
		Attributes: o.q.Attributes, Consistent: o.q.Consistent}
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
	return o.answer(cmd.Context(), g, func(ctx context.Context, c engine.Querier) ([]map[string]types.AttributeValue, error) {
		return engine.QueryPattern(ctx, c, in)
	})
}
