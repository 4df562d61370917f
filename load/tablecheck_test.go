package load

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// checkConfig is a mapping's needs: string keys PK/SK, GSI1 projecting all,
// GSI2 (numeric sort key) projecting two attributes, GSI3 keys only.
func checkConfig() Config {
	return Config{
		Table: "Shop", PartitionKey: "PK", SortKey: "SK",
		Indexes: []Index{
			{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"},
			{Name: "GSI2", PartitionKey: "GSI2PK", SortKey: "GSI2SK", SortKeyType: types.ScalarAttributeTypeN,
				Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"name", "total"}},
			{Name: "GSI3", PartitionKey: "GSI3PK", Projection: types.ProjectionTypeKeysOnly},
		},
	}
}

// goodTable serves checkConfig exactly.
func goodTable() *types.TableDescription {
	def := func(name string, t types.ScalarAttributeType) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: t}
	}
	gsi := func(name, pk, sk string, p types.Projection) types.GlobalSecondaryIndexDescription {
		return types.GlobalSecondaryIndexDescription{IndexName: aws.String(name), KeySchema: keySchema(pk, sk), Projection: &p, IndexStatus: types.IndexStatusActive}
	}
	return &types.TableDescription{
		TableName:          aws.String("Shop"),
		TableStatus:        types.TableStatusActive,
		TableArn:           aws.String("arn:aws:dynamodb:us-east-1:123456789012:table/Shop"),
		TableId:            aws.String("4f2a"),
		CreationDateTime:   aws.Time(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)),
		KeySchema:          keySchema("PK", "SK"),
		BillingModeSummary: &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest},
		AttributeDefinitions: []types.AttributeDefinition{
			def("PK", "S"), def("SK", "S"), def("GSI1PK", "S"), def("GSI1SK", "S"), def("GSI2PK", "S"), def("GSI2SK", "N"), def("GSI3PK", "S"), def("X", "S"),
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{
			gsi("GSI1", "GSI1PK", "GSI1SK", types.Projection{ProjectionType: types.ProjectionTypeAll}),
			gsi("GSI2", "GSI2PK", "GSI2SK", types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"total", "name", "more"}}),
			gsi("GSI3", "GSI3PK", "", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
			gsi("Other", "X", "", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}), // not the mapping's: no problem
		},
	}
}

// Each case pins every problem CheckTable reports, in order.
func TestCheckTable(t *testing.T) {
	t.Parallel()
	index := func(d *types.TableDescription, name string) *types.GlobalSecondaryIndexDescription {
		for i := range d.GlobalSecondaryIndexes {
			if aws.ToString(d.GlobalSecondaryIndexes[i].IndexName) == name {
				return &d.GlobalSecondaryIndexes[i]
			}
		}
		t.Fatalf("no index %s", name)
		return nil
	}
	cases := []struct {
		name string
		edit func(*types.TableDescription)
		want []string
	}{
		{"serves the mapping", func(*types.TableDescription) {}, nil},
		{"keyed on id", func(d *types.TableDescription) {
			d.KeySchema = keySchema("id", "")
			d.AttributeDefinitions = append(d.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("id"), AttributeType: "N"})
		}, []string{
			`the table's partition key is "id" but the mapping needs "PK" (S)`,
			`the table has no sort key but the mapping needs "SK" (S)`,
		}},
		{"an extra sort key", func(d *types.TableDescription) { index(d, "GSI3").KeySchema = keySchema("GSI3PK", "SK") }, []string{
			`index GSI3 has sort key "SK" but the mapping has none, so its items would lack it`,
		}},
		{"key types", func(d *types.TableDescription) {
			d.AttributeDefinitions[0].AttributeType = "B"
			d.AttributeDefinitions[5].AttributeType = "S" // GSI2SK
		}, []string{
			`the table's partition key "PK" has type B but the mapping writes strings (S)`,
			`index GSI2's sort key "GSI2SK" has type S but the mapping writes numbers (N)`,
		}},
		{"no GSI1", func(d *types.TableDescription) { d.GlobalSecondaryIndexes = d.GlobalSecondaryIndexes[1:] }, []string{
			`index GSI1 does not exist but the mapping needs it, with partition key "GSI1PK" (S) and sort key "GSI1SK" (S), projecting ALL`,
		}},
		{"GSI1 keyed otherwise", func(d *types.TableDescription) { index(d, "GSI1").KeySchema = keySchema("GSI1SK", "GSI1PK") }, []string{
			`index GSI1's partition key is "GSI1SK" but the mapping needs "GSI1PK" (S)`,
			`index GSI1's sort key is "GSI1PK" but the mapping needs "GSI1SK" (S)`,
		}},
		{"projections too small", func(d *types.TableDescription) {
			index(d, "GSI1").Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"name"}}
			index(d, "GSI2").Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"name"}}
		}, []string{
			`index GSI1 projects INCLUDE name but the mapping needs ALL`,
			`index GSI2 projects INCLUDE name but the mapping needs total too`,
		}},
		{"keys only where attributes are needed", func(d *types.TableDescription) {
			index(d, "GSI2").Projection = &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
		}, []string{`index GSI2 projects KEYS_ONLY but the mapping needs INCLUDE name, total`}},
		{"ALL serves any projection", func(d *types.TableDescription) {
			for i := range d.GlobalSecondaryIndexes {
				d.GlobalSecondaryIndexes[i].Projection = &types.Projection{ProjectionType: types.ProjectionTypeAll}
			}
		}, nil},
		{"not active", func(d *types.TableDescription) {
			d.TableStatus = types.TableStatusCreating
			index(d, "GSI1").IndexStatus = types.IndexStatusCreating
			index(d, "GSI2").IndexStatus = types.IndexStatusDeleting
		}, []string{
			`the table is CREATING but the mapping needs it ACTIVE`,
			`index GSI1 is CREATING (backfilling) but the mapping needs it ACTIVE`,
			`index GSI2 is DELETING but the mapping needs it ACTIVE`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := goodTable()
			tc.edit(d)
			c := InspectTable(checkConfig(), d)
			var got []string
			for _, p := range c.Problems {
				got = append(got, p.Msg)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
			if (c.Err() == nil) != (len(tc.want) == 0) {
				t.Errorf("Err() = %v with %d problems", c.Err(), len(tc.want))
			}
		})
	}
}

