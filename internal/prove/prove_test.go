package prove_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	"github.com/pgdynamo/migrate/transform"
)

func TestMain(m *testing.M) { migratetest.Main(m) }

const schemaSQL = `
CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, email text, country text NOT NULL);
CREATE TABLE orders (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers,
  status text NOT NULL, placed_at timestamptz NOT NULL, total numeric(12,2) NOT NULL, discount double precision);
INSERT INTO customers SELECT i, 'Customer ' || i, CASE WHEN i % 4 = 0 THEN NULL ELSE 'C' || i || '@Example.com' END,
  (ARRAY['NO','SE','DK'])[1 + i % 3] FROM generate_series(1, 40) i;
INSERT INTO orders SELECT i, 1 + i % 40, (ARRAY['OPEN','SHIPPED','OPEN','CLOSED'])[1 + i % 4],
  timestamptz '2024-01-01 00:00:00.000001+00' + i * interval '7 hours 3 minutes 0.25 seconds', (i * 7.35 - 300)::numeric(12,2),
  CASE WHEN i % 9 = 0 THEN 'NaN'::float8 WHEN i % 5 = 0 THEN NULL ELSE i / 8.0 END
FROM generate_series(1, 300) i;
`

const mappingYAML = `
table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
  GSI2: { partition: GSI2PK, sort: GSI2SK, projection: KEYS_ONLY }
  LSI1: { local: true, sort: { name: LSI1SK, type: N }, projection: { include: [orderId, total] } }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    attributes: { customerId: customer_id, name: name, email: email }
    index:
      GSI1: { pk: "EMAIL#{email|lower}", sk: CUSTOMER }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id:8}" }
    attributes: { orderId: order_id, status: status, placedAt: placed_at, total: total, discount: { column: discount, as: string } }
    copy:
      - from: customers
        join: { customer_id: customer_id }
        into: customer
        attributes: { country: country }
    index:
      GSI2:
        pk: "STATUS#{status}#{shard}"
        sk: "{total|decimal:6.2}#{order_id:8}"
        shard: { count: 3, by: order_id }
        where: status <> 'CLOSED'
      LSI1: { sk: "{total}" }
accessPatterns:
  biggestOrders:
    description: a customer's five largest orders, from a local index with a number sort key
    params: { id: customers.customer_id }
    query: { index: LSI1, pk: "CUSTOMER#{id}", direction: desc, limit: 5 }
    sql: SELECT order_id AS "orderId", total FROM orders WHERE customer_id = @id ORDER BY total DESC LIMIT 5
  profile:
    description: a customer's profile
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{id}", sk: PROFILE }
    sql: SELECT customer_id AS "customerId", name, email FROM customers WHERE customer_id = @id
  byEmail:
    params: { email: customers.email }
    query: { index: GSI1, pk: "EMAIL#{email|lower}" }
    sql: SELECT customer_id AS "customerId" FROM customers WHERE lower(email) = lower(@email)
  latestOrders:
    description: a customer's three latest orders
    params: { id: customers.customer_id }
    query: { pk: "CUSTOMER#{id}", sk: { begins_with: "ORDER#" }, direction: desc, limit: 3 }
    sql: |
      SELECT order_id AS "orderId", total, placed_at AS "placedAt", discount, 'Order' AS _type
      FROM orders WHERE customer_id = @id ORDER BY placed_at DESC, order_id DESC LIMIT 3
  ordersInRange:
    params: "SELECT customer_id AS id, min(placed_at) AS lo, max(placed_at) AS hi FROM orders GROUP BY customer_id"
    query: { pk: "CUSTOMER#{id}", sk: { between: ["ORDER#{lo}", "ORDER#{hi}~"] } }
    sql: SELECT order_id AS "orderId", status FROM orders WHERE customer_id = @id AND placed_at BETWEEN @lo AND @hi ORDER BY placed_at, order_id
  byStatus:
    params: { status: orders.status }
    query: { index: GSI2, pk: "STATUS#{status}#{shard}", direction: desc }
    sql: SELECT order_id::text AS "SK_order", 'x' AS ignored_never FROM orders WHERE false
`

// shop loads the schema into its own database, migrates it with the
// transform into a DynamoDB Local table, and opens a snapshot.
type shop struct {
	m    *mapping.Mapping
	cat  *mapping.Catalog
	snap *extract.Snapshot
	ddb  *dynamodb.Client
	cfg  load.Config
}

func setup(t *testing.T, yaml string) *shop {
	t.Helper()
	return setupIn(t, "public", yaml)
}

// setupIn is setup with the tables in the given schema.
func setupIn(t *testing.T, schema, yaml string) *shop {
	t.Helper()
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if schema != "public" {
		ddl := "CREATE SCHEMA " + pgx.Identifier{schema}.Sanitize() + "; SET search_path TO " + pgx.Identifier{schema}.Sanitize()
		if _, err := admin.Exec(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctx, schemaSQL); err != nil {
		t.Fatal(err)
	}
	conn, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close(context.Background()) })
	m, err := mapping.Parse("shop.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := snap.Catalog(ctx, []string{schema})
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := migratetest.DynamoDBEndpoint(t)
	ddb := migratetest.DynamoDBClient(t, endpoint)
	cfg := load.Config{Table: migratetest.TableName(t, "shop"), PartitionKey: "PK", SortKey: "SK"}
	for _, ix := range m.Indexes {
		li := load.Index{Name: ix.Name, PartitionKey: ix.PartitionKey, SortKey: ix.SortKey, Local: ix.Local,
			PartitionKeyType: types.ScalarAttributeType(ix.PartitionKeyType), SortKeyType: types.ScalarAttributeType(ix.SortKeyType),
			Projection: types.ProjectionType(ix.Projection.Type)}
		for _, a := range ix.Projection.NonKeyAttributes {
			li.NonKeyAttributes = append(li.NonKeyAttributes, a.Name)
		}
		cfg.Indexes = append(cfg.Indexes, li)
	}
	if err := load.EnsureTable(ctx, ddb, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)})
	})
	for _, src := range plan.Sources {
		for row, err := range snap.Rows(ctx, src.Query) {
			if err != nil {
				t.Fatal(err)
			}
			items, errs := src.Apply(row)
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			for _, it := range items {
				if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cfg.Table), Item: it.Attrs}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return &shop{m: m, cat: cat, snap: snap, ddb: ddb, cfg: cfg}
}

