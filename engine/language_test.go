package engine_test

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

var languageSchema = readTestdata("../testdata/language/schema.sql")

// languageMapping uses the language's newer parts at once: a number sort
// key, a local index, projections, a quoted column, copies into maps, keys
// over copied columns, template functions and encodings, where clauses on
// an entity and an index, empty: absent and as: string for NaN.
var languageMapping = readTestdata("../testdata/language/mapping.yaml")

// TestLanguageScenario runs the engine on a source unlike the bookstore
// with a mapping that uses the language's newer parts: Run with CreateTable
// makes a table with a number sort key, a local index and projections;
// Prove answers every access pattern alike from DynamoDB and SQL; Plan
// counts what the projections save.
func TestLanguageScenario(t *testing.T) {
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	migratetest.Exec(t, pg, languageSchema)
	m, err := mapping.Parse("lang.yaml", []byte(languageMapping))
	if err != nil {
		t.Fatal(err)
	}
	ddb := migratetest.DynamoDBClient(t, migratetest.DynamoDBEndpoint(t))
	table := migratetest.TableName(t, "lang")

	res, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pg, DynamoDB: ddb, Table: table, CreateTable: true,
		StateFile: t.TempDir() + "/state.json"})
	if err != nil || res.Status != engine.StatusComplete {
		t.Fatalf("run: %v (%+v)", err, res)
	}
	d, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, a := range d.Table.AttributeDefinitions {
		attrTypes[*a.AttributeName] = a.AttributeType
	}
	if attrTypes["SK"] != types.ScalarAttributeTypeN || attrTypes["GSI2SK"] != types.ScalarAttributeTypeN || len(d.Table.LocalSecondaryIndexes) != 1 {
		t.Errorf("the table's attributes %v and %d local indexes: want SK and GSI2SK numbers, LSI1", attrTypes, len(d.Table.LocalSecondaryIndexes))
	}
	for _, g := range d.Table.GlobalSecondaryIndexes {
		want := map[string]types.ProjectionType{"GSI1": types.ProjectionTypeInclude, "GSI2": types.ProjectionTypeKeysOnly}[*g.IndexName]
		if g.Projection.ProjectionType != want {
			t.Errorf("%s projects %s, want %s", *g.IndexName, g.Projection.ProjectionType, want)
		}
	}

	pr, err := engine.Prove(ctx, engine.ProveConfig{Config: prove.Config{Mapping: m, Table: table, Samples: 50}, Postgres: pg, DynamoDB: ddb})
	if err != nil || !pr.Proven {
		t.Fatalf("prove: %v; %+v", err, pr)
	}
	for _, p := range pr.Patterns {
		if p.Tried == 0 || p.Items == 0 {
			t.Errorf("%s: tried %d, %d items: it proves nothing", p.Name, p.Tried, p.Items)
		}
	}

	p, err := engine.Plan(ctx, engine.PlanConfig{CompareConfig: engine.CompareConfig{Mapping: m, Postgres: pg, DynamoDB: ddb, Table: table}})
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]bool{}
	for _, ix := range p.Capacity.Indexes {
		saved[ix.Projection] = ix.AllWriteUnits > ix.WriteUnits || ix.AllStorageBytes > ix.StorageBytes
	}
	if !saved["KEYS_ONLY"] || !saved["INCLUDE"] {
		t.Errorf("plan: the projections save nothing: %+v", p.Capacity.Indexes)
	}
	if s := p.Summary; s.Unchanged != res.Total.ItemsWritten || s.Create+s.Change+s.Stale+s.Problems != 0 {
		t.Errorf("plan after run: %+v, want %d unchanged", s, res.Total.ItemsWritten)
	}
}

// readTestdata reads a file of the shared test data (the engine's and the
// CLI's scenario tests run the same schema and mapping).
func readTestdata(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(data)
}
