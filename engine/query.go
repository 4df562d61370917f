package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/fanout"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/mapping"
)

// Items are read back with the SDK's own feature packages: expression
// builds the key conditions, attributevalue decodes results into the
// caller's types (UnmarshalItems). Items are written, on the other hand,
// from AttributeValues that transform builds by hand: exact numerics and
// sortable timestamps cannot go through attributevalue's Go types
// (float64, time.Time's default encoding).

// Querier is what Query calls; *dynamodb.Client fits.
type Querier interface {
	tableread.Describer
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ Querier = (*dynamodb.Client)(nil)

// QueryInput is one partition of a table or index, with an optional
// sort-key condition. Key attribute names are looked up with
// DescribeTable: give values only.
type QueryInput struct {
	Table string
	Index string // a global or local secondary index; "" for the table
	PK    string // partition key value
	// PKs, when set instead of PK, are several partitions (the shards of a
	// sharded index key, see ShardKeys) queried each and merged by sort
	// key, Limit applying to the merged items.
	PKs []string
	// At most one sort-key condition: SKPrefix (begins_with), or
	// SKFrom..SKTo (between, inclusive), or SKEquals.
	SKPrefix, SKFrom, SKTo, SKEquals string
	Desc                             bool  // descending sort-key order
	Limit                            int32 // at most this many items; 0 = all
	Attributes                       []string
	Consistent                       bool
}

// Validate reports every problem with q at once, each wrapping ErrConfig;
// the problems with a value (not a missing one) are FieldErrors.
func (q QueryInput) Validate() error {
	var errs []error
	if q.Table == "" {
		errs = append(errs, configErrorf("query: a table name is required"))
	}
	if q.PK == "" && len(q.PKs) == 0 {
		errs = append(errs, configErrorf("query: a partition key value is required"))
	}
	for _, n := range []struct{ field, what, name string }{{"Table", "table", q.Table}, {"Index", "index", q.Index}} {
		if err := checkName("query", n.field, n.what, n.name); err != nil {
			errs = append(errs, err)
		}
	}
	field := func(name, format string, args ...any) { errs = append(errs, fieldf("query", name, format, args...)) }
	if q.Limit < 0 {
		field("Limit", "must not be negative (0 = no limit)")
	}
	if slices.Contains(q.Attributes, "") {
		field("Attributes", "has an empty name: %q", strings.Join(q.Attributes, ","))
	}
	switch {
	case q.SKPrefix != "" && (q.SKFrom != "" || q.SKTo != ""):
		field("SKPrefix", "and SKFrom/SKTo exclude each other")
	case (q.SKFrom == "") != (q.SKTo == ""):
		field("SKFrom", "and SKTo go together")
	case q.SKEquals != "" && (q.SKPrefix != "" || q.SKFrom != ""):
		field("SKEquals", "excludes SKPrefix and SKFrom/SKTo")
	}
	return errors.Join(errs...)
}

// Query reads the items of one partition, page after page, in sort-key
// order. Decode them into your own types with UnmarshalItems.
func Query(ctx context.Context, client Querier, q QueryInput) ([]map[string]types.AttributeValue, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if len(q.PKs) > 0 {
		return queryMerged(ctx, client, q)
	}
	pkName, skName, err := describeKeys(ctx, client, q.Table, q.Index)
	if err != nil {
		return nil, err
	}
	cond := expression.Key(pkName).Equal(expression.Value(q.PK))
	if sk, ok, err := skCondition(q, skName); err != nil {
		return nil, err
	} else if ok {
		cond = cond.And(sk)
	}
	b := expression.NewBuilder().WithKeyCondition(cond)
	if len(q.Attributes) > 0 {
		proj := expression.NamesList(expression.Name(q.Attributes[0]))
		for _, a := range q.Attributes[1:] {
			proj = proj.AddNames(expression.Name(a))
		}
		b = b.WithProjection(proj)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(q.Table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(!q.Desc),
		ConsistentRead:            aws.Bool(q.Consistent),
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
	}
	if q.Limit > 0 {
		in.Limit = aws.Int32(q.Limit)
	}
	var out []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(client, in)
	for p.HasMorePages() && (q.Limit == 0 || int32(len(out)) < q.Limit) {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.Table, err)
		}
		out = append(out, page.Items...)
	}
	if q.Limit > 0 && int32(len(out)) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// skCondition is q's sort-key condition, if it has one.
func skCondition(q QueryInput, skName string) (expression.KeyConditionBuilder, bool, error) {
	// Validate has made sure that at most one condition is set.
	switch {
	case q.SKPrefix == "" && q.SKFrom == "" && q.SKEquals == "":
		return expression.KeyConditionBuilder{}, false, nil
	case skName == "":
		return expression.KeyConditionBuilder{}, false, kinded(ErrConfig, fmt.Errorf("query: the key has no sort key to filter on"))
	}
	sk := expression.Key(skName)
	switch {
	case q.SKPrefix != "":
		return sk.BeginsWith(q.SKPrefix), true, nil
	case q.SKEquals != "":
		return sk.Equal(expression.Value(q.SKEquals)), true, nil
	}
	return sk.Between(expression.Value(q.SKFrom), expression.Value(q.SKTo)), true, nil
}

// describeKeys returns the key attribute names of a table or one of its
// indexes, from DescribeTable.
func describeKeys(ctx context.Context, client tableread.Describer, table, index string) (pk, sk string, err error) {
	desc, err := tableread.Describe(ctx, client, table)
	if err != nil {
		return "", "", err
	}
	if desc == nil {
		return "", "", fmt.Errorf("query: table %s does not exist", table)
	}
	return keyNamesOf(desc, index)
}

// keyNamesOf returns the key attribute names of the table or one of its
// indexes; an unknown index is an error listing those that exist.
func keyNamesOf(desc *types.TableDescription, index string) (pk, sk string, err error) {
	if index == "" {
		pk, sk = tableread.KeyNames(desc)
		return pk, sk, nil
	}
	var names []string
	for _, gsi := range desc.GlobalSecondaryIndexes {
		if aws.ToString(gsi.IndexName) == index {
			pk, sk = tableread.KeySchemaNames(gsi.KeySchema)
			return pk, sk, nil
		}
		names = append(names, aws.ToString(gsi.IndexName))
	}
	for _, lsi := range desc.LocalSecondaryIndexes {
		if aws.ToString(lsi.IndexName) == index {
			pk, sk = tableread.KeySchemaNames(lsi.KeySchema)
			return pk, sk, nil
		}
		names = append(names, aws.ToString(lsi.IndexName))
	}
	return "", "", kinded(ErrConfig, fmt.Errorf("query: table %s has no index %s (its indexes: %v)", aws.ToString(desc.TableName), index, names))
}

// UnmarshalItems decodes items into out, a pointer to a slice of your own
// struct (dynamodbav tags) or map type. Numbers decode exactly into
// integer, float or attributevalue.Number fields, and into
// attributevalue.Number (not float64) where out holds interface values.
func UnmarshalItems(items []map[string]types.AttributeValue, out any) error {
	dec := attributevalue.NewDecoder(func(o *attributevalue.DecoderOptions) { o.UseNumber = true })
	return dec.Decode(&types.AttributeValueMemberL{Value: toList(items)}, out)
}

func toList(items []map[string]types.AttributeValue) []types.AttributeValue {
	out := make([]types.AttributeValue, len(items))
	for i, it := range items {
		out[i] = &types.AttributeValueMemberM{Value: it}
	}
	return out
}

// queryMerged queries every partition of q.PKs and merges the items by sort
// key (in q.Desc order), then applies q.Limit: the fan-out prove runs too.
func queryMerged(ctx context.Context, client Querier, q QueryInput) ([]map[string]types.AttributeValue, error) {
	_, skName, err := describeKeys(ctx, client, q.Table, q.Index)
	if err != nil {
		return nil, err
	}
	return fanout.Run(ctx, len(q.PKs), func(ctx context.Context, i int) ([]map[string]types.AttributeValue, error) {
		one := q
		one.PK, one.PKs = q.PKs[i], nil
		return Query(ctx, client, one)
	}, skName, q.Desc, int(q.Limit))
}

// ShardKeys expands the partition key value pk of a sharded index into
// the key of every shard, by the template that shards it: with
// "STATUS#{status}#{shard}" and 3 shards, "STATUS#OPEN" becomes
// "STATUS#OPEN#0", "STATUS#OPEN#1" and "STATUS#OPEN#2". The shard
// placeholder must be last, or come after literal text only; elsewhere
// there is no telling where it goes in pk.
func ShardKeys(tpl *mapping.Template, pk string, shards int) ([]string, error) {
	at := -1
	for i, p := range tpl.Parts {
		if p.Column == mapping.ShardPlaceholder {
			at = i
		}
	}
	if at < 0 {
		return []string{pk}, nil
	}
	if shards < 1 {
		return nil, fmt.Errorf("query: the shard count of %q is not known", tpl.Raw)
	}
	var prefix string // literal text before the shard, when only literals come before it
	literalsBefore := true
	for _, p := range tpl.Parts[:at] {
		if p.Column != "" {
			literalsBefore = false
			break
		}
		prefix += p.Literal
	}
	var sep string // the literal right after the shard, if any
	if at+1 < len(tpl.Parts) && tpl.Parts[at+1].Column == "" {
		sep = tpl.Parts[at+1].Literal
	}
	var before string // the literal right before the shard, if any
	if at > 0 && tpl.Parts[at-1].Column == "" {
		before = tpl.Parts[at-1].Literal
	}
	out := make([]string, shards)
	switch {
	case at == len(tpl.Parts)-1:
		base := pk
		if !strings.HasSuffix(base, before) {
			base += before
		}
		for i := range out {
			out[i] = base + strconv.Itoa(i)
		}
	case literalsBefore && strings.HasPrefix(pk, prefix):
		// pk left out the shard and the separator next to it: the text
		// after the prefix continues the literal that follows the shard.
		rest := pk[len(prefix):]
		if strings.HasPrefix(rest, sep) {
			rest = rest[len(sep):]
		} else {
			for k := 1; k <= len(sep); k++ {
				if strings.HasPrefix(rest, sep[k:]) {
					rest = rest[len(sep)-k:]
					break
				}
			}
		}
		for i := range out {
			out[i] = prefix + strconv.Itoa(i) + sep + rest
		}
	default:
		return nil, kinded(ErrConfig, fmt.Errorf("query: cannot tell where the shard goes in %q for the template %q: give one shard's full key without --mapping", pk, tpl.Raw))
	}
	return out, nil
}
