package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/faultproxy"
	"github.com/pgdynamo/migrate/internal/report"
)

// writeOps are the DynamoDB operations plan must never call.
var writeOps = []string{"PutItem", "BatchWriteItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "CreateTable", "UpdateTable", "DeleteTable"}

// countingProxy is a request-counting reverse proxy in front of DynamoDB
// Local (faultproxy with no faults).
func countingProxy(t *testing.T, endpoint string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(endpoint, faultproxy.Config{Rate: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func noWrites(t *testing.T, what string, p *faultproxy.Proxy) map[string]int {
	t.Helper()
	reqs := p.Stats().Requests
	for _, op := range writeOps {
		if reqs[op] != 0 {
			t.Errorf("%s made %d %s calls: it must never write", what, reqs[op], op)
		}
	}
	t.Logf("%s: DynamoDB calls %v", what, reqs)
	return reqs
}

type tableItem = map[string]types.AttributeValue

// scanTable reads the whole table, by "PK | SK".
func scanTable(t *testing.T, b *bookstore) map[string]tableItem {
	t.Helper()
	out := map[string]tableItem{}
	p := dynamodb.NewScanPaginator(b.ddb, &dynamodb.ScanInput{TableName: &b.table, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			out[strAttr(it, "PK")+" | "+strAttr(it, "SK")] = it
		}
	}
	return out
}

func numAttr(it tableItem, name string) string {
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// refKeys lists "Entity PK | SK" of report items, sorted.
func refKeys(refs []report.ItemRef) []string {
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Entity+" "+r.Key.String())
	}
	sort.Strings(out)
	return out
}

// changeKeys lists "Entity PK | SK: path,path" of report changes, sorted.
func changeKeys(cs []report.ItemChange) []string {
	out := []string{}
	for _, c := range cs {
		var paths []string
		for _, a := range c.Attributes {
			paths = append(paths, a.Op+" "+a.Path)
		}
		out = append(out, c.Entity+" "+c.Key.String()+": "+strings.Join(paths, ","))
	}
	sort.Strings(out)
	return out
}

func planJSON(t *testing.T, args ...string) (*report.Plan, string) {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"plan", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("plan exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var p report.Plan
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields() // the documented schema is the whole document
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, out)
	}
	if p.Schema != report.PlanSchema {
		t.Errorf("schema %q", p.Schema)
	}
	return &p, errOut
}

// verifyJSON runs verify --format json; wantCode -1 accepts 0 and 3.
func verifyJSON(t *testing.T, wantCode int, args ...string) *report.Verify {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"verify", "--format", "json"}, args...)...)
	if wantCode >= 0 && code != wantCode || code != 0 && code != exitDiffers {
		t.Fatalf("verify exited %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errOut)
	}
	var v report.Verify
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("verify JSON: %v\n%s", err, out)
	}
	return &v
}

