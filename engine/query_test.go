package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/mapping"
)

func TestShardKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tpl, pk string
		n       int
		want    []string
		bad     bool
	}{
		{"STATUS#{status}#{shard}", "STATUS#OPEN", 3, []string{"STATUS#OPEN#0", "STATUS#OPEN#1", "STATUS#OPEN#2"}, false},
		{"STATUS#{status}#{shard}", "STATUS#OPEN#", 2, []string{"STATUS#OPEN#0", "STATUS#OPEN#1"}, false},
		{"{shard}#DAY#{day}", "DAY#2024-05-01", 2, []string{"0#DAY#2024-05-01", "1#DAY#2024-05-01"}, false},
		{"S#{shard}#{status}", "S#OPEN", 2, []string{"S#0#OPEN", "S#1#OPEN"}, false},
		{"EMAIL#{email}", "EMAIL#a@b", 0, []string{"EMAIL#a@b"}, false},
		{"{status}#{shard}#{day}", "OPEN#2024", 2, nil, true},
		{"STATUS#{status}#{shard}", "STATUS#OPEN", 0, nil, true},
	} {
		tpl, err := mapping.ParseTemplate(tc.tpl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ShardKeys(tpl, tc.pk, tc.n)
		if tc.bad != (err != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("ShardKeys(%q, %q, %d) = %q, %v; want %q", tc.tpl, tc.pk, tc.n, got, err, tc.want)
		}
	}
}

// fakeQuerier answers DescribeTable with a PK/SK table and each Query
// call with the next partition's items, in sort-key order.
type fakeQuerier struct {
	// partitions are the items of each partition key, as DynamoDB
	// returns them.
	partitions map[string][]map[string]types.AttributeValue
}

func (f *fakeQuerier) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{KeySchema: []types.KeySchemaElement{
		{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
	}}}, nil
}

// Query answers from the partition the key condition names (the merged
// query asks them in parallel).
func (f *fakeQuerier) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			if items, ok := f.partitions[s.Value]; ok {
				return &dynamodb.QueryOutput{Items: items}, nil
			}
		}
	}
	return nil, fmt.Errorf("fake: no partition in %v", in.ExpressionAttributeValues)
}

// A merged query of several partitions orders N sort keys by value, as
// DynamoDB orders each partition: not by their text.
func TestQueryMergesNumberSortKeysByValue(t *testing.T) {
	t.Parallel()
	part := func(sks ...string) []map[string]types.AttributeValue {
		var out []map[string]types.AttributeValue
		for _, sk := range sks {
			out = append(out, map[string]types.AttributeValue{"SK": &types.AttributeValueMemberN{Value: sk}})
		}
		return out
	}
	for _, desc := range []bool{false, true} {
		// Each partition comes sorted by value, as DynamoDB returns it.
		p0, p1 := part("-5", "1e-130", "9", "100"), part("-10", "0.5", "10", "99.5")
		if desc {
			slices.Reverse(p0)
			slices.Reverse(p1)
		}
		items, err := Query(context.Background(), &fakeQuerier{partitions: map[string][]map[string]types.AttributeValue{"a": p0, "b": p1}},
			QueryInput{Table: "tbl", PKs: []string{"a", "b"}, Desc: desc})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it["SK"].(*types.AttributeValueMemberN).Value)
		}
		want := []string{"-10", "-5", "1e-130", "0.5", "9", "10", "99.5", "100"}
		if desc {
			slices.Reverse(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("desc=%v: merged %v, want %v", desc, got, want)
		}
	}
}
