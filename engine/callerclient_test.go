package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// A library user's own client writes through the SDK's whole stack, so
// that their middleware runs on every call: every BatchWriteItem request
// DynamoDB receives carries its own trace id, and no call is sent directly
// (see load/direct.go).
func TestRunWithTheCallersClient(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "")
	target, err := url.Parse(migratetest.DynamoDBEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var traces []string // of the BatchWriteItem requests received
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
			mu.Lock()
			traces = append(traces, r.Header.Get("X-Trace-Id"))
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	// Two callers: one whose middleware sets a header per call (a trace
	// id), one whose middleware only counts calls (metrics). Either must
	// run on every call.
	for _, withHeader := range []bool{true, false} {
		t.Run(fmt.Sprintf("header=%v", withHeader), func(t *testing.T) {
			mu.Lock()
			traces = nil
			mu.Unlock()
			var n, writes atomic.Int64
			tracing := func(o *dynamodb.Options) {
				o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
					return s.Build.Add(middleware.BuildMiddlewareFunc("trace", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
						if middleware.GetOperationName(ctx) == "BatchWriteItem" {
							writes.Add(1)
						}
						if withHeader {
							in.Request.(*smithyhttp.Request).Header.Set("X-Trace-Id", fmt.Sprint(n.Add(1)))
						}
						return next.HandleBuild(ctx, in)
					}), middleware.After)
				})
			}
			client := dynamodb.New(migratetest.DynamoDBClient(t, srv.URL).Options(), tracing)
			table := migratetest.TableName(t, "callers")
			res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, DynamoDB: client, Table: table, CreateTable: true,
				StateFile: filepath.Join(t.TempDir(), "state.json"),
				Writer:    load.Config{Concurrency: 2, Window: 50}}) // small batches: many calls
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Cleanup(func() { client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })
			mu.Lock()
			defer mu.Unlock()
			if res.Total.ItemsWritten != 250 || res.Writer.DirectCalls != 0 || int64(len(traces)) != res.Writer.Calls || len(traces) < 8 ||
				writes.Load() != res.Writer.Calls {
				t.Fatalf("%d items written, writer %+v, %d BatchWriteItem requests received, the middleware ran for %d; want 250, no direct call, one request and one middleware run a call",
					res.Total.ItemsWritten, res.Writer, len(traces), writes.Load())
			}
			if !withHeader {
				return
			}
			seen := map[string]bool{}
			for i, id := range traces {
				if id == "" || seen[id] {
					t.Errorf("BatchWriteItem request %d has trace id %q, empty or seen before", i, id)
				}
				seen[id] = true
			}
		})
	}
}
