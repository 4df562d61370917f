package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeTables is a TableAPI with func fields.
type fakeTables struct {
	TableAPI
	describeTable func(context.Context, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error)
	createTable   func(context.Context, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error)
}

func (f *fakeTables) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return f.describeTable(ctx, in)
}

func (f *fakeTables) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return f.createTable(ctx, in)
}

func tableConfig() Config {
	return Config{
		Table: "app", PartitionKey: "PK", SortKey: "SK",
		Indexes: []Index{
			{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"},
			{Name: "Inverse", PartitionKey: "SK", SortKey: "PK"},
		},
	}
}

func TestEnsureTableCreates(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var created *types.TableDescription
	f := &fakeTables{
		describeTable: func(context.Context, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
			mu.Lock()
			defer mu.Unlock()
			if created == nil {
				return nil, &types.ResourceNotFoundException{Message: aws.String("no table")}
			}
			return &dynamodb.DescribeTableOutput{Table: created}, nil
		},
		createTable: func(_ context.Context, in *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) {
			mu.Lock()
			defer mu.Unlock()
			created = &types.TableDescription{TableName: in.TableName, KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions, TableStatus: types.TableStatusActive}
			if aws.ToString(in.TableName) != "app" || in.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("create input: %+v", in)
			}
			var defs []string
			for _, d := range in.AttributeDefinitions {
				if d.AttributeType != types.ScalarAttributeTypeS {
					t.Errorf("attribute %s has type %s", aws.ToString(d.AttributeName), d.AttributeType)
				}
				defs = append(defs, aws.ToString(d.AttributeName))
			}
			if got := strings.Join(defs, ","); got != "PK,SK,GSI1PK,GSI1SK" {
				t.Errorf("attribute definitions = %s", got)
			}
			if pk, sk := keysOf(in.KeySchema); pk != "PK" || sk != "SK" {
				t.Errorf("key schema %s %s", pk, sk)
			}
			if len(in.GlobalSecondaryIndexes) != 2 {
				t.Fatalf("indexes: %+v", in.GlobalSecondaryIndexes)
			}
			for _, ix := range in.GlobalSecondaryIndexes {
				if ix.Projection == nil || ix.Projection.ProjectionType != types.ProjectionTypeAll {
					t.Errorf("index %s projection %+v", aws.ToString(ix.IndexName), ix.Projection)
				}
				created.GlobalSecondaryIndexes = append(created.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{
					IndexName: ix.IndexName, KeySchema: ix.KeySchema, IndexStatus: types.IndexStatusActive,
				})
			}
			if pk, sk := keysOf(in.GlobalSecondaryIndexes[1].KeySchema); pk != "SK" || sk != "PK" {
				t.Errorf("inverse index keys %s %s", pk, sk)
			}
			return &dynamodb.CreateTableOutput{}, nil
		},
	}
	if err := EnsureTable(context.Background(), f, tableConfig()); err != nil {
		t.Fatal(err)
	}
	if created == nil {
		t.Fatal("table not created")
	}
}

func TestEnsureTableExisting(t *testing.T) {
	t.Parallel()
	desc := func(mut func(*types.TableDescription)) *types.TableDescription {
		d := &types.TableDescription{
			TableName:   aws.String("app"),
			TableStatus: types.TableStatusActive,
			KeySchema:   keySchema("PK", "SK"),
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
			},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{
				{IndexName: aws.String("GSI1"), KeySchema: keySchema("GSI1PK", "GSI1SK"), IndexStatus: types.IndexStatusActive},
				{IndexName: aws.String("Inverse"), KeySchema: keySchema("SK", "PK"), IndexStatus: types.IndexStatusActive},
				{IndexName: aws.String("Extra"), KeySchema: keySchema("X", ""), IndexStatus: types.IndexStatusActive},
			},
		}
		if mut != nil {
			mut(d)
		}
		return d
	}
	tests := []struct {
		name  string
		table *types.TableDescription
		want  []string // substrings of the error; none = success
	}{
		{"matches", desc(nil), nil},
		{"different keys", desc(func(d *types.TableDescription) {
			d.KeySchema = keySchema("id", "")
			d.GlobalSecondaryIndexes = d.GlobalSecondaryIndexes[:1]
			d.GlobalSecondaryIndexes[0].KeySchema = keySchema("GSI1PK", "other")
		}), []string{
			`the table's partition key is "id" but the mapping needs "PK" (S)`,
			`the table has no sort key but the mapping needs "SK" (S)`,
			`index GSI1's sort key is "other" but the mapping needs "GSI1SK" (S)`,
			`index Inverse does not exist but the mapping needs it`,
		}},
		{"number key", desc(func(d *types.TableDescription) {
			d.AttributeDefinitions[0].AttributeType = types.ScalarAttributeTypeN
		}), []string{`the table's partition key "PK" has type N but the mapping writes strings (S)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeTables{
				describeTable: func(context.Context, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
					return &dynamodb.DescribeTableOutput{Table: tt.table}, nil
				},
				createTable: func(context.Context, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) {
					t.Error("CreateTable called for an existing table")
					return nil, errors.New("no")
				},
			}
			err := EnsureTable(context.Background(), f, tableConfig())
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTableMismatch) {
				t.Fatalf("err = %v, want ErrTableMismatch", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestEnsureTableWaitsUntilActive(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	f := &fakeTables{
		describeTable: func(context.Context, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			status := types.TableStatusCreating
			if calls > 2 {
				status = types.TableStatusActive
			}
			return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{
				TableName: aws.String("app"), TableStatus: status, KeySchema: keySchema("PK", ""),
			}}, nil
		},
	}
	if err := EnsureTable(context.Background(), f, Config{Table: "app", PartitionKey: "PK"}); err != nil {
		t.Fatal(err)
	}
	if calls < 3 {
		t.Errorf("DescribeTable called %d times", calls)
	}
}
