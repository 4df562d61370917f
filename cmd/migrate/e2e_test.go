package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

const bookstoreMapping = "../../testdata/bookstore.yaml"

// bookstore is a seeded source database migrated into its own table.
type bookstore struct {
	pg, endpoint, table string
	conn                *pgx.Conn
	ddb                 *dynamodb.Client
	output              string
}

// migrateBookstore applies the schema, seeds it and runs the real CLI
// in-process against Postgres and DynamoDB Local.
func migrateBookstore(t *testing.T, scale int) *bookstore {
	t.Helper()
	ctx := t.Context()
	b := &bookstore{
		pg:       migratetest.PostgresURL(t),
		endpoint: migratetest.DynamoDBEndpoint(t),
		table:    migratetest.TableName(t, "bookstore"),
	}
	if err := sqlschema.Up(ctx, b.pg); err != nil {
		t.Fatalf("schema up: %v", err)
	}
	conn, err := pgx.Connect(ctx, b.pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	b.conn = conn
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: scale, Seed: 7}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	b.ddb = migratetest.DynamoDBClient(t, b.endpoint)
	out, errOut, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", b.pg,
		"--endpoint", b.endpoint, "--table", b.table, "--create-table")
	if code != 0 {
		t.Fatalf("migrate run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("migrate run:\n%s", out)
	b.output = out
	return b
}

func runCLI(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = execute(t.Context(), args, &o, &e)
	return o.String(), e.String(), code
}

func (b *bookstore) get(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := b.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      &b.table,
		Key:            map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem %s %s: %v", pk, sk, err)
	}
	return out.Item
}

