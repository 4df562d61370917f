package migratetest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

func TestPostgresURL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	first := migratetest.PostgresURL(t)
	second := migratetest.PostgresURL(t)
	if dbName(t, first) == dbName(t, second) {
		t.Fatalf("two calls returned the same database %q", dbName(t, first))
	}

	conn, err := pgx.Connect(ctx, first)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())

	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v; want 1, nil", one, err)
	}
	var current string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&current); err != nil {
		t.Fatalf("current_database(): %v", err)
	}
	if current != dbName(t, first) {
		t.Errorf("current_database() = %q, want %q", current, dbName(t, first))
	}
	var tables int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')").Scan(&tables)
	if err != nil || tables != 0 {
		t.Errorf("user tables in a fresh database = %d, %v; want 0, nil", tables, err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Errorf("CREATE TABLE: %v", err)
	}

	// A test's database is dropped when that test ends, even with a
	// connection still open.
	var inner string
	var innerConn *pgx.Conn
	t.Run("dropped", func(t *testing.T) {
		inner = migratetest.PostgresURL(t)
		if innerConn, err = pgx.Connect(ctx, inner); err != nil {
			t.Fatalf("connect: %v", err)
		}
	})
	defer innerConn.Close(context.Background())
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", dbName(t, inner)).Scan(&exists)
	if err != nil || exists {
		t.Errorf("database %s exists after its test ended = %v, %v; want false, nil", dbName(t, inner), exists, err)
	}
}

func TestDynamoDBEndpoint(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	endpoint := migratetest.DynamoDBEndpoint(t)
	if !strings.HasPrefix(endpoint, "http://") {
		t.Fatalf("endpoint %q does not start with http://", endpoint)
	}
	client := migratetest.DynamoDBClient(t, endpoint)
	table := migratetest.TableName(t, t.Name())

	if _, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatalf("CreateTable %s: %v", table, err)
	}
	t.Cleanup(func() {
		if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("DeleteTable %s: %v", table, err)
		}
	})

	out, err := client.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	found := false
	for _, name := range out.TableNames {
		found = found || name == table
	}
	if !found {
		t.Errorf("ListTables = %v, want it to include %s", out.TableNames, table)
	}
}

func TestTableName(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"orders", "", "Test/with spaces+slash", strings.Repeat("x", 300)} {
		a, b := migratetest.TableName(t, prefix), migratetest.TableName(t, prefix)
		if a == b {
			t.Errorf("TableName(%q) returned %q twice", prefix, a)
		}
		if len(a) < 3 || len(a) > 255 {
			t.Errorf("TableName(%q) = %q: length %d outside 3..255", prefix, a, len(a))
		}
		if strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
			t.Errorf("TableName(%q) = %q has characters DynamoDB rejects", prefix, a)
		}
	}
}

func dbName(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse %q: %v", rawURL, err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
