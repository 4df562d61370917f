package load_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestEnsureTableShapesIntegration creates the table on DynamoDB Local and
// checks it again: the engine accepts what createTableInput asks for and
// describes it back as checkTable expects.
func TestEnsureTableShapesIntegration(t *testing.T) {
	endpoint := migratetest.DynamoDBEndpoint(t)
	client := migratetest.DynamoDBClient(t, endpoint)
	cfg := load.ShapedConfig(migratetest.TableName(t, "shapes"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := load.EnsureTable(ctx, client, cfg); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)})
	})
	if err := load.EnsureTable(ctx, client, cfg); err != nil {
		t.Fatalf("check of the table it created: %v", err)
	}
	// A number sort key: the engine orders 2 before 10.
	for _, sk := range []string{"10", "2"} {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cfg.Table), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "S#1"}, "SK": &types.AttributeValueMemberN{Value: sk},
			"LSI1SK": &types.AttributeValueMemberS{Value: "AT#" + sk},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(cfg.Table), KeyConditionExpression: aws.String("PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "S#1"}}})
	if err != nil || len(out.Items) != 2 || out.Items[0]["SK"].(*types.AttributeValueMemberN).Value != "2" {
		t.Fatalf("query by number sort key: %v %v", err, out)
	}
	wrong := cfg
	wrong.Indexes = append([]load.Index(nil), cfg.Indexes...)
	wrong.Indexes[2].NonKeyAttributes = []string{"value", "more"}
	if err := load.EnsureTable(ctx, client, wrong); !errors.Is(err, load.ErrTableMismatch) || !strings.Contains(err.Error(), "but the mapping needs more too") {
		t.Errorf("a projection the table lacks: %v", err)
	}
}