// The problems name the index and the attribute at fault, and say which
// ones waiting resolves.
func TestCheckTableProblemFields(t *testing.T) {
	t.Parallel()
	d := goodTable()
	d.GlobalSecondaryIndexes[0].KeySchema = keySchema("X", "GSI1SK")
	d.GlobalSecondaryIndexes[1].IndexStatus = types.IndexStatusCreating
	c := InspectTable(checkConfig(), d)
	want := []TableProblem{
		{Index: "GSI1", Attribute: "X"},
		{Index: "GSI2", Pending: true},
	}
	if len(c.Problems) != len(want) {
		t.Fatalf("problems: %+v", c.Problems)
	}
	for i, w := range want {
		p := c.Problems[i]
		if p.Index != w.Index || p.Attribute != w.Attribute || p.Pending != w.Pending {
			t.Errorf("problem %d = %+v, want %+v", i, p, w)
		}
	}
}

func TestCheckTableReportsBillingAndIdentity(t *testing.T) {
	t.Parallel()
	c := InspectTable(checkConfig(), goodTable())
	if c.BillingSummary() != "on demand" || c.ARN != "arn:aws:dynamodb:us-east-1:123456789012:table/Shop" || c.ID != "4f2a" ||
		!c.CreatedAt.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)) || c.Status != types.TableStatusActive {
		t.Errorf("check = %+v (%s)", c, c.BillingSummary())
	}
	d := goodTable()
	d.BillingModeSummary = nil // provisioned tables may report none
	d.ProvisionedThroughput = &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(100)}
	d.GlobalSecondaryIndexes[0].ProvisionedThroughput = &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(50)}
	d.GlobalSecondaryIndexes[1].ProvisionedThroughput = &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(25)}
	if got := InspectTable(checkConfig(), d).BillingSummary(); got != "provisioned, 100 WCU (GSI1 50 WCU, GSI2 25 WCU)" {
		t.Errorf("billing = %q", got)
	}
	d = goodTable()
	d.OnDemandThroughput = &types.OnDemandThroughput{MaxWriteRequestUnits: aws.Int64(4000)}
	if got := InspectTable(checkConfig(), d).BillingSummary(); got != "on demand, at most 4000 write request units/s" {
		t.Errorf("billing = %q", got)
	}
}

// EnsureTable creates what CheckTable then accepts: key types and
// projections included.
func TestEnsureTableCreatesWhatCheckAccepts(t *testing.T) {
	t.Parallel()
	var created *types.TableDescription
	f := &fakeTables{
		describeTable: func(context.Context, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
			if created == nil {
				return nil, &types.ResourceNotFoundException{Message: aws.String("no table")}
			}
			return &dynamodb.DescribeTableOutput{Table: created}, nil
		},
		createTable: func(_ context.Context, in *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) {
			created = &types.TableDescription{TableName: in.TableName, KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions,
				TableStatus: types.TableStatusActive, BillingModeSummary: &types.BillingModeSummary{BillingMode: in.BillingMode}}
			for _, ix := range in.GlobalSecondaryIndexes {
				created.GlobalSecondaryIndexes = append(created.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{
					IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection, IndexStatus: types.IndexStatusActive})
			}
			return &dynamodb.CreateTableOutput{}, nil
		},
	}
	if err := EnsureTable(context.Background(), f, checkConfig()); err != nil {
		t.Fatal(err)
	}
	if c := InspectTable(checkConfig(), created); c.Err() != nil {
		t.Errorf("the created table does not pass CheckTable: %v", c.Err())
	}
}
