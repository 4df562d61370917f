package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/tableread"
	"github.com/pgdynamo/migrate/transform"
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
			desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &o.table})
			if err != nil {
				return fmt.Errorf("describe table %s: %w", o.table, err)
			}
			keys := desc.Table.KeySchema
			if o.index != "" {
				keys = nil
				for _, gsi := range desc.Table.GlobalSecondaryIndexes {
					if aws.ToString(gsi.IndexName) == o.index {
						keys = gsi.KeySchema
					}
				}
				if keys == nil {
					return usagef("query: table %s has no index %s", o.table, o.index)
				}
			}
			pkName, skName := tableread.KeySchemaNames(keys)
			in := &dynamodb.QueryInput{
				TableName:                 &o.table,
				KeyConditionExpression:    aws.String("#pk = :pk"),
				ExpressionAttributeNames:  map[string]string{"#pk": pkName},
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: o.pk}},
				ScanIndexForward:          aws.Bool(!o.desc),
			}
			if o.index != "" {
				in.IndexName = &o.index
			}
			if o.limit > 0 {
				in.Limit = &o.limit
			}
			if len(o.attributes) > 0 {
				var proj []string
				for i, a := range o.attributes {
					ph := fmt.Sprintf("#a%d", i)
					in.ExpressionAttributeNames[ph] = a
					proj = append(proj, ph)
				}
				in.ProjectionExpression = aws.String(strings.Join(proj, ", "))
			}
			if o.skPrefix != "" || o.skFrom != "" {
				if skName == "" {
					return usagef("query: the key has no sort key to filter on")
				}
				in.ExpressionAttributeNames["#sk"] = skName
				if o.skPrefix != "" {
					*in.KeyConditionExpression += " AND begins_with(#sk, :p)"
					in.ExpressionAttributeValues[":p"] = &types.AttributeValueMemberS{Value: o.skPrefix}
				} else {
					*in.KeyConditionExpression += " AND #sk BETWEEN :a AND :b"
					in.ExpressionAttributeValues[":a"] = &types.AttributeValueMemberS{Value: o.skFrom}
					in.ExpressionAttributeValues[":b"] = &types.AttributeValueMemberS{Value: o.skTo}
				}
			}
			count := 0
			p := dynamodb.NewQueryPaginator(client, in)
			for p.HasMorePages() && (o.limit == 0 || int32(count) < o.limit) {
				page, err := p.NextPage(ctx)
				if err != nil {
					return fmt.Errorf("query %s: %w", o.table, err)
				}
				for _, item := range page.Items {
					b, err := json.Marshal(plainItem(item))
					if err != nil {
						return err
					}
					fmt.Fprintln(g.stdout, string(b))
					count++
				}
			}
			fmt.Fprintf(g.stderr, "%s\n", plural(count, "item"))
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

// plainItem renders an item as plain JSON for people: strings and numbers as
// themselves (numbers as their exact text), nested maps and lists as JSON.
func plainItem(item map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(item))
	for k, v := range item {
		out[k] = plainValue(v)
	}
	return out
}

func plainValue(av types.AttributeValue) any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return json.Number(v.Value)
	case *types.AttributeValueMemberBOOL:
		return v.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = plainValue(e)
		}
		return l
	case *types.AttributeValueMemberM:
		return plainItem(v.Value)
	}
	return transform.JSONValue(av)
}
