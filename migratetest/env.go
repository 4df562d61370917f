package migratetest

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/mapping"
)

// Env is one test's migration world: a new, empty PostgreSQL database, the
// shared DynamoDB Local, and a table name no other test uses. The database
// and the table are removed when the test ends.
type Env struct {
	PostgresURL string
	Endpoint    string
	Table       string
	DynamoDB    *dynamodb.Client
}

// New sets up an Env for t (skipped without services, or failed under
// CI=true; see the package documentation).
func New(t testing.TB) *Env {
	t.Helper()
	e := &Env{PostgresURL: PostgresURL(t), Endpoint: DynamoDBEndpoint(t)}
	e.DynamoDB = DynamoDBClient(t, e.Endpoint)
	e.Table = TableName(t, t.Name())
	t.Cleanup(func() {
		// Best effort: a test that never created it leaves nothing to delete.
		_, _ = e.DynamoDB.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(e.Table)})
	})
	return e
}

// Exec runs SQL (several statements are fine) in the test's database: a
// schema, sample rows.
func (e *Env) Exec(t testing.TB, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.PostgresURL)
	if err != nil {
		t.Fatalf("migratetest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("migratetest: exec: %v", err)
	}
}

// ExecFile runs the SQL in file, as Exec does.
func (e *Env) ExecFile(t testing.TB, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("migratetest: %v", err)
	}
	e.Exec(t, string(data))
}

// Migrate runs the mapping in file into the Env's table, creating it, with
// a state file in a temporary directory, and fails the test if the run
// does not complete. Adjust the RunConfig with opts.
func (e *Env) Migrate(t testing.TB, file string, opts ...func(*engine.RunConfig)) *engine.RunResult {
	t.Helper()
	m, err := engine.LoadMapping(file)
	if err != nil {
		t.Fatalf("migratetest: %v", err)
	}
	return e.MigrateMapping(t, m, opts...)
}

// MigrateMapping is Migrate with a parsed mapping.
func (e *Env) MigrateMapping(t testing.TB, m *mapping.Mapping, opts ...func(*engine.RunConfig)) *engine.RunResult {
	t.Helper()
	cfg := engine.RunConfig{
		Mapping:     m,
		Postgres:    e.PostgresURL,
		DynamoDB:    e.DynamoDB,
		Table:       e.Table,
		CreateTable: true,
		StateFile:   t.TempDir() + "/state.json",
	}
	for _, o := range opts {
		o(&cfg)
	}
	res, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("migratetest: run %s: %v", m.File, err)
	}
	return res
}

// Items returns every item of the Env's table, by a consistent Scan, in
// key order (partition key, then sort key).
func (e *Env) Items(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	ctx := context.Background()
	desc, err := e.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(e.Table)})
	if err != nil {
		t.Fatalf("migratetest: describe %s: %v", e.Table, err)
	}
	var pk, sk string
	for _, k := range desc.Table.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			pk = aws.ToString(k.AttributeName)
		} else {
			sk = aws.ToString(k.AttributeName)
		}
	}
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(e.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(e.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("migratetest: scan %s: %v", e.Table, err)
		}
		items = append(items, page.Items...)
	}
	type keyed struct {
		key  []byte
		item map[string]types.AttributeValue
	}
	sorted := make([]keyed, len(items))
	for i, it := range items {
		k, err := diff.KeyOf(it, pk, sk)
		if err != nil {
			t.Fatalf("migratetest: %v", err)
		}
		sorted[i] = keyed{k, it}
	}
	slices.SortFunc(sorted, func(a, b keyed) int { return bytes.Compare(a.key, b.key) })
	out := make([]map[string]types.AttributeValue, len(items))
	for i, k := range sorted {
		out[i] = k.item
	}
	return out
}

// Query reads one partition of the Env's table or an index (engine.Query;
// q.Table is set for you). Decode the items into your own types with
// engine.UnmarshalItems.
func (e *Env) Query(t testing.TB, q engine.QueryInput) []map[string]types.AttributeValue {
	t.Helper()
	q.Table = e.Table
	items, err := engine.Query(context.Background(), e.DynamoDB, q)
	if err != nil {
		t.Fatalf("migratetest: %v", err)
	}
	return items
}