// TestPlanAndVerify migrates the bookstore, edits the source (updates,
// deletes, inserts), and checks that plan reports exactly the resulting
// creates, changes and stale items without a single write call; then that
// run + verify agree, and that verify finds a tampered item.
func TestPlanAndVerify(t *testing.T) {
	b := migrateBookstore(t, 60)
	ctx := t.Context()
	before := scanTable(t, b)
	one := func(q string, args ...any) string {
		t.Helper()
		r := b.sqlStrings(t, q, args...)
		if len(r) != 1 {
			t.Fatalf("%s: %d rows", q, len(r))
		}
		return r[0]
	}

	// The edits. Each id is chosen so that the edits do not overlap.
	cust := one(`SELECT min(customer_id)::text FROM customers`)
	addr := strings.Split(one(`SELECT a.address_id || ' ' || a.customer_id || ' ' || a.label FROM addresses a
		WHERE a.customer_id <> $1 AND EXISTS (SELECT 1 FROM orders o WHERE o.shipping_address_id = a.address_id)
		ORDER BY a.address_id LIMIT 1`, mustInt(cust)), " ")
	addrID, owner, label := addr[0], addr[1], addr[2]
	book := one(`SELECT min(book_id)::text FROM books`)
	gone := one(`SELECT max(order_id)::text FROM orders WHERE customer_id NOT IN ($1, $2)
		AND shipping_address_id IS DISTINCT FROM $3`, mustInt(cust), mustInt(owner), mustInt(addrID))
	newCust := one(`SELECT (max(customer_id) + 1000)::text FROM customers`)
	newOrder := one(`SELECT (max(order_id) + 1000)::text FROM orders`)
	shipped := b.sqlStrings(t, `SELECT order_id::text FROM orders WHERE shipping_address_id = $1 ORDER BY order_id`, mustInt(addrID))
	for _, q := range []string{
		`UPDATE customers SET name = 'Renamed Customer' WHERE customer_id = ` + cust,
		`UPDATE addresses SET city = 'Newtown' WHERE address_id = ` + addrID,
		`UPDATE books SET price = price + 1 WHERE book_id = ` + book,
		`DELETE FROM orders WHERE order_id = ` + gone, // and its order_items, by cascade
		`INSERT INTO customers (customer_id, name, email, created_at) VALUES (` + newCust + `, 'Grace Hopper', 'grace@example.com', '2024-02-01T09:00:00Z')`,
		`INSERT INTO orders (order_id, customer_id, status, placed_at, total) VALUES (` + newOrder + `, ` + newCust + `, 'OPEN', '2024-03-01T10:00:00Z', 42.50)`,
		`INSERT INTO order_items VALUES (` + newOrder + `, ` + book + `, 2, 21.25)`,
	} {
		if _, err := b.conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// What plan must report, from the table as it was loaded.
	wantCreates := []string{
		"Customer CUSTOMER#" + newCust + " | PROFILE",
		fmt.Sprintf("Order CUSTOMER#%s | ORDER#2024-03-01T10:00:00.000000Z#%012d", newCust, mustInt(newOrder)),
		"OrderSummary ORDER#" + newOrder + " | ORDER",
		fmt.Sprintf("OrderLine ORDER#%s | BOOK#%012d", newOrder, mustInt(book)),
	}
	wantChanges := []string{
		"Customer CUSTOMER#" + cust + " | PROFILE: changed name",
		"Customer CUSTOMER#" + owner + " | PROFILE: changed addresses." + label + ".city",
		"Book BOOK#" + book + " | BOOK: changed price",
	}
	var wantStale []string
	for k, it := range before {
		typ := strAttr(it, "type")
		switch {
		case typ == "Order" && slices.Contains(shipped, numAttr(it, "orderId")):
			wantChanges = append(wantChanges, "Order "+k+": changed shipCity")
		case typ == "Order" && numAttr(it, "orderId") == gone, strAttr(it, "PK") == "ORDER#"+gone:
			wantStale = append(wantStale, typ+" "+k)
		}
	}
	sort.Strings(wantCreates)
	sort.Strings(wantChanges)
	sort.Strings(wantStale)
	if len(shipped) == 0 || len(wantStale) < 3 {
		t.Fatalf("the edits prove too little: %d orders ship to the address, %d stale items", len(shipped), len(wantStale))
	}
	unchanged := int64(len(before) - len(wantChanges) - len(wantStale))
	htmlPath := filepath.Join(t.TempDir(), "plan.html")

	// The plan every later step uses; the subtests check it (each can run
	// alone with -run).
	scanProxy := countingProxy(t, b.endpoint)
	plan, errOut := planJSON(t, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", scanProxy.URL(), "--table", b.table,
		"--max-details", "1000", "--html", htmlPath)
	t.Logf("plan stderr:\n%s", errOut)

	t.Run("plan by scan: exactly the edits, no writes", func(t *testing.T) {
		reqs := noWrites(t, "plan --compare scan", scanProxy)
		if reqs["Scan"] == 0 || reqs["DescribeTable"] != 1 || reqs["BatchGetItem"] != 0 {
			t.Errorf("calls %v: want one DescribeTable and Scans only", reqs)
		}
		s := plan.Summary
		want := report.PlanSummary{Expected: unchanged + int64(len(wantChanges)+len(wantCreates)), Create: int64(len(wantCreates)),
			Change: int64(len(wantChanges)), Unchanged: unchanged, Stale: int64(len(wantStale))}
		if s != want {
			t.Errorf("summary %+v\n   want %+v", s, want)
		}
		equalStrings(t, "creates", refKeys(plan.Creates), wantCreates)
		equalStrings(t, "changes", changeKeys(plan.Changes), wantChanges)
		equalStrings(t, "stale", refKeys(plan.Stale), wantStale)
		// For CI: --detailed-exitcode says "changes" with 2 (the mapping
		// given as the argument this time).
		if _, errOut, code := runCLI(t, "plan", bookstoreMapping, "--detailed-exitcode", "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table); code != exitChanges {
			t.Errorf("plan --detailed-exitcode with changes exited %d, want %d\n%s", code, exitChanges, errOut)
		}
		if !plan.Table.Exists || plan.Reads.Mode != "scan" || !plan.Reads.StaleChecked || plan.Reads.ItemsRead != int64(len(before)) {
			t.Errorf("table %+v reads %+v", plan.Table, plan.Reads)
		}
		// Old and new values, as DynamoDB JSON.
		for _, c := range plan.Changes {
			if c.Key.PK == "CUSTOMER#"+cust && (compact(t, c.Attributes[0].New) != `{"S":"Renamed Customer"}` || len(c.Attributes[0].Old) == 0) {
				t.Errorf("customer rename: %+v", c.Attributes)
			}
		}
		// The capacity figures agree with the counts, and the shard count is
		// the one the load used: otherwise every Order would change.
		cp := plan.Capacity
		if cp.Items != s.Expected || cp.WriteUnits.Total != cp.WriteUnits.Table+cp.WriteUnits.Indexes || cp.WriteUnits.Table < cp.Items ||
			cp.EstimatedCostUSD <= 0 || cp.MaxItem == nil || len(cp.SizeHistogram) == 0 || len(cp.TopPartitionsByItems) == 0 {
			t.Errorf("capacity %+v", cp)
		}
		// DynamoDB Local's on-demand table reports no warm throughput: a
		// new on-demand table's 4,000 write units/s.
		if w := cp.Warm; w == nil || w.Billing != "onDemand" || w.NewTable || w.WriteUnitsPerSecond != 4000 ||
			math.Abs(w.EstimatedSeconds-max(float64(cp.WriteUnits.Total)/4000, w.HotPartitionSeconds)) > 1e-9 || w.HotPartitionSeconds <= 0 {
			t.Errorf("warm load %+v for %d write units", cp.Warm, cp.WriteUnits.Total)
		}
		if len(cp.Shards) != 1 || !strings.Contains(b.output, fmt.Sprintf("padded to %d", cp.Shards[0].Count)) || cp.Shards[0].SampleItems == 0 {
			t.Errorf("plan shards %+v, run said:\n%s", cp.Shards, b.output)
		}
		if plan.Keys == nil || !plan.Keys.Proven || len(plan.Keys.Entities) != 6 || !strings.Contains(plan.Keys.Entities[3].Reason, "(order_id, book_id)") {
			t.Errorf("plan keys %+v: want every entity proven unique", plan.Keys)
		}
		if len(cp.Indexes) != 2 || cp.Indexes[0].DistinctPartitionKeys == 0 || cp.Indexes[0].Method != "exact" {
			t.Errorf("indexes %+v", cp.Indexes)
		}
		var copies []string
		for _, c := range cp.Copies {
			copies = append(copies, fmt.Sprintf("%s<%s:%v", c.Entity, c.From, c.Items > 0))
		}
		equalStrings(t, "copy sets", copies, []string{"Order<addresses:true", "OrderLine<books:true", "OrderLine<books > authors:true", "Book<authors:true"})
	})

	t.Run("plan by get: the same creates and changes, stale not checked", func(t *testing.T) {
		proxy := countingProxy(t, b.endpoint)
		p, _ := planJSON(t, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", proxy.URL(), "--table", b.table,
			"--max-details", "1000", "--compare", "get")
		reqs := noWrites(t, "plan --compare get", proxy)
		if reqs["BatchGetItem"] == 0 || reqs["Scan"] != 0 {
			t.Errorf("calls %v: want BatchGetItem and no Scan", reqs)
		}
		equalStrings(t, "creates", refKeys(p.Creates), wantCreates)
		equalStrings(t, "changes", changeKeys(p.Changes), wantChanges)
		if p.Reads.StaleChecked || p.Summary.Stale != 0 || p.Summary.Unchanged != unchanged {
			t.Errorf("reads %+v summary %+v", p.Reads, p.Summary)
		}
	})

	t.Run("plan against a missing table: everything is a create", func(t *testing.T) {
		proxy := countingProxy(t, b.endpoint)
		p, _ := planJSON(t, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", proxy.URL(), "--table", b.table+"-missing")
		reqs := noWrites(t, "plan of a missing table", proxy)
		if len(reqs) != 1 || reqs["DescribeTable"] != 1 {
			t.Errorf("calls %v: want one DescribeTable", reqs)
		}
		if p.Table.Exists || p.Reads.Mode != "none" || p.Summary.Create != p.Summary.Expected || p.Summary.Expected != unchanged+int64(len(wantChanges)+len(wantCreates)) {
			t.Errorf("table %+v reads %+v summary %+v", p.Table, p.Reads, p.Summary)
		}
		// It shows the table run --create-table would create.
		c := p.Table.Create
		if c == nil || c.Billing != "PAY_PER_REQUEST" || len(c.Keys) != 2 || c.Keys[0] != (report.KeyAttribute{Name: "PK", Type: "S", Role: "partition"}) || len(c.Indexes) != 2 || c.Indexes[1].Name != "GSI2" || c.Indexes[1].Projection != "ALL" {
			t.Errorf("table to create: %+v", c)
		}
		if w := p.Capacity.Warm; w == nil || !w.NewTable || w.Billing != "onDemand" || w.WriteUnitsPerSecond != 4000 || w.EstimatedSeconds <= 0 {
			t.Errorf("warm load of the table to create: %+v", w)
		}
		out, _, _ := runCLI(t, "plan", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table+"-missing", "--color", "never")
		for _, want := range []string{"a new on-demand table's 4,000 write units/s", "migrate run needs --create-table", "table keys: partition PK (S), sort SK (S)", "global index GSI2: partition GSI2PK (S), sort GSI2SK (S); projection ALL"} {
			if !strings.Contains(out, want) {
				t.Errorf("plan text lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("text and markdown", func(t *testing.T) {
		out, _, code := runCLI(t, "plan", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table, "--max-details", "2")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		t.Logf("plan:\n%s", out)
		for _, want := range []string{fmt.Sprintf("+ %d create", len(wantCreates)), fmt.Sprintf("~ %d change", len(wantChanges)),
			fmt.Sprintf("- %d stale", len(wantStale)), "more not shown (--max-details 2)", "Capacity", "largest item collections"} {
			if !strings.Contains(out, want) {
				t.Errorf("text report lacks %q", want)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Error("colour codes in output that is not a terminal")
		}
		md, _, code := runCLI(t, "plan", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table, "--format", "markdown")
		if code != 0 || !strings.Contains(md, "## migrate plan") || !strings.Contains(md, "| entity | PK | SK |") {
			t.Errorf("markdown (exit %d):\n%s", code, md)
		}
	})

	t.Run("HTML renders in a headless browser", func(t *testing.T) {
		checkHTMLInChromium(t, htmlPath)
	})

	// Load the edits. run does not delete stale items; prune does, listing
	// them first without --yes.
	out, errOut, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table)
	if code != 0 {
		t.Fatalf("run exited %d\n%s\n%s", code, out, errOut)
	}
	t.Run("prune lists, then deletes exactly the stale items", func(t *testing.T) {
		pruneArgs := []string{"prune", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table}
		out, errOut, code := runCLI(t, pruneArgs...)
		want := fmt.Sprintf("would delete %d stale items", len(wantStale))
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "pass --yes") {
			t.Fatalf("prune exited %d, want %q\n%s\n%s", code, want, out, errOut)
		}
		r := plan.Stale[0]
		if b.get(t, r.Key.PK, r.Key.SK) == nil {
			t.Fatalf("prune without --yes deleted %s | %s", r.Key.PK, r.Key.SK)
		}
		out, errOut, code = runCLI(t, append(pruneArgs, "--yes")...)
		if want := fmt.Sprintf("deleted %d stale items", len(wantStale)); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("prune --yes exited %d, want %q\n%s\n%s", code, want, out, errOut)
		}
		t.Logf("prune --yes:\n%s", out)
		for _, r := range plan.Stale {
			if b.get(t, r.Key.PK, r.Key.SK) != nil {
				t.Errorf("stale item %s | %s is still there", r.Key.PK, r.Key.SK)
			}
		}
	})

	t.Run("verify after run: identical", func(t *testing.T) {
		out, errOut, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table)
		if code != 0 || !strings.Contains(out, "IDENTICAL") {
			t.Fatalf("verify exited %d\n%s\n%s", code, out, errOut)
		}
		t.Logf("verify:\n%s", out)
		v := verifyJSON(t, 0, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table)
		if !v.Identical || v.Summary.Matching != plan.Summary.Expected || v.Summary.Actual != v.Summary.Expected || len(v.Entities) != 6 {
			t.Errorf("verify %+v", v.Summary)
		}
		for _, e := range v.Entities {
			if !e.Match || e.Expected == 0 || e.ExpectedHash != e.ActualHash {
				t.Errorf("entity %+v", e)
			}
		}
		if _, errOut, code := runCLI(t, "plan", bookstoreMapping, "--detailed-exitcode", "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table); code != exitOK {
			t.Errorf("plan --detailed-exitcode without changes exited %d, want 0\n%s", code, errOut)
		}
		// An error is 1, never 2 (which would read as "changes").
		if _, _, code := runCLI(t, "plan", bookstoreMapping, "--detailed-exitcode", "--pg", b.pg, "--format", "yaml"); code != exitFailure {
			t.Errorf("plan --detailed-exitcode with a bad flag exited %d, want 1", code)
		}
	})

	// Tamper with the table behind the tool's back.
	tampered := "CUSTOMER#" + cust
	mustDo := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustDo(b.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &b.table, Key: tableItem{"PK": s(tampered), "SK": s("PROFILE")},
		UpdateExpression: aws.String("SET #n = :v"), ExpressionAttributeNames: map[string]string{"#n": "name"},
		ExpressionAttributeValues: tableItem{":v": s("Tampered")}}))
	mustDo(b.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &b.table, Key: tableItem{"PK": s("ORDER#" + newOrder), "SK": s("ORDER")}}))
	mustDo(b.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &b.table, Item: tableItem{"PK": s("BOOK#999999"), "SK": s("BOOK"), "type": s("Book"), "title": s("Planted")}}))
	mustDo(b.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &b.table, Item: tableItem{"PK": s("INVOICE#1"), "SK": s("X"), "type": s("Invoice")}}))

	t.Run("verify names the tampered items and exits 3", func(t *testing.T) {
		out, _, code := runCLI(t, "verify", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table)
		t.Logf("verify:\n%s", out)
		if code != exitDiffers {
			t.Errorf("exit %d, want %d", code, exitDiffers)
		}
		for _, want := range []string{"DIFFERENT", tampered + " | PROFILE", `name: "Tampered" → "Renamed Customer"`, "ORDER#" + newOrder + " | ORDER", "BOOK#999999 | BOOK"} {
			if !strings.Contains(out, want) {
				t.Errorf("verify output lacks %q", want)
			}
		}
		v := verifyJSON(t, exitDiffers, "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table)
		if v.Identical || v.Summary.Different != 1 || v.Summary.Missing != 1 || v.Summary.Unexpected != 1 || v.Summary.Foreign != 1 {
			t.Errorf("summary %+v", v.Summary)
		}
		equalStrings(t, "different", changeKeys(v.Different), []string{"Customer " + tampered + " | PROFILE: changed name"})
		equalStrings(t, "missing", refKeys(v.Missing), []string{"OrderSummary ORDER#" + newOrder + " | ORDER"})
		equalStrings(t, "unexpected", refKeys(v.Unexpected), []string{"Book BOOK#999999 | BOOK"})
		var bad []string
		for _, e := range v.Entities {
			if !e.Match {
				bad = append(bad, e.Entity)
			}
		}
		sort.Strings(bad)
		equalStrings(t, "entities whose hash differs", bad, []string{"Book", "Customer", "OrderSummary"})
	})

	t.Run("verify --sample is deterministic and reads only the sample", func(t *testing.T) {
		proxy := countingProxy(t, b.endpoint)
		args := []string{"--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", proxy.URL(), "--table", b.table, "--sample", "0.5"}
		v1 := verifyJSON(t, -1, args...)
		v2 := verifyJSON(t, -1, args...)
		if v1.Summary != v2.Summary {
			t.Errorf("two samples differ: %+v vs %+v", v1.Summary, v2.Summary)
		}
		all := plan.Summary.Expected
		if n := v1.Summary.Expected; n < all/3 || n > 2*all/3 {
			t.Errorf("a 50%% sample checked %d of %d items", n, all)
		}
		reqs := noWrites(t, "verify --sample", proxy)
		if reqs["Scan"] != 0 || reqs["BatchGetItem"] == 0 {
			t.Errorf("calls %v: a sample reads by key", reqs)
		}
	})

	// A row the mapping cannot transform has no expected item, so its item
	// in the table would look stale: prune must delete nothing then.
	t.Run("prune refuses while a source row cannot be transformed", func(t *testing.T) {
		if _, err := b.conn.Exec(ctx, `UPDATE customers SET email = 'bad#sep@example.com' WHERE customer_id = $1`, mustInt(cust)); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(t, "prune", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table, "--yes")
		if code != exitFailure || !strings.Contains(errOut, "row error") || !strings.Contains(errOut, "nothing was deleted") {
			t.Fatalf("prune exited %d\n%s\n%s", code, out, errOut)
		}
		if b.get(t, "BOOK#999999", "BOOK") == nil || b.get(t, tampered, "PROFILE") == nil {
			t.Error("prune deleted items although it refused")
		}
	})
}