// query runs one Query (all pages) with a key condition.
func (b *bookstore) query(t *testing.T, index, cond string, vals map[string]types.AttributeValue, forward bool) []map[string]types.AttributeValue {
	t.Helper()
	in := &dynamodb.QueryInput{
		TableName:                 &b.table,
		KeyConditionExpression:    &cond,
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(forward),
	}
	if index != "" {
		in.IndexName = &index
	}
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(b.ddb, in)
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("Query %s: %v", cond, err)
		}
		items = append(items, page.Items...)
	}
	return items
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// sqlStrings runs a query returning one text column.
func (b *bookstore) sqlStrings(t *testing.T, q string, args ...any) []string {
	t.Helper()
	rows, err := b.conn.Query(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func strAttr(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrsOf(items []map[string]types.AttributeValue, name string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		switch v := it[name].(type) {
		case *types.AttributeValueMemberS:
			out[i] = v.Value
		case *types.AttributeValueMemberN:
			out[i] = v.Value
		}
	}
	return out
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %d: %v\nwant %d: %v", what, len(got), got, len(want), want)
	}
}

// numEqual compares a DynamoDB number with PostgreSQL numeric text exactly.
func numEqual(av types.AttributeValue, pgText string) bool {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	a, ok1 := new(big.Rat).SetString(n.Value)
	b, ok2 := new(big.Rat).SetString(pgText)
	return ok1 && ok2 && a.Cmp(b) == 0
}

const tsFormat = `to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

func ts(col string) string { return fmt.Sprintf(tsFormat, col) }

// TestBookstoreEndToEnd migrates the seeded bookstore with the mapping that
// uses every rule, then checks items attribute by attribute against the
// source rows and answers each access pattern with DynamoDB calls, comparing
// with the same question asked in SQL.
func TestBookstoreEndToEnd(t *testing.T) {
	b := migrateBookstore(t, 60)
	if !strings.Contains(b.output, "shards for Order GSI2") {
		t.Errorf("run output does not report the computed shard count:\n%s", b.output)
	}
	ctx := t.Context()

	t.Run("every source row arrived", func(t *testing.T) {
		counts := map[string]int{}
		p := dynamodb.NewScanPaginator(b.ddb, &dynamodb.ScanInput{TableName: &b.table})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				counts[strAttr(it, "type")]++
			}
		}
		want := map[string]string{
			"Customer": "customers", "Order": "orders", "OrderSummary": "orders",
			"OrderLine": "order_items", "Author": "authors", "Book": "books",
		}
		for entity, table := range want {
			var n int
			if err := b.conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if counts[entity] != n || n == 0 {
				t.Errorf("%s items = %d, source %s rows = %d", entity, counts[entity], table, n)
			}
		}
	})

	t.Run("customer profile with addresses (GetItem), exact types", func(t *testing.T) {
		rows, err := b.conn.Query(ctx, `SELECT customer_id, name, email, phone, `+ts("created_at")+` FROM customers ORDER BY customer_id`)
		if err != nil {
			t.Fatal(err)
		}
		type cust struct {
			id           int64
			name         string
			email, phone *string
			created      string
		}
		custs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cust, error) {
			var c cust
			err := r.Scan(&c.id, &c.name, &c.email, &c.phone, &c.created)
			return c, err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range custs {
			item := b.get(t, fmt.Sprintf("CUSTOMER#%d", c.id), "PROFILE")
			if item == nil {
				t.Errorf("customer %d: no item", c.id)
				continue
			}
			if !numEqual(item["customerId"], strconv.FormatInt(c.id, 10)) {
				t.Errorf("customer %d: customerId = %#v", c.id, item["customerId"])
			}
			if strAttr(item, "name") != c.name || strAttr(item, "since") != c.created {
				t.Errorf("customer %d: name %q since %q, want %q %q", c.id, strAttr(item, "name"), strAttr(item, "since"), c.name, c.created)
			}
			for attr, v := range map[string]*string{"email": c.email, "phone": c.phone} {
				_, present := item[attr]
				if v == nil && present || v != nil && strAttr(item, attr) != *v {
					t.Errorf("customer %d: %s = %#v, want %v", c.id, attr, item[attr], v)
				}
			}
			_, inGSI := item["GSI1PK"]
			if inGSI != (c.email != nil) {
				t.Errorf("customer %d: in GSI1 = %v with email %v (sparse index)", c.id, inGSI, c.email)
			}
			// addresses: a map keyed by label, equal to the source rows
			want := b.sqlStrings(t, `SELECT label || '|' || line1 || '|' || coalesce(line2, '<null>') || '|' || city || '|' || postal_code || '|' || country
				FROM addresses WHERE customer_id = $1 ORDER BY label`, c.id)
			var got []string
			if m, ok := item["addresses"].(*types.AttributeValueMemberM); ok {
				for label, av := range m.Value {
					a := av.(*types.AttributeValueMemberM).Value
					line2 := "<null>"
					if _, ok := a["line2"]; ok {
						line2 = strAttr(a, "line2")
					}
					got = append(got, strings.Join([]string{label, strAttr(a, "line1"), line2, strAttr(a, "city"), strAttr(a, "postal_code"), strAttr(a, "country")}, "|"))
				}
			} else {
				t.Errorf("customer %d: addresses is %T", c.id, item["addresses"])
			}
			sort.Strings(got)
			equalStrings(t, fmt.Sprintf("customer %d addresses", c.id), got, want)
		}
	})

	t.Run("books: numeric, date, text[] set, jsonb exact, copied author", func(t *testing.T) {
		rows, err := b.conn.Query(ctx, `SELECT b.book_id, b.title, b.price::text, coalesce(b.published::text, ''), b.tags, coalesce(b.metadata::text, ''), a.name, coalesce(a.birth_year::text, '')
			FROM books b JOIN authors a USING (author_id) ORDER BY book_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			var title, price, published, meta, author, born string
			var tags []string
			if err := rows.Scan(&id, &title, &price, &published, &tags, &meta, &author, &born); err != nil {
				t.Fatal(err)
			}
			n++
			item := b.get(t, fmt.Sprintf("BOOK#%d", id), "BOOK")
			if strAttr(item, "title") != title || !numEqual(item["price"], price) || strAttr(item, "authorName") != author {
				t.Errorf("book %d: title %q price %#v author %q; want %q %s %q", id, strAttr(item, "title"), item["price"], strAttr(item, "authorName"), title, price, author)
			}
			if (born == "") != (item["authorBorn"] == nil) || born != "" && !numEqual(item["authorBorn"], born) {
				t.Errorf("book %d: authorBorn %#v, want %q", id, item["authorBorn"], born)
			}
			if strAttr(item, "published") != published {
				t.Errorf("book %d: published %q, want %q", id, strAttr(item, "published"), published)
			}
			// tags as a string set; an empty array leaves the attribute out
			wantTags := map[string]bool{}
			for _, tg := range tags {
				wantTags[tg] = true
			}
			ss, _ := item["tags"].(*types.AttributeValueMemberSS)
			if len(wantTags) == 0 && item["tags"] != nil || len(wantTags) > 0 && (ss == nil || len(ss.Value) != len(wantTags)) {
				t.Errorf("book %d: tags %#v, want %v", id, item["tags"], tags)
			}
			if ss != nil {
				for _, v := range ss.Value {
					if !wantTags[v] {
						t.Errorf("book %d: tag %q not in source", id, v)
					}
				}
			}
			if meta == "" {
				if item["metadata"] != nil {
					t.Errorf("book %d: metadata present for NULL", id)
				}
			} else if err := sameJSON(item["metadata"], meta); err != nil {
				t.Errorf("book %d: metadata: %v", id, err)
			}
		}
		if n == 0 {
			t.Fatal("no books in the source")
		}
	})

	t.Run("customer with all orders (one Query)", func(t *testing.T) {
		cid := b.sqlStrings(t, `SELECT customer_id::text AS id FROM orders GROUP BY customer_id ORDER BY count(*) DESC, customer_id LIMIT 1`)[0]
		items := b.query(t, "", "PK = :pk", map[string]types.AttributeValue{":pk": s("CUSTOMER#" + cid)}, true)
		var types_ []string
		for _, it := range items {
			types_ = append(types_, strAttr(it, "type"))
		}
		wantOrders := b.sqlStrings(t, `SELECT order_id::text AS id FROM orders WHERE customer_id = $1 ORDER BY placed_at, order_id`, mustInt(cid))
		var gotOrders []string
		for _, it := range items {
			if strAttr(it, "type") == "Order" {
				gotOrders = append(gotOrders, it["orderId"].(*types.AttributeValueMemberN).Value)
			}
		}
		equalStrings(t, "orders of customer "+cid+" in time order", gotOrders, wantOrders)
		if len(items) != len(wantOrders)+1 || strAttr(items[len(items)-1], "type") != "Customer" {
			t.Errorf("want the orders then the profile in one partition, got types %v", types_)
		}
	})

	t.Run("a customer's orders in a date range (key condition on SK)", func(t *testing.T) {
		r := b.sqlStrings(t, `SELECT customer_id || '|' || `+ts("min(placed_at)")+` || '|' || `+ts("max(placed_at)")+`
			FROM orders GROUP BY customer_id HAVING count(*) >= 4 ORDER BY count(*) DESC, customer_id LIMIT 1`)[0]
		parts := strings.Split(r, "|")
		cid := parts[0]
		// the middle of the customer's range
		from, to := parts[1][:7], parts[2][:7] // months
		items := b.query(t, "", "PK = :pk AND SK BETWEEN :a AND :b", map[string]types.AttributeValue{
			":pk": s("CUSTOMER#" + cid), ":a": s("ORDER#" + from), ":b": s("ORDER#" + to + "~"),
		}, true)
		want := b.sqlStrings(t, `SELECT order_id::text AS id FROM orders WHERE customer_id = $1
			AND placed_at >= ($2 || '-01')::timestamptz AND placed_at < (($3 || '-01')::date + interval '1 month') ORDER BY placed_at, order_id`, mustInt(cid), from, to)
		equalStrings(t, "orders in range", attrsOf(items, "orderId"), want)
		if len(want) == 0 {
			t.Fatal("empty range: the check proves nothing")
		}
	})

	t.Run("an order with its lines (one Query)", func(t *testing.T) {
		oid := b.sqlStrings(t, `SELECT order_id::text AS id FROM order_items GROUP BY order_id ORDER BY count(*) DESC, order_id LIMIT 1`)[0]
		items := b.query(t, "", "PK = :pk", map[string]types.AttributeValue{":pk": s("ORDER#" + oid)}, true)
		want := b.sqlStrings(t, `SELECT oi.book_id || '|' || oi.quantity || '|' || oi.unit_price || '|' || bk.title || '|' || a.name
			FROM order_items oi JOIN books bk USING (book_id) JOIN authors a USING (author_id) WHERE order_id = $1 ORDER BY book_id`, mustInt(oid))
		var got []string
		header := 0
		for _, it := range items {
			switch strAttr(it, "type") {
			case "OrderLine":
				price := it["unitPrice"].(*types.AttributeValueMemberN).Value
				got = append(got, strings.Join([]string{it["bookId"].(*types.AttributeValueMemberN).Value, it["quantity"].(*types.AttributeValueMemberN).Value, price, strAttr(it, "title"), strAttr(it, "authorName")}, "|"))
			case "OrderSummary":
				header++
			}
		}
		if header != 1 {
			t.Errorf("order %s: %d summary items, want 1", oid, header)
		}
		if len(got) != len(want) {
			t.Fatalf("order %s lines:\n got %v\nwant %v", oid, got, want)
		}
		for i := range want {
			g, w := strings.Split(got[i], "|"), strings.Split(want[i], "|")
			if g[0] != w[0] || g[1] != w[1] || !numEqual(&types.AttributeValueMemberN{Value: g[2]}, w[2]) || g[3] != w[3] || g[4] != w[4] {
				t.Errorf("order %s line %d: got %v want %v", oid, i, g, w)
			}
		}
	})

	t.Run("all orders that contain a given book (GSI1)", func(t *testing.T) {
		bid := b.sqlStrings(t, `SELECT book_id::text AS id FROM order_items GROUP BY book_id ORDER BY count(*) DESC, book_id LIMIT 1`)[0]
		items := b.query(t, "GSI1", "GSI1PK = :pk", map[string]types.AttributeValue{":pk": s("BOOK#" + bid)}, true)
		want := b.sqlStrings(t, `SELECT order_id::text AS id FROM order_items WHERE book_id = $1 ORDER BY order_id`, mustInt(bid))
		equalStrings(t, "orders of book "+bid, attrsOf(items, "orderId"), want)
	})

	t.Run("the query command: table and index, prefix, limit, projection", func(t *testing.T) {
		cid := b.sqlStrings(t, `SELECT customer_id::text AS id FROM orders GROUP BY customer_id ORDER BY count(*) DESC, customer_id LIMIT 1`)[0]
		nOrders := len(b.sqlStrings(t, `SELECT order_id::text AS id FROM orders WHERE customer_id = $1`, mustInt(cid)))
		out, errOut, code := runCLI(t, "query", "--endpoint", b.endpoint, "--table", b.table, "--pk", "CUSTOMER#"+cid,
			"--sk-prefix", "ORDER#", "--attributes", "SK,orderId")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != nOrders || !strings.Contains(errOut, fmt.Sprintf("%d items", nOrders)) {
			t.Fatalf("query exited %d with %d lines, want %d orders\n%s\n%s", code, len(lines), nOrders, out, errOut)
		}
		var first map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first) != 2 || !strings.HasPrefix(fmt.Sprint(first["SK"]), "ORDER#") {
			t.Errorf("projected item %s (%v)", lines[0], err)
		}
		out, _, code = runCLI(t, "query", "--endpoint", b.endpoint, "--table", b.table, "--index", "GSI1", "--pk", "AUTHOR#1", "--desc", "--limit", "2")
		if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 {
			t.Errorf("index query exited %d:\n%s", code, out)
		}
		if _, errOut, code := runCLI(t, "query", "--endpoint", b.endpoint, "--table", b.table, "--index", "GSI9", "--pk", "X"); code != exitUsage || !strings.Contains(errOut, "no index GSI9") {
			t.Errorf("unknown index: exit %d\n%s", code, errOut)
		}
	})

	t.Run("a customer by email (GSI1)", func(t *testing.T) {
		emails := b.sqlStrings(t, `SELECT email FROM customers WHERE email IS NOT NULL ORDER BY customer_id LIMIT 5`)
		for _, email := range emails {
			items := b.query(t, "GSI1", "GSI1PK = :pk", map[string]types.AttributeValue{":pk": s("EMAIL#" + email)}, true)
			want := b.sqlStrings(t, `SELECT customer_id::text AS id FROM customers WHERE email = $1`, email)
			equalStrings(t, "customer by "+email, attrsOf(items, "customerId"), want)
		}
	})

	t.Run("books of an author newest first (GSI1, descending)", func(t *testing.T) {
		aid := b.sqlStrings(t, `SELECT author_id::text FROM books GROUP BY author_id ORDER BY count(*) DESC, author_id LIMIT 1`)[0]
		items := b.query(t, "GSI1", "GSI1PK = :pk AND begins_with(GSI1SK, :p)", map[string]types.AttributeValue{":pk": s("AUTHOR#" + aid), ":p": s("BOOK#")}, false)
		want := b.sqlStrings(t, `SELECT book_id::text AS id FROM books WHERE author_id = $1 AND published IS NOT NULL ORDER BY published DESC, book_id DESC`, mustInt(aid))
		equalStrings(t, "books of author "+aid, attrsOf(items, "bookId"), want)
		if len(want) < 2 {
			t.Fatalf("author %s has %d dated books: ordering is not tested", aid, len(want))
		}
	})

	t.Run("OPEN orders in a date range across all shards (parallel Queries, merged)", func(t *testing.T) {
		var shards int
		for _, line := range strings.Split(b.output, "\n") {
			if i := strings.Index(line, "padded to "); i >= 0 && strings.Contains(line, "Order GSI2") {
				fmt.Sscanf(line[i+len("padded to "):], "%d", &shards)
			}
		}
		if shards < 1 {
			t.Fatalf("no shard count in the run output:\n%s", b.output)
		}
		from, to := "2023-01-01T00:00:00.000000Z", "2024-12-31T23:59:59.999999Z"
		var mu sync.Mutex
		var wg sync.WaitGroup
		var merged []map[string]types.AttributeValue
		for n := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				items := b.query(t, "GSI2", "GSI2PK = :pk AND GSI2SK BETWEEN :a AND :b", map[string]types.AttributeValue{
					":pk": s(fmt.Sprintf("STATUS#OPEN#%d", n)), ":a": s(from), ":b": s(to + "~"),
				}, true)
				mu.Lock()
				merged = append(merged, items...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		sort.Slice(merged, func(i, j int) bool { return strAttr(merged[i], "GSI2SK") < strAttr(merged[j], "GSI2SK") })
		want := b.sqlStrings(t, `SELECT order_id::text AS id FROM orders WHERE status = 'OPEN'
			AND placed_at BETWEEN $1::timestamptz AND $2::timestamptz ORDER BY placed_at, order_id`, from, to)
		if len(want) == 0 {
			t.Fatal("no OPEN orders in range: the check proves nothing")
		}
		equalStrings(t, "OPEN orders", attrsOf(merged, "orderId"), want)
	})

	t.Run("the query command with the mapping: every shard, merged by sort key", func(t *testing.T) {
		want := b.sqlStrings(t, `SELECT order_id::text AS id FROM orders WHERE status = 'OPEN' ORDER BY placed_at DESC, order_id DESC LIMIT 25`)
		if len(want) < 2 {
			t.Fatal("too few OPEN orders: the check proves nothing")
		}
		out, errOut, code := runCLI(t, "query", bookstoreMapping, "--endpoint", b.endpoint, "--table", b.table,
			"--index", "GSI2", "--pk", "STATUS#OPEN", "--desc", "--limit", "25", "--output", "dynamodb-json")
		if code != 0 {
			t.Fatalf("query exited %d\n%s", code, errOut)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var item map[string]map[string]any
			if err := json.Unmarshal([]byte(line), &item); err != nil || item["orderId"]["N"] == nil {
				t.Fatalf("not a typed item: %s (%v)", line, err)
			}
			got = append(got, fmt.Sprint(item["orderId"]["N"]))
		}
		equalStrings(t, "OPEN orders, newest first, over every shard", got, want)
		// Another table's state file is refused: its shard counts are not
		// this table's.
		st, err := checkpoint.Load(filepath.Join(engine.DefaultStateDir, b.table+".state.json"))
		if err != nil {
			t.Fatalf("the run's state file: %v", err)
		}
		st.Table = "another-table"
		other := filepath.Join(t.TempDir(), "other.state.json")
		if err := checkpoint.Save(other, st); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runCLI(t, "query", bookstoreMapping, "--endpoint", b.endpoint, "--table", b.table, "--state", other,
			"--index", "GSI2", "--pk", "STATUS#OPEN"); code != exitUsage || !strings.Contains(errOut, "is for table another-table, not "+b.table) {
			t.Errorf("query with another table's state file: exit %d, want %d\n%s", code, exitUsage, errOut)
		}
		if _, errOut, code := runCLI(t, "query", bookstoreMapping, "--endpoint", b.endpoint, "--table", b.table, "--index", "GSI7", "--pk", "X"); code != exitUsage || !strings.Contains(errOut, "its indexes: GSI1, GSI2") {
			t.Errorf("unknown index with a mapping: exit %d\n%s", code, errOut)
		}
	})
}

func mustInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// sameJSON compares a DynamoDB value with JSON text: objects as maps, arrays
// as lists, numbers exactly.
func sameJSON(av types.AttributeValue, text string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return cmpJSON("$", av, v)
}

func cmpJSON(path string, av types.AttributeValue, v any) error {
	switch v := v.(type) {
	case nil:
		if _, ok := av.(*types.AttributeValueMemberNULL); !ok {
			return fmt.Errorf("%s: want NULL, got %#v", path, av)
		}
	case bool:
		if b, ok := av.(*types.AttributeValueMemberBOOL); !ok || b.Value != v {
			return fmt.Errorf("%s: want %v, got %#v", path, v, av)
		}
	case string:
		if x, ok := av.(*types.AttributeValueMemberS); !ok || x.Value != v {
			return fmt.Errorf("%s: want %q, got %#v", path, v, av)
		}
	case json.Number:
		if !numEqual(av, v.String()) {
			return fmt.Errorf("%s: want %s exactly, got %#v", path, v, av)
		}
	case []any:
		l, ok := av.(*types.AttributeValueMemberL)
		if !ok || len(l.Value) != len(v) {
			return fmt.Errorf("%s: want list of %d, got %#v", path, len(v), av)
		}
		for i := range v {
			if err := cmpJSON(fmt.Sprintf("%s[%d]", path, i), l.Value[i], v[i]); err != nil {
				return err
			}
		}
	case map[string]any:
		m, ok := av.(*types.AttributeValueMemberM)
		if !ok || len(m.Value) != len(v) {
			return fmt.Errorf("%s: want map of %d, got %#v", path, len(v), av)
		}
		for k := range v {
			if err := cmpJSON(path+"."+k, m.Value[k], v[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
