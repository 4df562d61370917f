package prove

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/fanout"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

type keyValue = transform.KeyValue

// prover proves one pattern.
type prover struct {
	cfg    Config
	ap     *mapping.AccessPattern
	db     Querier
	ddb    DynamoDB
	shards int
}

// keyAttrs are the key attributes a pattern's request names.
type keyAttrs struct {
	pk, sk         string
	pkType, skType mapping.KeyType
	local          bool
}

func (p *prover) keys() keyAttrs {
	m := p.cfg.Mapping
	k := keyAttrs{pk: m.PartitionKey, sk: m.SortKey, pkType: m.PartitionKeyType, skType: m.SortKeyType}
	for _, ix := range m.Indexes {
		if ix.Name == p.ap.Index {
			k = keyAttrs{pk: ix.PartitionKey, sk: ix.SortKey, pkType: ix.PartitionKeyType, skType: ix.SortKeyType, local: ix.Local}
		}
	}
	return k
}

// request describes the pattern's DynamoDB request for reports.
func (p *prover) request() string {
	ap, k := p.ap, p.keys()
	var b strings.Builder
	if ap.Op == mapping.OpGetItem {
		fmt.Fprintf(&b, "%s = %q", k.pk, ap.PK.Raw)
		if ap.SK != nil {
			fmt.Fprintf(&b, ", %s = %q", k.sk, ap.SK.Values[0].Raw)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s = %q", k.pk, ap.PK.Raw)
	if ap.SK != nil {
		switch ap.SK.Op {
		case mapping.CondBeginsWith:
			fmt.Fprintf(&b, " AND begins_with(%s, %q)", k.sk, ap.SK.Values[0].Raw)
		case mapping.CondBetween:
			fmt.Fprintf(&b, " AND %s BETWEEN %q AND %q", k.sk, ap.SK.Values[0].Raw, ap.SK.Values[1].Raw)
		default:
			fmt.Fprintf(&b, " AND %s %s %q", k.sk, ap.SK.Op, ap.SK.Values[0].Raw)
		}
	}
	if ap.Descending {
		b.WriteString(", descending")
	}
	if ap.Limit > 0 {
		fmt.Fprintf(&b, ", limit %d", ap.Limit)
	}
	switch {
	case ap.Sharded() && len(ap.Buckets) > 0:
		fmt.Fprintf(&b, ", every shard of %s, merged", ap.BucketText())
	case ap.Sharded():
		fmt.Fprintf(&b, ", every shard, merged")
	case len(ap.Buckets) > 0:
		fmt.Fprintf(&b, ", %s, merged", ap.BucketText())
	}
	return b.String()
}

// errSkip marks a parameter set that cannot be asked: a key cannot be built
// from it.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

// render builds a key attribute value from a pattern template.
func render(t *mapping.Template, typ mapping.KeyType, sep string, set paramSet, at fanout.Point) (types.AttributeValue, error) {
	av, present, col, err := transform.RenderKey(t, typ, sep, false, keyValues(t, set, at))
	var np noParamError
	switch {
	case errors.As(err, &np):
		return nil, err
	case err != nil:
		return nil, errSkip{fmt.Sprintf("%q: {%s}: %v", t.Raw, col, err)}
	case !present:
		return nil, errSkip{fmt.Sprintf("%q: a parameter is NULL", t.Raw)}
	}
	return av, nil
}

// askDynamoDB answers the pattern for one parameter set: GetItem, or Query
// (every page; on every shard in parallel, merged in sort key order).
func (p *prover) askDynamoDB(ctx context.Context, set paramSet) ([]map[string]types.AttributeValue, error) {
	ap, k, sep := p.ap, p.keys(), p.cfg.Mapping.Separator
	if ap.Op == mapping.OpGetItem {
		pk, err := render(ap.PK, k.pkType, sep, set, fanout.Point{})
		if err != nil {
			return nil, err
		}
		key := map[string]types.AttributeValue{k.pk: pk}
		if ap.SK != nil {
			sk, err := render(ap.SK.Values[0], k.skType, sep, set, fanout.Point{})
			if err != nil {
				return nil, err
			}
			key[k.sk] = sk
		}
		out, err := p.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(p.cfg.Table), Key: key, ConsistentRead: aws.Bool(p.cfg.ConsistentRead)})
		if err != nil {
			return nil, fmt.Errorf("GetItem: %w", err)
		}
		if out.Item == nil {
			return nil, nil
		}
		return []map[string]types.AttributeValue{out.Item}, nil
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(p.cfg.Table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": k.pk},
		ExpressionAttributeValues: map[string]types.AttributeValue{},
		ScanIndexForward:          aws.Bool(!ap.Descending),
	}
	if ap.Index != "" {
		in.IndexName = aws.String(ap.Index)
	}
	if p.cfg.ConsistentRead && (ap.Index == "" || k.local) {
		in.ConsistentRead = aws.Bool(true)
	}
	if ap.SK != nil {
		in.ExpressionAttributeNames["#sk"] = k.sk
		var vals []string
		for i, t := range ap.SK.Values {
			av, err := render(t, k.skType, sep, set, fanout.Point{})
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf(":v%d", i)
			in.ExpressionAttributeValues[name] = av
			vals = append(vals, name)
		}
		switch ap.SK.Op {
		case mapping.CondBeginsWith:
			*in.KeyConditionExpression += " AND begins_with(#sk, " + vals[0] + ")"
		case mapping.CondBetween:
			*in.KeyConditionExpression += " AND #sk BETWEEN " + vals[0] + " AND " + vals[1]
		default:
			*in.KeyConditionExpression += " AND #sk " + ap.SK.Op + " " + vals[0]
		}
	}
	// Fan out: one Query per partition (shard, bucket), in parallel,
	// then merged in the order one Query over them all would return.
	if ap.Sharded() && p.shards < 1 {
		return nil, errors.New("the shard count of " + ap.Index + " is unknown")
	}
	points := fanout.Points(ap, p.shards)
	pks := make([]types.AttributeValue, len(points))
	for i, at := range points {
		pk, err := render(ap.PK, k.pkType, sep, set, at)
		if err != nil {
			return nil, err
		}
		pks[i] = pk
	}
	return fanout.Run(ctx, len(pks), func(ctx context.Context, i int) ([]map[string]types.AttributeValue, error) {
		return p.query(ctx, in, pks[i])
	}, k.sk, ap.Descending, ap.Limit)
}

// query runs one Query with partition key pk, page after page, up to the
// pattern's limit.
func (p *prover) query(ctx context.Context, tmpl *dynamodb.QueryInput, pk types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	in := *tmpl
	in.ExpressionAttributeValues = make(map[string]types.AttributeValue, len(tmpl.ExpressionAttributeValues)+1)
	for k, v := range tmpl.ExpressionAttributeValues {
		in.ExpressionAttributeValues[k] = v
	}
	in.ExpressionAttributeValues[":pk"] = pk
	var items []map[string]types.AttributeValue
	for {
		if p.ap.Limit > 0 {
			in.Limit = aws.Int32(int32(p.ap.Limit - len(items)))
		}
		out, err := p.ddb.Query(ctx, &in)
		if err != nil {
			return nil, fmt.Errorf("Query: %w", err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 || p.ap.Limit > 0 && len(items) >= p.ap.Limit {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// askSQL answers one of the pattern's queries for one parameter set.
func (p *prover) askSQL(ctx context.Context, sql string, set paramSet) ([]extract.ResultColumn, [][]any, error) {
	var cols []extract.ResultColumn
	var rows [][]any
	err := extract.Each(ctx, p.db, sql, []any{set.namedArgs()}, func(rc []extract.ResultColumn, vals []any) error {
		cols = rc
		rows = append(rows, vals)
		return nil
	})
	return cols, rows, err
}

// run proves the pattern.
func (p *prover) run(ctx context.Context) (PatternResult, error) {
	ap := p.ap
	pr := PatternResult{Name: ap.Name, Description: ap.Description, Operation: ap.Op, Index: ap.Index, Request: p.request()}
	if ap.Sharded() {
		pr.Shards = p.shards
	}
	d, err := p.drawParams(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return pr, ctx.Err()
		}
		pr.Error = err.Error()
		return pr, nil
	}
	pr.Domain, pr.Sampled = d.domain, d.sampled
	if len(d.sets) == 0 {
		pr.Error = "the source has no parameter values to try"
		return pr, nil
	}
	if ap.ParamsSQL != "" && len(d.sets[0].names) > 0 {
		for _, name := range ap.SQLParams() {
			if _, _, ok := d.sets[0].value(name); !ok {
				pr.Error = fmt.Sprintf("sql uses @%s, which the params query does not return (it returns %s)", name, strings.Join(d.sets[0].names, ", "))
				return pr, nil
			}
		}
	}
	ordered := ap.Op == mapping.OpQuery && !ap.Unordered && p.keys().sk != ""
	for _, set := range d.sets {
		items, err := p.askDynamoDB(ctx, set)
		var skip errSkip
		switch {
		case errors.As(err, &skip):
			pr.Skipped++
			if pr.SkipReason == "" {
				pr.SkipReason = skip.reason
			}
			continue
		case err != nil && ctx.Err() != nil:
			return pr, ctx.Err()
		case errors.As(err, new(noParamError)):
			pr.Error = err.Error()
			return pr, nil
		case err != nil:
			return pr, err
		}
		var msg string
		var rows int
		if len(ap.Collection) > 0 {
			msg, rows, err = p.compareCollection(ctx, set, items, ordered)
		} else {
			var cols []extract.ResultColumn
			var vals [][]any
			cols, vals, err = p.askSQL(ctx, ap.SQL, set)
			if err != nil {
				err = fmt.Errorf("sql: %w", err)
			}
			rows = len(vals)
			if err == nil {
				msg = compareAnswers(items, cols, vals, ordered, p.keys())
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return pr, ctx.Err()
			}
			pr.Error = err.Error()
			return pr, nil
		}
		pr.Tried++
		if set.missing {
			pr.Missing++
		}
		pr.Items += int64(len(items))
		pr.Rows += int64(rows)
		if msg != "" {
			pr.Mismatched++
			if len(pr.Differences) < p.cfg.MaxDetails {
				pr.Differences = append(pr.Differences, Difference{Params: set.report(), Message: msg})
			}
			continue
		}
		pr.Matched++
	}
	return pr, nil
}

// compareCollection compares an item collection entity by entity: the
// items of each entity (by the entity attribute, in the order DynamoDB
// returned them) with the rows of that entity's query. An item of an
// entity the pattern has no query for is a difference too. It returns the
// first difference ("" for none) and how many rows the queries returned.
func (p *prover) compareCollection(ctx context.Context, set paramSet, items []map[string]types.AttributeValue, ordered bool) (string, int, error) {
	byEntity := map[string][]map[string]types.AttributeValue{}
	attr := p.cfg.Mapping.EntityAttribute
	for _, it := range items {
		name := ""
		if s, ok := it[attr].(*types.AttributeValueMemberS); ok {
			name = s.Value
		}
		byEntity[name] = append(byEntity[name], it)
	}
	var msg string
	rows := 0
	for _, q := range p.ap.Collection {
		cols, vals, err := p.askSQL(ctx, q.SQL, set)
		if err != nil {
			return "", rows, fmt.Errorf("sql of %s: %w", q.Entity, err)
		}
		rows += len(vals)
		if d := compareAnswers(byEntity[q.Entity], cols, vals, ordered, p.keys()); d != "" && msg == "" {
			msg = q.Entity + ": " + d
		}
		delete(byEntity, q.Entity)
	}
	if msg != "" {
		return msg, rows, nil
	}
	for _, it := range items {
		name := ""
		if s, ok := it[attr].(*types.AttributeValueMemberS); ok {
			name = s.Value
		}
		if extra := byEntity[name]; len(extra) > 0 {
			if name == "" {
				name = "no entity (no " + attr + " attribute)"
			}
			return fmt.Sprintf("DynamoDB returned %d items of %s, for which the pattern has no query; the first is %s",
				len(extra), name, keyText(extra[0], p.keys())), rows, nil
		}
	}
	return "", rows, nil
}
