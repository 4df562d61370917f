package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// The examples run against the project's test services (see TestMain):
// pgURL is a PostgreSQL database holding the sample bookstore, dynamoDB a
// client of DynamoDB Local, table a table name of their own and stateDir a
// directory for state files. In your program they are your database URL,
// your *dynamodb.Client, your table and where you keep state files.
var (
	pgURL    string
	dynamoDB *dynamodb.Client
	table    string
	stateDir string
)

func TestMain(m *testing.M) {
	migratetest.MainWithExamples(m, func(ctx context.Context, s *migratetest.Services) (func(), error) {
		suffix := make([]byte, 4)
		_, _ = rand.Read(suffix)
		url, drop, err := s.NewDatabase(ctx, "engine_examples_"+hex.EncodeToString(suffix))
		if err != nil {
			return nil, err
		}
		dynamoDB, table = s.DynamoDBClient(), "Bookstore-examples-"+hex.EncodeToString(suffix)
		cleanup := func() {
			_ = drop()
			for _, t := range []string{table + "-run", table + "-verify", table + "-prune", table + "-prove", table + "-export", table + "-sync", table + "-observed"} {
				_, _ = dynamoDB.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(t)})
			}
			_ = os.RemoveAll(stateDir)
		}
		if stateDir, err = os.MkdirTemp("", "engine-examples-"); err != nil {
			return cleanup, err
		}
		if err := sqlschema.Up(ctx, url); err != nil {
			return cleanup, err
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return cleanup, err
		}
		defer conn.Close(ctx)
		if _, err := seed.Load(ctx, conn, seed.Config{Scale: 20, Seed: 1}); err != nil {
			return cleanup, err
		}
		pgURL = url
		return cleanup, nil
	})
}

// Migrate the sample bookstore into a new table.
func ExampleRun() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err) // mapping.Diagnostics: every problem, file:line:col
	}
	res, err := engine.Run(ctx, engine.RunConfig{
		Mapping:     m,
		Postgres:    pgURL,
		DynamoDB:    dynamoDB,
		Table:       table + "-run",
		CreateTable: true,
		StateFile:   filepath.Join(stateDir, "run.state.json"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", res.Status)
	for _, e := range res.Entities {
		fmt.Printf("%-12s %-18s %4d rows read, %4d items written\n", e.Entity, e.Source, e.RowsRead, e.ItemsWritten)
	}
	// Output:
	// status: complete
	// Customer     public.customers     20 rows read,   20 items written
	// Order        public.orders        70 rows read,   70 items written
	// OrderSummary public.orders        70 rows read,   70 items written
	// OrderLine    public.order_items  232 rows read,  232 items written
	// Author       public.authors        3 rows read,    3 items written
	// Book         public.books         10 rows read,   10 items written
}

// Compute a plan: what a run would write, and what it costs, without
// writing anything.
func ExamplePlan() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	p, err := engine.Plan(ctx, engine.PlanConfig{CompareConfig: engine.CompareConfig{
		Mapping:  m,
		Postgres: pgURL,
		DynamoDB: dynamoDB,
		Table:    table + "-planned", // does not exist: every item is a create
	}})
	if err != nil {
		log.Fatal(err)
	}
	s, c := p.Summary, p.Capacity
	fmt.Printf("table exists: %v\n", p.Table.Exists)
	fmt.Printf("%d items expected: %d create, %d change, %d unchanged, %d stale; %d problems\n",
		s.Expected, s.Create, s.Change, s.Unchanged, s.Stale, s.Problems)
	fmt.Printf("write units: %d (%d table + %d indexes)\n", c.WriteUnits.Total, c.WriteUnits.Table, c.WriteUnits.Indexes)
	// Output:
	// table exists: false
	// 405 items expected: 405 create, 0 change, 0 unchanged, 0 stale; 0 problems
	// write units: 734 (405 table + 329 indexes)
}

// Verify a loaded table against the source.
func ExampleVerify() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	into := table + "-verify"
	if _, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: into,
		CreateTable: true, StateFile: filepath.Join(stateDir, "verify.state.json")}); err != nil {
		log.Fatal(err)
	}
	v, err := engine.Verify(ctx, engine.VerifyConfig{CompareConfig: engine.CompareConfig{
		Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: into,
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("identical:", v.Identical)
	for _, e := range v.Entities {
		fmt.Printf("%-12s expected %4d, actual %4d, hashes match: %v\n", e.Entity, e.Expected, e.Actual, e.ExpectedHash == e.ActualHash)
	}
	// Output:
	// identical: true
	// Customer     expected   20, actual   20, hashes match: true
	// Order        expected   70, actual   70, hashes match: true
	// OrderSummary expected   70, actual   70, hashes match: true
	// OrderLine    expected  232, actual  232, hashes match: true
	// Author       expected    3, actual    3, hashes match: true
	// Book         expected   10, actual   10, hashes match: true
}