// countingDB counts the calls prove makes: it has no Scan to call.
type countingDB struct {
	prove.DynamoDB
	gets, queries atomic.Int64
}

func (c *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.gets.Add(1)
	return c.DynamoDB.GetItem(ctx, in, opts...)
}

func (c *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries.Add(1)
	return c.DynamoDB.Query(ctx, in, opts...)
}

func TestProve(t *testing.T) {
	// byStatus's SQL is deliberately wrong (it returns nothing), so it is
	// left out of the first run and checked on its own.
	s := setup(t, mappingYAML)
	ctx := t.Context()
	db := &countingDB{DynamoDB: s.ddb}
	cfg := prove.Config{Mapping: s.m, Catalog: s.cat, Table: s.cfg.Table, Samples: 25, ConsistentRead: true,
		Patterns: []string{"profile", "byEmail", "latestOrders", "ordersInRange", "biggestOrders"}}
	res, err := prove.Prove(ctx, s.snap, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if !res.Proven {
		t.Fatalf("not proven:\n%s", text.String())
	}
	for _, p := range res.Patterns {
		if p.Tried < 25 || p.Missing != 3 || p.Items == 0 {
			t.Errorf("%s: tried %d (missing %d), %d items", p.Name, p.Tried, p.Missing, p.Items)
		}
	}
	if db.gets.Load() == 0 || db.queries.Load() == 0 {
		t.Errorf("%d GetItem, %d Query calls", db.gets.Load(), db.queries.Load())
	}

	t.Run("a wrong answer is a difference, with the first one shown", func(t *testing.T) {
		cfg := cfg
		cfg.Patterns = []string{"byStatus"}
		res, err := prove.Prove(ctx, s.snap, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Patterns[0]
		if res.Proven || p.Mismatched == 0 || p.Shards != 3 || len(p.Differences) != 1 ||
			!strings.Contains(p.Differences[0].Message, "rows") {
			t.Fatalf("byStatus: %+v", p)
		}
		var md bytes.Buffer
		if err := res.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "DIFFERS") {
			t.Errorf("markdown: %v\n%s", err, md.String())
		}
	})

	t.Run("a tampered item is found", func(t *testing.T) {
		// Order 288, customer 9's latest, is changed in the table.
		rows, err := s.snap.Query(ctx, `SELECT 'ORDER#' || to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '#00000288' FROM orders WHERE order_id = 288`)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.cfg.Table),
			Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#9"}, "SK": &types.AttributeValueMemberS{Value: sk}},
			UpdateExpression:          aws.String("SET #t = :t"),
			ExpressionAttributeNames:  map[string]string{"#t": "total"},
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: "1.01"}}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := cfg
		cfg.Patterns = []string{"latestOrders"}
		cfg.Samples = 100 // every customer
		res, err := prove.Prove(ctx, s.snap, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Patterns[0]
		if res.Proven || p.Mismatched != 1 || p.Differences[0].Params[0].Value != "9" || !strings.Contains(p.Differences[0].Message, `total is {"N":"1.01"}, SQL says 1816.80`) {
			t.Fatalf("latestOrders after tampering: %+v", p)
		}
		var js bytes.Buffer
		if err := res.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var back prove.Result
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Schema != prove.ResultSchema || back.Patterns[0].Mismatched != 1 {
			t.Errorf("JSON round trip: %v %+v", err, back)
		}
	})
}

// TestProveInSchema: pattern SQL names tables without a schema, as the
// mapping does under schema: hr, and runs with hr first on the search
// path. A pattern whose SQL fails (a misspelled column) fails alone: the
// patterns after it still run in the same snapshot. Once, the first failure
// made every later pattern fail with "current transaction is aborted".
func TestProveInSchema(t *testing.T) {
	yaml := "schema: hr\n" + strings.Replace(mappingYAML, "accessPatterns:\n", `accessPatterns:
  misspelled:
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{id}", sk: PROFILE }
    sql: SELECT customer_id AS "customerId", nmae AS name FROM customers WHERE customer_id = @id
`, 1)
	s := setupIn(t, "hr", yaml)
	cfg := prove.Config{Mapping: s.m, Catalog: s.cat, Table: s.cfg.Table, Samples: 10, ConsistentRead: true,
		Patterns: []string{"misspelled", "profile", "byEmail", "latestOrders", "ordersInRange", "biggestOrders"}}
	res, err := prove.Prove(t.Context(), s.snap, s.ddb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	for _, p := range res.Patterns {
		switch {
		case p.Name == "misspelled":
			if !strings.Contains(p.Error, `column "nmae" does not exist`) {
				t.Errorf("misspelled: error %q, want the missing column named", p.Error)
			}
		case !p.Proven():
			t.Errorf("%s: not proven after a failed pattern: %+v", p.Name, p)
		}
	}
	if len(res.Patterns) != 6 || res.Proven || !res.Failed() {
		t.Errorf("%d patterns, proven %v, failed %v", len(res.Patterns), res.Proven, res.Failed())
	}
}
