package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/migratetest"
)

// aggSchema and aggMapping are the aggregates sample: customers and their
// orders, and figures over each customer's orders kept on the customer
// (every function, a where filter over an enum and a number, latest as one
// column and as a map, ties broken by the primary key), with a pattern
// whose SQL computes the figures for prove.
const (
	aggSchema  = "../../testdata/aggregates/schema.sql"
	aggMapping = "../../testdata/aggregates/mapping.yaml"
)

// aggExpectSQL computes the same figures per customer, as text in the
// tool's formats (numbers compared by value), with SQL's own aggregates.
const aggExpectSQL = `
WITH ts AS (SELECT o.*, to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM orders o)
SELECT c.customer_id::text,
  (SELECT count(*) FROM ts WHERE ts.customer_id = c.customer_id)::text,
  (SELECT count(note) FROM ts WHERE ts.customer_id = c.customer_id)::text,
  (SELECT count(*) FROM ts WHERE ts.customer_id = c.customer_id AND status IN ('OPEN', 'SHIPPED') AND total >= 10)::text,
  (SELECT coalesce(sum(total), 0) FROM ts WHERE ts.customer_id = c.customer_id AND status <> 'VOID')::text,
  (SELECT coalesce(sum(qty), 0) FROM ts WHERE ts.customer_id = c.customer_id)::text,
  coalesce((SELECT at FROM ts WHERE ts.customer_id = c.customer_id AND placed_at IS NOT NULL ORDER BY placed_at LIMIT 1), '-'),
  coalesce((SELECT max(total) FROM ts WHERE ts.customer_id = c.customer_id)::text, '-'),
  coalesce((SELECT order_id::text || ' ' || coalesce(at, '-') || ' ' || total::text FROM ts WHERE ts.customer_id = c.customer_id
            ORDER BY placed_at DESC NULLS LAST, order_id DESC LIMIT 1), '-'),
  coalesce((SELECT coalesce(note, '-') FROM ts WHERE ts.customer_id = c.customer_id
            ORDER BY qty DESC NULLS LAST, placed_at DESC NULLS LAST, order_id DESC LIMIT 1), '-')
FROM customers c ORDER BY c.customer_id`

// aggText renders an aggregate attribute as aggExpectSQL does: numbers by
// exact value, "-" when absent, a latest map as "id at total".
func aggText(t *testing.T, av types.AttributeValue) string {
	t.Helper()
	switch v := av.(type) {
	case nil:
		return "-"
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		r, ok := new(big.Rat).SetString(v.Value)
		if !ok {
			t.Fatalf("N %q is not a number", v.Value)
		}
		return r.RatString()
	case *types.AttributeValueMemberM:
		return aggText(t, v.Value["id"]) + " " + aggText(t, v.Value["at"]) + " " + aggText(t, v.Value["total"])
	}
	t.Fatalf("unexpected attribute %T", av)
	return ""
}

// numText normalizes SQL's number text as aggText does.
func numText(t *testing.T, s string) string {
	t.Helper()
	if s == "-" {
		return s
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%q is not a number", s)
	}
	return r.RatString()
}

// compareAggregates checks every customer item's aggregates against SQL;
// it returns the number of customers compared.
func compareAggregates(t *testing.T, conn *pgx.Conn, ddb *dynamodb.Client, table string) int {
	t.Helper()
	rows, err := conn.Query(t.Context(), aggExpectSQL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]string, error) {
		v := make([]string, 10)
		p := make([]any, 10)
		for i := range v {
			p[i] = &v[i]
		}
		return v, r.Scan(p...)
	})
	if err != nil {
		t.Fatal(err)
	}
	attrs := []string{"orders", "notes", "openOrders", "spent", "units", "firstOrder", "biggest", "lastOrder", "lastNote"}
	numeric := map[string]bool{"orders": true, "notes": true, "openOrders": true, "spent": true, "units": true, "biggest": true}
	for _, w := range want {
		out, err := ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#" + w[0]}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Item == nil {
			t.Errorf("customer %s: no item", w[0])
			continue
		}
		for i, a := range attrs {
			exp := w[i+1]
			if numeric[a] {
				exp = numText(t, exp)
			}
			if a == "lastOrder" && exp != "-" {
				f := strings.Fields(exp)
				exp = numText(t, f[0]) + " " + f[1] + " " + numText(t, f[2])
			}
			if got := aggText(t, out.Item[a]); got != exp {
				t.Errorf("customer %s %s = %s, SQL says %s", w[0], a, got, exp)
			}
		}
	}
	return len(want)
}

