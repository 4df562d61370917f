package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
	"github.com/pgdynamo/migrate/transform"
)

// This file is the yardstick of the throughput benchmarks: the script a
// developer writes in an afternoon to move the sample bookstore into its
// single-table design with pgx and aws-sdk-go-v2, with no mapping file, no
// checks, no checkpoints and no retries beyond re-sending
// UnprocessedItems. It runs the same queries the tool runs for
// testdata/bookstore.yaml and builds the same items by hand
// (TestBaselineSameItems compares them with the tool's), and writes them
// with 8 goroutines calling BatchWriteItem, 25 items a call (the
// benchmarks set another number to compare like with like: see
// benchCalls).

// baselineQueries are the tool's queries for testdata/bookstore.yaml, in
// the tool's order, as `migrate run -v` logs them.
var baselineQueries = []string{
	`SELECT t."customer_id"::int8, t."email"::text, t."name"::text, t."phone"::text, t."created_at", (SELECT coalesce(json_agg(json_build_array(x.c0, x.c1, x.c2, x.c3, x.c4, x.c5, x.c6)), '[]')::text FROM (SELECT e0."address_id" AS c0, e0."line1"::text AS c1, e0."line2"::text AS c2, e0."city"::text AS c3, e0."postal_code"::text AS c4, e0."country"::text AS c5, e0."label"::text AS c6 FROM "public"."addresses" AS e0 WHERE e0."customer_id" = t."customer_id" ORDER BY e0."address_id" LIMIT 21) AS x) FROM "public"."customers" AS t ORDER BY t."customer_id"`,
	`SELECT t."order_id"::int8, t."customer_id"::int8, t."placed_at", t."status"::text, t."total"::numeric, j0."city"::text, j0."country"::text FROM "public"."orders" AS t LEFT JOIN "public"."addresses" AS j0 ON j0."address_id" = t."shipping_address_id" ORDER BY t."order_id"`,
	`SELECT t."order_id"::int8, t."book_id"::int8, t."quantity"::int8, t."unit_price"::numeric, j0."title"::text, j1."name"::text FROM "public"."order_items" AS t LEFT JOIN "public"."books" AS j0 ON j0."book_id" = t."book_id" LEFT JOIN "public"."authors" AS j1 ON j1."author_id" = j0."author_id" ORDER BY t."order_id", t."book_id"`,
	`SELECT t."author_id"::int8, t."name"::text, t."birth_year"::int8, t."country"::text FROM "public"."authors" AS t ORDER BY t."author_id"`,
	`SELECT t."book_id"::int8, t."author_id"::int8, t."published", t."isbn"::text, t."title"::text, t."price"::numeric, t."tags"::text[], t."metadata"::text, j0."name"::text, j0."birth_year"::int8 FROM "public"."books" AS t LEFT JOIN "public"."authors" AS j0 ON j0."author_id" = t."author_id" ORDER BY t."book_id"`,
}

// baselineShards is the GSI2 shard count of orders; the tool computes it
// ("count: auto") and prints it, a script hard-codes it.
const baselineShards = 14

type avmap = map[string]types.AttributeValue

func blS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func blN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func blF(v float64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatFloat(v, 'f', -1, 64)}
}
func blTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }
func blPad(v int64) string      { return fmt.Sprintf("%012d", v) }

func blShard(v int64) string {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatInt(v, 10)))
	return strconv.FormatUint(h.Sum64()%baselineShards, 10)
}