// checkHTMLInChromium opens a report in headless Chromium (Debian's
// chromium package), with every host name unresolvable so that any network
// fetch fails and shows in the log; it checks the DOM and the console, and
// keeps a screenshot in the test's artifact directory.
func checkHTMLInChromium(t *testing.T, path string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed: under CI=true the HTML report must be checked in a browser (apt-get install -y chromium)")
		}
		t.Skipf("SKIPPED: chromium is not installed, so the HTML report is not checked in a browser (apt-get install -y chromium); under CI=true this fails")
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"<script", "<link", "src=", "url(", "@import"} {
		if bytes.Contains(page, []byte(banned)) {
			t.Errorf("the report contains %q: it must be self-contained", banned)
		}
	}
	profile := t.TempDir()
	chromium := func(extra ...string) (stdout, stderr string) {
		t.Helper()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile,
			"--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0", "--window-size=1280,2600"}, extra...)
		args = append(args, "file://"+path)
		var o, e bytes.Buffer
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, e.String())
		}
		return o.String(), e.String()
	}

	dom, log := chromium("--dump-dom")
	for _, line := range strings.Split(log, "\n") {
		// Chromium logs page console messages as CONSOLE(...) and failed
		// loads as net::ERR_...; DBus noise from a headless box is not ours.
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "net::ERR") || strings.Contains(line, "Uncaught") {
			t.Errorf("browser reported: %s", line)
		}
	}
	for _, want := range []string{"<svg", "Item size histogram", "Items per entity", "Largest item collections by bytes", "Creates (", "Changes (", "Stale ("} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n < 4 {
		t.Errorf("%d charts in the DOM, want at least 4", n)
	}

	shot := filepath.Join(t.ArtifactDir(), "plan.png")
	chromium("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Non-trivial: the right size and many distinct colours (charts), not a
	// blank or error page.
	bounds := img.Bounds()
	colors := map[uint32]bool{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[r>>11<<10|g>>11<<5|b>>11] = true
		}
	}
	if bounds.Dx() != 1280 || bounds.Dy() != 2600 || len(colors) < 20 {
		t.Errorf("screenshot %v with %d colours looks blank", bounds, len(colors))
	}
	// Keep a copy at a stable path for review, whatever -artifacts says.
	stable := filepath.Join(os.TempDir(), "migrate-test-artifacts", "plan.png")
	if err := os.MkdirAll(filepath.Dir(stable), 0o755); err == nil {
		if data, err := os.ReadFile(shot); err == nil && os.WriteFile(stable, data, 0o644) == nil {
			html := filepath.Join(filepath.Dir(stable), "plan.html")
			os.WriteFile(html, page, 0o644)
			t.Logf("HTML report screenshot: %s (also %s, report %s; go test -artifacts keeps the first)", shot, stable, html)
		}
	}
}