// TestAggregatesEndToEnd runs the CLI with a mapping of aggregates over a
// real source and checks every customer's figures against SQL; verify
// agrees, then finds a parent whose child changed behind its back, and
// run puts it right.
func TestAggregatesEndToEnd(t *testing.T) {
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "agg")
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	execFile(t, conn, aggSchema)
	dir := t.TempDir()
	file := aggMapping
	common := []string{"--mapping", file, "--pg", pg, "--endpoint", endpoint, "--table", table}
	out, errOut, code := runCLI(t, append([]string{"run", "--create-table", "--state", filepath.Join(dir, "s1.json")}, common...)...)
	if code != 0 {
		t.Fatalf("run exited %d\n%s\n%s", code, out, errOut)
	}
	ddb := migratetest.DynamoDBClient(t, endpoint)
	if n := compareAggregates(t, conn, ddb, table); n != 40 {
		t.Fatalf("compared %d customers, want 40", n)
	}
	// Customers 31..40 have no orders: counts and sums 0, the rest absent.
	it, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#35"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := numAttr(it.Item, "orders") + "," + numAttr(it.Item, "spent"); got != "0,0" {
		t.Errorf("customer 35 without orders: orders,spent = %s, want 0,0", got)
	}
	for _, a := range []string{"firstOrder", "biggest", "lastOrder", "lastNote"} {
		if _, ok := it.Item[a]; ok {
			t.Errorf("customer 35 without orders has %s", a)
		}
	}

	if v := verifyJSON(t, 0, common...); !v.Identical || v.Summary.Matching != 40 {
		t.Fatalf("verify after run: identical %v, summary %+v", v.Identical, v.Summary)
	}
	// prove asks the pattern of both sides for every customer; a wrong
	// figure planted in one item fails it.
	proveJSON := func() prove.Result {
		t.Helper()
		out, errOut, _ := runCLI(t, append([]string{"prove", "--samples", "50", "--format", "json"}, common...)...)
		var res prove.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Patterns) != 1 {
			t.Fatalf("prove: %v\n%s\n%s", err, out, errOut)
		}
		return res
	}
	if res := proveJSON(); !res.Proven || res.Patterns[0].Items != 40 {
		t.Fatalf("prove after run: %+v", res)
	}
	if _, err := ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#3"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}},
		UpdateExpression:          aws.String("SET spent = spent + :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "0.01"}}}); err != nil {
		t.Fatal(err)
	}
	if res := proveJSON(); res.Proven || res.Patterns[0].Mismatched != 1 || len(res.Patterns[0].Differences) != 1 ||
		!strings.Contains(res.Patterns[0].Differences[0].Message, "spent") {
		t.Errorf("prove with a wrong spent planted on customer 3: %+v", res)
	}

	// A child moves to another parent and another's total changes: verify
	// sees both parents differ (the aggregates are part of the expected
	// item), a new run writes them right.
	if _, err := conn.Exec(ctx, `UPDATE orders SET customer_id = 35 WHERE order_id = 5; UPDATE orders SET total = total + 1000 WHERE order_id = 7`); err != nil {
		t.Fatal(err)
	}
	v := verifyJSON(t, exitDiffers, common...)
	if got := changeKeys(v.Different); strings.Join(got, "; ") != "Customer CUSTOMER#3 | PROFILE: changed spent; Customer CUSTOMER#35 | PROFILE: added biggest,added firstOrder,added lastNote,added lastOrder,changed notes,changed orders; "+
		"Customer CUSTOMER#6 | PROFILE: changed notes,changed orders; Customer CUSTOMER#8 | PROFILE: changed openOrders,changed spent" {
		// The planted spent of customer 3 differs too. Order 5 (VOID,
		// quantity 0) moves from customer 6 to 35: only
		// the figures it counts in change; order 7 (SHIPPED) of customer
		// 8 grows past 10 but not past the customer's biggest.
		t.Errorf("verify after the edits: different %q", got)
	}
	out, errOut, code = runCLI(t, append([]string{"run", "--state", filepath.Join(dir, "s2.json")}, common...)...)
	if code != 0 {
		t.Fatalf("second run exited %d\n%s\n%s", code, out, errOut)
	}
	compareAggregates(t, conn, ddb, table)

	// A sum DynamoDB cannot hold is a row error naming the table, the
	// key and the column, never a rounded number.
	if _, err := conn.Exec(ctx, `INSERT INTO orders VALUES (1001, 40, 'OPEN', 99999999999999999999999999999999999999, 1, now(), NULL), (1002, 40, 'OPEN', 99999999999999999999999999999999999999, 1, now(), NULL)`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, append([]string{"run", "--state", filepath.Join(dir, "s3.json")}, common...)...)
	if code == 0 || !strings.Contains(errOut+out, "customer_id=40") || !strings.Contains(errOut+out, "aggregate spent: sum of orders.total") ||
		!strings.Contains(errOut+out, "DynamoDB numbers hold at most 38") {
		t.Errorf("run with an overflowing sum exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestAggregatesSyncE2E streams the aggregate mapping while four
// goroutines churn the children: orders inserted, updated (the summed and
// ordered columns and the filter's status), deleted and moved between
// customers. After sync catches up, verify finds the table identical and
// every customer's figures equal SQL's.
func TestAggregatesSyncE2E(t *testing.T) {
	bin := buildBinary(t)
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "aggsync")
	dir := t.TempDir()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	execFile(t, conn, aggSchema)
	// FULL: a move must tell sync the customer the order left.
	if _, err := conn.Exec(ctx, "ALTER TABLE orders REPLICA IDENTITY FULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		name := replicate.DefaultName(table)
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: pg, Slot: name, Publication: name}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	file := aggMapping
	state := filepath.Join(dir, "state.json")
	syncCmd := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"sync", "--mapping", file, "--endpoint", endpoint, "--table", table, "--state", state}, extra...)...)
		cmd.Env = append(os.Environ(), "MIGRATE_PG_URL="+pg)
		return cmd
	}
	streaming := syncCmd("--create-table")
	if err := start(streaming); err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, state, streaming)

	// The churn: each goroutine commits random child changes for a while.
	ops := []string{"insert", "update total", "update status", "update placed_at and note", "delete", "move"}
	var mu sync.Mutex
	done := map[string]int{}
	var wg sync.WaitGroup
	churnCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, pg)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close(context.Background())
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; churnCtx.Err() == nil; i++ {
				op := ops[rng.IntN(len(ops))]
				cust, id := 1+rng.IntN(40), 1+rng.IntN(300)
				var sql string
				var args []any
				switch op {
				case "insert":
					sql = `INSERT INTO orders VALUES ($1, $2, 'OPEN', $3, $4, now(), 'churn')`
					args = []any{10000 + w*100000 + i, cust, fmt.Sprintf("%d.%02d", rng.IntN(500), rng.IntN(100)), rng.IntN(9)}
				case "update total":
					sql = `UPDATE orders SET total = total + $2, qty = qty + 1 WHERE order_id = $1`
					args = []any{id, rng.IntN(50)}
				case "update status":
					sql = `UPDATE orders SET status = (ARRAY['OPEN', 'SHIPPED', 'VOID'])[$2]::order_state WHERE order_id = $1`
					args = []any{id, 1 + rng.IntN(3)}
				case "update placed_at and note":
					sql = `UPDATE orders SET placed_at = now() - $2 * interval '1 hour', note = 'n' || $2 WHERE order_id = $1`
					args = []any{id, rng.IntN(1000)}
				case "delete":
					sql = `DELETE FROM orders WHERE order_id = $1`
					args = []any{id}
				case "move":
					sql = `UPDATE orders SET customer_id = $2 WHERE order_id = $1`
					args = []any{id, cust}
				}
				tag, err := c.Exec(churnCtx, sql, args...)
				if churnCtx.Err() != nil {
					return
				}
				if err != nil {
					t.Errorf("%s: %v", op, err)
					return
				}
				if tag.RowsAffected() > 0 {
					mu.Lock()
					done[op]++
					mu.Unlock()
				}
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	t.Logf("churn committed: %v", done)
	for _, op := range ops {
		if done[op] == 0 {
			t.Errorf("the churn never committed %q", op)
		}
	}
	if exited(streaming) {
		res := wait(streaming)
		t.Fatalf("sync ended during the churn: exit %d\n%s", res.code, res.output())
	}
	streaming.Process.Signal(syscall.SIGINT)
	if res := wait(streaming); res.code != exitInterrupted {
		t.Fatalf("sync after SIGINT: exit %d\n%s", res.code, res.output())
	}
	res := runCmd(t, syncCmd("--until-caught-up", "--quiet"))
	if res.code != 0 || !strings.Contains(res.stdout, "sync: caught up with the source at") {
		t.Fatalf("sync --until-caught-up exited %d\n%s", res.code, res.output())
	}
	v := verifyJSON(t, 0, "--mapping", file, "--pg", pg, "--endpoint", endpoint, "--table", table, "--state", state)
	if !v.Identical || v.Summary.Different+v.Summary.Missing+v.Summary.Unexpected != 0 {
		t.Errorf("verify after catching up: %+v", v.Summary)
	}
	if n := compareAggregates(t, conn, migratetest.DynamoDBClient(t, endpoint), table); n != 40 {
		t.Errorf("compared %d customers, want 40", n)
	}
}

func execFile(t *testing.T, conn *pgx.Conn, file string) {
	t.Helper()
	sql, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), string(sql)); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
