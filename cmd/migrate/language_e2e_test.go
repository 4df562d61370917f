package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/migratetest"
)

const languageSchema = `
CREATE TABLE reps (rep_id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, country text NOT NULL, rep_id bigint REFERENCES reps);
CREATE TABLE txns (
  "Txn ID" bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers,
  amount numeric(12,2) NOT NULL, ratio double precision, placed_at timestamptz NOT NULL,
  tag text, status text NOT NULL);
INSERT INTO reps VALUES (1, 'Rita'), (2, 'Rolf');
INSERT INTO customers SELECT i, 'Customer ' || i, (ARRAY['no','se','dk'])[1 + i % 3],
  CASE WHEN i % 4 = 0 THEN NULL ELSE 1 + i % 2 END FROM generate_series(1, 30) i;
INSERT INTO txns SELECT i, 1 + i % 30, (i * 3.17 - 250)::numeric(12,2),
  CASE WHEN i % 11 = 0 THEN 'NaN'::float8 WHEN i % 13 = 0 THEN '-Infinity'::float8 WHEN i % 7 = 0 THEN NULL ELSE i / 16.0 END,
  timestamptz '2023-06-01 00:00:00+00' + i * interval '1 day 3 hours 0.000001 seconds',
  (ARRAY['Hot', 'ﬁre', '', NULL, 'cold'])[1 + i % 5], CASE WHEN i % 9 = 0 THEN 'VOID' ELSE 'OK' END
FROM generate_series(1, 240) i;
`

// languageMapping uses the language's newer parts at once: a number sort
// key, a local index, projections, a quoted column, copies into maps, keys
// over copied columns, template functions and encodings, where clauses on
// an entity and an index, empty: absent and as: string for NaN.
const languageMapping = `
table: Lang
keys: { partition: PK, sort: { name: SK, type: N } }
indexes:
  LSI1: { local: true, sort: LSI1SK, projection: { include: [amount] } }
  GSI1: { partition: GSI1PK, sort: GSI1SK, projection: { include: [amount] } }
  GSI2: { partition: GSI2PK, sort: { name: GSI2SK, type: N }, projection: KEYS_ONLY }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "{customer_id}" }
    attributes: { name: name, country: country }
  Txn:
    from: txns
    where: status <> 'VOID'
    key: { pk: "TXNS#{customer_id}", sk: '{"Txn ID"}' }
    attributes: { amount: amount, ratio: { column: ratio, as: string }, tag: tag }
    copy:
      - from: customers
        join: { customer_id: customer_id }
        into: customer
        attributes: { name: name }
        copy:
          - from: reps
            join: { rep_id: rep_id }
            into: rep
            attributes: { name: name }
    index:
      LSI1: { sk: "AT#{placed_at}" }
      GSI1:
        pk: "COUNTRY#{customer.country|upper}"
        sk: '{amount|decimal:6.2}#{"Txn ID":8}'
        where: amount <> 0
      GSI2: { pk: "TAG#{tag|nfkc|lower}", sk: '{"Txn ID"}', empty: absent }
accessPatterns:
  customer:
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{id}", sk: "{id}" }
    sql: SELECT name, country FROM customers WHERE customer_id = @id
  customerTxns:
    params: { id: customers.customer_id }
    query: { pk: "TXNS#{id}" }
    sql: |
      SELECT t."Txn ID" AS "SK", t.amount, t.ratio, t.tag,
             jsonb_strip_nulls(jsonb_build_object('name', c.name, 'rep', CASE WHEN r.rep_id IS NULL THEN NULL ELSE jsonb_build_object('name', r.name) END)) AS customer
      FROM txns t JOIN customers c USING (customer_id) LEFT JOIN reps r ON r.rep_id = c.rep_id
      WHERE t.customer_id = @id AND t.status <> 'VOID' ORDER BY t."Txn ID"
  latestTxns:
    params: { id: customers.customer_id }
    query: { index: LSI1, pk: "TXNS#{id}", sk: { begins_with: "AT#2024" }, direction: desc, limit: 3 }
    sql: |
      SELECT "Txn ID" AS "SK", amount FROM txns
      WHERE customer_id = @id AND status <> 'VOID' AND placed_at >= '2024-01-01' AND placed_at < '2025-01-01'
      ORDER BY placed_at DESC LIMIT 3
  txnsByCountry:
    params: { country: customers.country }
    query: { index: GSI1, pk: "COUNTRY#{country|upper}", sk: { lt: "0" } }
    sql: |
      SELECT t."Txn ID" AS "SK", t.amount FROM txns t JOIN customers c USING (customer_id)
      WHERE upper(c.country) = upper(@country) AND t.status <> 'VOID' AND t.amount < 0
      ORDER BY t.amount, t."Txn ID"
  tagged:
    params: "SELECT DISTINCT tag FROM txns WHERE tag <> ''"
    query: { index: GSI2, pk: "TAG#{tag|nfkc|lower}" }
    sql: |
      SELECT "Txn ID" AS "SK" FROM txns
      WHERE lower(normalize(tag, NFKC)) = lower(normalize(@tag, NFKC)) AND status <> 'VOID' ORDER BY "Txn ID"
`

// TestLanguageEndToEnd runs the CLI on a source unlike the bookstore with a
// mapping that uses the language's newer parts: run --create-table exits 0,
// plan prints what the projections save, docs describes the design. What
// run and prove do with the mapping is the engine's to test
// (engine/language_test.go).
func TestLanguageEndToEnd(t *testing.T) {
	ctx := t.Context()
	pg := migratetest.PostgresURL(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	table := migratetest.TableName(t, "lang")
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, languageSchema); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "lang.yaml")
	if err := os.WriteFile(file, []byte(languageMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--mapping", file, "--pg", pg, "--endpoint", endpoint, "--table", table}

	out, errOut, code := runCLI(t, append([]string{"run", "--create-table"}, common...)...)
	if code != 0 {
		t.Fatalf("run exited %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("migrate run:\n%s", out)

	out, errOut, code = runCLI(t, append([]string{"plan"}, common...)...)
	if code != 0 || !strings.Contains(out, "projection KEYS_ONLY saves") || !strings.Contains(out, "projection INCLUDE saves") {
		t.Errorf("plan exited %d; want the projections' savings:\n%s\n%s", code, out, errOut)
	}

	out, _, code = runCLI(t, "docs", file)
	for _, want := range []string{"| LSI1 | local | `PK` (S) | `LSI1SK` (S) | INCLUDE `amount` | Txn |", "`TAG#{tag\\|nfkc\\|lower}`", "absent when a value is empty", "only where `amount <> 0`"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("docs (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}
