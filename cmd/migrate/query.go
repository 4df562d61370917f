package main

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
)

func init() { register(newQueryCmd) }

type queryOpts struct {
	table, index     string
	pk, skPrefix     string
	skFrom, skTo     string
	endpoint, region string
	desc             bool
	limit            int32
	attributes       []string
}

func newQueryCmd(g *globals) *cobra.Command {
	var o queryOpts
	cmd := &cobra.Command{
		Use:   "query --table NAME --pk VALUE [--index NAME] [--sk-prefix P | --sk-from A --sk-to B] [--desc]",
		Short: "Query the target table or one of its indexes (one partition, optional sort-key condition)",
		Long: `query runs one DynamoDB Query against the table or a global secondary index and
prints the items, one JSON object a line. It looks up the key attribute names
with DescribeTable, so you give values only: --pk CUSTOMER#42 --sk-prefix ORDER#.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.table == "" || o.pk == "" {
				return usagef("query: --table and --pk are required")
			}
			if o.skPrefix != "" && (o.skFrom != "" || o.skTo != "") {
				return usagef("query: --sk-prefix and --sk-from/--sk-to exclude each other")
			}
			if (o.skFrom == "") != (o.skTo == "") {
				return usagef("query: --sk-from and --sk-to go together")
			}
			ctx := cmd.Context()
			client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: o.endpoint, Region: o.region, Concurrency: 1, Logger: g.logger})
			if err != nil {
				return err
			}
			items, err := engine.Query(ctx, client, engine.QueryInput{
				Table: o.table, Index: o.index, PK: o.pk,
				SKPrefix: o.skPrefix, SKFrom: o.skFrom, SKTo: o.skTo,
				Desc: o.desc, Limit: o.limit, Attributes: o.attributes,
			})
			if err != nil {
				return err
			}
			var plain []map[string]any
			if err := engine.UnmarshalItems(items, &plain); err != nil {
				return fmt.Errorf("query: %w", err)
			}
			for _, it := range plain {
				b, err := json.Marshal(jsonNumbers(it))
				if err != nil {
					return err
				}
				fmt.Fprintln(g.stdout, string(b))
			}
			fmt.Fprintf(g.stderr, "%s\n", plural(len(items), "item"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table name")
	f.StringVar(&o.index, "index", "", "global secondary index to query")
	f.StringVar(&o.pk, "pk", "", "partition key value")
	f.StringVar(&o.skPrefix, "sk-prefix", "", "only items whose sort key begins with this")
	f.StringVar(&o.skFrom, "sk-from", "", "sort key lower bound (inclusive)")
	f.StringVar(&o.skTo, "sk-to", "", "sort key upper bound (inclusive)")
	f.BoolVar(&o.desc, "desc", false, "descending sort-key order")
	f.Int32Var(&o.limit, "limit", 0, "at most this many items")
	f.StringSliceVar(&o.attributes, "attributes", nil, "only these attributes (comma-separated)")
	f.StringVar(&o.endpoint, "endpoint", "", "DynamoDB endpoint URL")
	f.StringVar(&o.region, "region", "", "AWS region")
	return cmd
}

// jsonNumbers replaces the exact numbers attributevalue decodes
// (attributevalue.Number) by json.Number, so that they print as JSON
// numbers with every digit.
func jsonNumbers(v any) any {
	switch v := v.(type) {
	case attributevalue.Number:
		return json.Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = jsonNumbers(e)
		}
	case []attributevalue.Number:
		out := make([]json.Number, len(v))
		for i, n := range v {
			out[i] = json.Number(n)
		}
		return out
	}
	return v
}
