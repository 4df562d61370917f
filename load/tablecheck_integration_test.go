package load_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// InspectTable on what DynamoDB Local really describes: a table without
// the mapping's index, a table keyed on id, and a table deleted and created
// again under the same name (a new creation time: DynamoDB Local reports no
// table ID).
func TestInspectTableIntegration(t *testing.T) {
	endpoint := migratetest.DynamoDBEndpoint(t)
	ddb := migratetest.DynamoDBClient(t, endpoint)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	want := load.Config{
		Table: migratetest.TableName(t, "inspect"), PartitionKey: "PK", SortKey: "SK",
		Indexes: []load.Index{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}},
	}
	create := func(keys []types.KeySchemaElement, defs ...string) {
		t.Helper()
		var ad []types.AttributeDefinition
		for i := 0; i < len(defs); i += 2 {
			ad = append(ad, types.AttributeDefinition{AttributeName: aws.String(defs[i]), AttributeType: types.ScalarAttributeType(defs[i+1])})
		}
		if _, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(want.Table), KeySchema: keys,
			AttributeDefinitions: ad, BillingMode: types.BillingModePayPerRequest}); err != nil {
			t.Fatal(err)
		}
	}
	drop := func() {
		t.Helper()
		if _, err := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(want.Table)}); err != nil {
			t.Fatal(err)
		}
	}
	inspect := func() load.TableCheck {
		t.Helper()
		out, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(want.Table)})
		if err != nil {
			t.Fatal(err)
		}
		return load.InspectTable(want, out.Table)
	}
	key := func(name string, kt types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt}
	}
	problems := func(c load.TableCheck) string {
		var msgs []string
		for _, p := range c.Problems {
			msgs = append(msgs, p.Msg)
		}
		return strings.Join(msgs, "\n")
	}

	// Keys as the mapping wants, but no GSI1: a run would put every item
	// in the table and verify say IDENTICAL, and the index serve nothing.
	create([]types.KeySchemaElement{key("PK", types.KeyTypeHash), key("SK", types.KeyTypeRange)}, "PK", "S", "SK", "S")
	first := inspect()
	if got := problems(first); got != `index GSI1 does not exist but the mapping needs it, with partition key "GSI1PK" (S) and sort key "GSI1SK" (S), projecting ALL` {
		t.Errorf("a table without GSI1:\n%s", got)
	}
	if first.BillingSummary() != "on demand" || first.CreatedAt.IsZero() || first.ARN == "" {
		t.Errorf("billing %q, created %v, ARN %q", first.BillingSummary(), first.CreatedAt, first.ARN)
	}

	// The same name, created again (as after a DynamoDB Local restart),
	// keyed on a number id.
	drop()
	time.Sleep(10 * time.Millisecond) // creation times have millisecond resolution
	create([]types.KeySchemaElement{key("id", types.KeyTypeHash)}, "id", "N")
	second := inspect()
	for _, w := range []string{
		`the table's partition key is "id" but the mapping needs "PK" (S)`,
		`the table has no sort key but the mapping needs "SK" (S)`,
		`index GSI1 does not exist`,
	} {
		if !strings.Contains(problems(second), w) {
			t.Errorf("a table keyed on id: problems lack %q:\n%s", w, problems(second))
		}
	}
	// DynamoDB Local has no table ID and keeps the ARN: the creation time
	// is what tells the new table from the old one (AWS changes the ID too).
	if second.CreatedAt.Equal(first.CreatedAt) || first.ID != "" && first.ID == second.ID {
		t.Errorf("re-created table: created %v then %v, ID %q then %q", first.CreatedAt, second.CreatedAt, first.ID, second.ID)
	}
	drop()
}
