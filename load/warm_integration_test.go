package load_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestEnsureTableWarmIntegration creates a pre-warmed table through a
// recording proxy in front of DynamoDB Local. DynamoDB Local 3.3.1 accepts
// WarmThroughput on CreateTable and ignores it (it describes no warm
// throughput), so the recording shows the request carries it; the table's
// description then gives the writer an on-demand table's 4,000 WCU/s.
func TestEnsureTableWarmIntegration(t *testing.T) {
	endpoint := migratetest.DynamoDBEndpoint(t)
	upstream, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var creates []string
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".CreateTable") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			creates = append(creates, string(body))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	client := migratetest.DynamoDBClient(t, rec.URL)
	cfg := load.Config{Table: migratetest.TableName(t, "warm"), PartitionKey: "PK", SortKey: "SK", WarmWCU: 12000}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := load.EnsureTable(ctx, client, cfg); err != nil {
		t.Fatalf("create with warm throughput: %v", err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)})
	})
	mu.Lock()
	defer mu.Unlock()
	if len(creates) != 1 {
		t.Fatalf("%d CreateTable calls, want 1", len(creates))
	}
	var req struct {
		TableName      string
		BillingMode    string
		WarmThroughput *struct{ ReadUnitsPerSecond, WriteUnitsPerSecond *int64 }
	}
	if err := json.Unmarshal([]byte(creates[0]), &req); err != nil {
		t.Fatalf("CreateTable body %s: %v", creates[0], err)
	}
	if req.TableName != cfg.Table || req.BillingMode != "PAY_PER_REQUEST" || req.WarmThroughput == nil ||
		req.WarmThroughput.WriteUnitsPerSecond == nil || *req.WarmThroughput.WriteUnitsPerSecond != 12000 || req.WarmThroughput.ReadUnitsPerSecond != nil {
		t.Errorf("CreateTable sent %s, want warm throughput of 12000 writes/s on an on-demand table", creates[0])
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.Table)})
	if err != nil {
		t.Fatal(err)
	}
	if w := out.Table.WarmThroughput; w != nil {
		t.Logf("DynamoDB Local now describes warm throughput: %d writes/s", aws.ToInt64(w.WriteUnitsPerSecond))
	}
	got := load.CapacityOf(out.Table)
	want := load.TableCapacity{OnDemand: true} // no warm throughput described: unknown
	if w := out.Table.WarmThroughput; w != nil && aws.ToInt64(w.WriteUnitsPerSecond) > 0 {
		want.WCU = float64(aws.ToInt64(w.WriteUnitsPerSecond))
	}
	if got != want {
		t.Errorf("capacity of the created table = %+v, want %+v", got, want)
	}
}