// baselineItems reads the bookstore in one snapshot and calls emit with
// each item, in the tool's order.
func baselineItems(ctx context.Context, pg string, emit func(avmap) error) error {
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	each := func(q string, row func(pgx.Rows) error) error {
		rows, err := tx.Query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}

	err = each(baselineQueries[0], func(rows pgx.Rows) error {
		var id int64
		var email, phone *string
		var name, addrJSON string
		var created time.Time
		if err := rows.Scan(&id, &email, &name, &phone, &created, &addrJSON); err != nil {
			return err
		}
		var addrs [][]any
		dec := json.NewDecoder(strings.NewReader(addrJSON))
		dec.UseNumber()
		if err := dec.Decode(&addrs); err != nil {
			return err
		}
		am := avmap{}
		for _, a := range addrs {
			m := avmap{"address_id": &types.AttributeValueMemberN{Value: a[0].(json.Number).String()}}
			for i, name := range []string{"", "line1", "line2", "city", "postal_code", "country"} {
				if v, ok := a[i].(string); ok && i > 0 {
					m[name] = blS(v)
				}
			}
			am[a[6].(string)] = &types.AttributeValueMemberM{Value: m}
		}
		it := avmap{
			"PK": blS("CUSTOMER#" + strconv.FormatInt(id, 10)), "SK": blS("PROFILE"), "type": blS("Customer"),
			"customerId": blN(id), "name": blS(name), "since": blS(blTime(created)),
			"addresses": &types.AttributeValueMemberM{Value: am},
		}
		if email != nil {
			it["email"] = blS(*email)
			it["GSI1PK"], it["GSI1SK"] = blS("EMAIL#"+*email), blS("CUSTOMER")
		}
		if phone != nil {
			it["phone"] = blS(*phone)
		}
		return emit(it)
	})
	if err != nil {
		return fmt.Errorf("customers: %w", err)
	}

	err = each(baselineQueries[1], func(rows pgx.Rows) error {
		var id, customer int64
		var placed time.Time
		var status string
		var total float64
		var city, country *string
		if err := rows.Scan(&id, &customer, &placed, &status, &total, &city, &country); err != nil {
			return err
		}
		order := avmap{
			"PK": blS("CUSTOMER#" + strconv.FormatInt(customer, 10)), "SK": blS("ORDER#" + blTime(placed) + "#" + blPad(id)), "type": blS("Order"),
			"orderId": blN(id), "status": blS(status), "placedAt": blS(blTime(placed)), "total": blF(total),
			"GSI2PK": blS("STATUS#" + status + "#" + blShard(id)), "GSI2SK": blS(blTime(placed) + "#" + blPad(id)),
		}
		if city != nil {
			order["shipCity"] = blS(*city)
		}
		if country != nil {
			order["shipCountry"] = blS(*country)
		}
		if err := emit(order); err != nil {
			return err
		}
		return emit(avmap{
			"PK": blS("ORDER#" + strconv.FormatInt(id, 10)), "SK": blS("ORDER"), "type": blS("OrderSummary"),
			"customerId": blN(customer), "status": blS(status), "placedAt": blS(blTime(placed)), "total": blF(total),
		})
	})
	if err != nil {
		return fmt.Errorf("orders: %w", err)
	}

	err = each(baselineQueries[2], func(rows pgx.Rows) error {
		var order, book, quantity int64
		var price float64
		var title, author *string
		if err := rows.Scan(&order, &book, &quantity, &price, &title, &author); err != nil {
			return err
		}
		it := avmap{
			"PK": blS("ORDER#" + strconv.FormatInt(order, 10)), "SK": blS("BOOK#" + blPad(book)), "type": blS("OrderLine"),
			"orderId": blN(order), "bookId": blN(book), "quantity": blN(quantity), "unitPrice": blF(price),
			"GSI1PK": blS("BOOK#" + strconv.FormatInt(book, 10)), "GSI1SK": blS("ORDER#" + blPad(order)),
		}
		if title != nil {
			it["title"] = blS(*title)
		}
		if author != nil {
			it["authorName"] = blS(*author)
		}
		return emit(it)
	})
	if err != nil {
		return fmt.Errorf("order_items: %w", err)
	}

	err = each(baselineQueries[3], func(rows pgx.Rows) error {
		var id int64
		var name string
		var born *int64
		var country *string
		if err := rows.Scan(&id, &name, &born, &country); err != nil {
			return err
		}
		it := avmap{
			"PK": blS("AUTHOR#" + strconv.FormatInt(id, 10)), "SK": blS("PROFILE"), "type": blS("Author"),
			"author_id": blN(id), "name": blS(name),
		}
		if born != nil {
			it["birth_year"] = blN(*born)
		}
		if country != nil {
			it["country"] = blS(*country)
		}
		return emit(it)
	})
	if err != nil {
		return fmt.Errorf("authors: %w", err)
	}

	err = each(baselineQueries[4], func(rows pgx.Rows) error {
		var id, author int64
		var published *time.Time
		var isbn, title string
		var price float64
		var tags []string
		var metadata, authorName *string
		var born *int64
		if err := rows.Scan(&id, &author, &published, &isbn, &title, &price, &tags, &metadata, &authorName, &born); err != nil {
			return err
		}
		it := avmap{
			"PK": blS("BOOK#" + strconv.FormatInt(id, 10)), "SK": blS("BOOK"), "type": blS("Book"),
			"bookId": blN(id), "isbn": blS(isbn), "title": blS(title), "price": blF(price),
		}
		if published != nil {
			it["published"] = blS(published.Format("2006-01-02"))
			it["GSI1PK"], it["GSI1SK"] = blS("AUTHOR#"+strconv.FormatInt(author, 10)), blS("BOOK#"+published.Format("2006-01-02")+"#"+blPad(id))
		}
		if len(tags) > 0 {
			set := map[string]bool{}
			var ss []string
			for _, t := range tags {
				if !set[t] {
					set[t] = true
					ss = append(ss, t)
				}
			}
			it["tags"] = &types.AttributeValueMemberSS{Value: ss}
		}
		if metadata != nil {
			dec := json.NewDecoder(strings.NewReader(*metadata))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				return err
			}
			it["metadata"] = jsonAV(v)
		}
		if authorName != nil {
			it["authorName"] = blS(*authorName)
		}
		if born != nil {
			it["authorBorn"] = blN(*born)
		}
		return emit(it)
	})
	if err != nil {
		return fmt.Errorf("books: %w", err)
	}
	return nil
}

