package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// TestRunWarmWCU runs the CLI with --create-table --warm-wcu through a
// proxy that records CreateTable requests in front of DynamoDB Local,
// which accepts WarmThroughput and ignores it: the request carries it, and
// the run loads the table.
func TestRunWarmWCU(t *testing.T) {
	ctx := t.Context()
	pg, endpoint := migratetest.PostgresURL(t), migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "warm")
	if err := sqlschema.Up(ctx, pg); err != nil {
		t.Fatalf("schema up: %v", err)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: 5, Seed: 7}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	up, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var creates []string
	rp := httputil.NewSingleHostReverseProxy(up)
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".CreateTable") {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			creates = append(creates, string(body))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rp.ServeHTTP(w, r)
	}))
	defer rec.Close()

	out, errOut, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", rec.URL, "--table", table,
		"--create-table", "--warm-wcu", "8000", "--quiet")
	if code != 0 {
		t.Fatalf("run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(creates) != 1 {
		t.Fatalf("%d CreateTable calls, want 1", len(creates))
	}
	var req struct {
		TableName      string
		WarmThroughput *struct{ WriteUnitsPerSecond *int64 }
	}
	if err := json.Unmarshal([]byte(creates[0]), &req); err != nil {
		t.Fatal(err)
	}
	if req.TableName != table || req.WarmThroughput == nil || req.WarmThroughput.WriteUnitsPerSecond == nil || *req.WarmThroughput.WriteUnitsPerSecond != 8000 {
		t.Errorf("CreateTable sent %s, want a warm throughput of 8000 writes/s", creates[0])
	}
	ddb := migratetest.DynamoDBClient(t, endpoint)
	n, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	if n.Count == 0 {
		t.Errorf("the run wrote nothing into %s", table)
	}
}