func jsonAV(v any) types.AttributeValue {
	switch v := v.(type) {
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}
	case string:
		return blS(v)
	case json.Number:
		return &types.AttributeValueMemberN{Value: v.String()}
	case []any:
		l := make([]types.AttributeValue, len(v))
		for i, e := range v {
			l[i] = jsonAV(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case map[string]any:
		m := make(avmap, len(v))
		for k, e := range v {
			m[k] = jsonAV(e)
		}
		return &types.AttributeValueMemberM{Value: m}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

// baselineClient is the SDK client with its defaults, as a script makes it.
func baselineClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }), nil
}

// baselineWrite writes the items it receives with the given number of
// goroutines, 25 items a BatchWriteItem call, re-sending UnprocessedItems.
func baselineWrite(ctx context.Context, client *dynamodb.Client, table string, goroutines int, items <-chan avmap) (int64, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var written int64
	var firstErr error
	for range goroutines {
		wg.Go(func() {
			batch := make([]types.WriteRequest, 0, 25)
			flush := func() error {
				reqs := map[string][]types.WriteRequest{table: batch}
				for len(reqs) > 0 {
					out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: reqs})
					if err != nil {
						return err
					}
					reqs = out.UnprocessedItems
				}
				mu.Lock()
				written += int64(len(batch))
				mu.Unlock()
				batch = make([]types.WriteRequest, 0, 25)
				return nil
			}
			for it := range items {
				batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
				if len(batch) == 25 {
					if err := flush(); err != nil {
						mu.Lock()
						firstErr = cmpErr(firstErr, err)
						mu.Unlock()
						return
					}
				}
			}
			if len(batch) > 0 {
				if err := flush(); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return written, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// runBaseline is the whole script: read, build, write with the given
// number of goroutines.
func runBaseline(ctx context.Context, pg, endpoint, table string, goroutines int) (int64, error) {
	client, err := baselineClient(ctx, endpoint)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan avmap, 400)
	var readErr error
	var reader sync.WaitGroup
	reader.Go(func() {
		defer close(items)
		readErr = baselineItems(ctx, pg, func(it avmap) error {
			select {
			case items <- it:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if readErr != nil {
			cancel()
		}
	})
	written, err := baselineWrite(ctx, client, table, goroutines, items)
	cancel()
	reader.Wait()
	return written, errors.Join(readErr, err)
}

// TestBaselineSameItems checks that the baseline script writes exactly the
// items the tool writes (numbers compared as DynamoDB compares them), so
// that the benchmarks compare the same work.
func TestBaselineSameItems(t *testing.T) {
	pg := migratetest.PostgresURL(t)
	ctx := t.Context()
	if err := sqlschema.Up(ctx, pg); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := seed.Load(ctx, conn, seed.Config{Scale: 300, Seed: 1}); err != nil {
		t.Fatal(err)
	}

	toolSink, baseSink := &recordingSink{}, &recordingSink{}
	tool, base := httptest.NewServer(toolSink), httptest.NewServer(baseSink)
	defer tool.Close()
	defer base.Close()
	out, errOut, code := runCLI(t, "run", "--mapping", bookstoreMapping, "--pg", pg, "--endpoint", tool.URL,
		"--table", benchTable, "--quiet", "--state", filepath.Join(t.TempDir(), "state.json"))
	if code != 0 {
		t.Fatalf("migrate run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, fmt.Sprintf("padded to %d", baselineShards)) {
		t.Fatalf("the tool did not compute %d shards for GSI2, as the baseline assumes:\n%s", baselineShards, out)
	}
	n, err := runBaseline(ctx, pg, base.URL, benchTable, 8)
	if err != nil {
		t.Fatal(err)
	}
	got, want := baseSink.sorted(t), toolSink.sorted(t)
	if n != int64(len(want)) || len(got) != len(want) {
		t.Fatalf("the baseline wrote %d items (%d received), the tool %d", n, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("item %d differs:\nbaseline: %s\ntool:     %s", i, got[i], want[i])
		}
	}
}

// recordingSink is nullDynamoDB that also keeps every item written, in
// canonical JSON.
type recordingSink struct {
	mu    sync.Mutex
	items []string
	errs  []error
}

func (s *recordingSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
		var in struct {
			RequestItems map[string][]struct {
				PutRequest struct{ Item map[string]any }
			}
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		err := dec.Decode(&in)
		s.mu.Lock()
		if err != nil {
			s.errs = append(s.errs, err)
		}
		for _, reqs := range in.RequestItems {
			for _, req := range reqs {
				b, err := json.Marshal(canonicalAV(req.PutRequest.Item))
				s.errs = append(s.errs, err)
				s.items = append(s.items, string(b))
			}
		}
		s.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	nullDynamoDB(new(atomic.Int64)).ServeHTTP(w, r)
}

func (s *recordingSink) sorted(t *testing.T) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := errors.Join(s.errs...); err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(s.items)
	slices.Sort(out)
	return out
}

// canonicalAV normalizes decoded DynamoDB JSON: numbers in canonical form
// (DynamoDB stores 19.90 as 19.9), sets sorted; encoding/json sorts map keys.
func canonicalAV(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			switch k {
			case "N":
				n, err := transform.Number(fmt.Sprint(e))
				if err != nil {
					n = "invalid " + fmt.Sprint(e)
				}
				out[k] = n
			case "NS":
				var ns []string
				for _, x := range e.([]any) {
					n, _ := transform.Number(fmt.Sprint(x))
					ns = append(ns, n)
				}
				slices.Sort(ns)
				out[k] = ns
			case "SS":
				var ss []string
				for _, x := range e.([]any) {
					ss = append(ss, x.(string))
				}
				slices.Sort(ss)
				out[k] = ss
			default:
				out[k] = canonicalAV(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canonicalAV(e)
		}
		return out
	}
	return v
}
