package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/golden"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/internal/seed"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

var updateDrafts = flag.Bool("update-drafts", false, "rewrite testdata/init/*.yaml from what init drafts")

// initSource is a source database for init: how to fill it, and what the
// access patterns of its draft must answer.
type initSource struct {
	name  string
	load  func(t *testing.T, ctx context.Context, conn *pgx.Conn, pg string)
	check func(t *testing.T, d *drafted)
}

// drafted is a source, its drafted mapping and the table it was migrated to.
type drafted struct {
	conn    *pgx.Conn
	ddb     *dynamodb.Client
	table   string
	mapping *mapping.Mapping
}

func loadSQLFile(path string) func(*testing.T, context.Context, *pgx.Conn, string) {
	return func(t *testing.T, ctx context.Context, conn *pgx.Conn, _ string) {
		t.Helper()
		sql, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// The first hour of a new user: init drafts a mapping from the live
// catalog, and the draft validates, migrates into DynamoDB Local and
// verifies identical, on four differently shaped schemas; with the
// offered embeds accepted too. The drafts are kept in testdata/init, where
// the JSON Schema test checks them and reviewers read them
// (go test ./cmd/migrate -run TestInit -update-drafts rewrites them).
func TestInitDraftMigrates(t *testing.T) {
	t.Parallel()
	sources := []initSource{
		{name: "bookstore", load: func(t *testing.T, ctx context.Context, conn *pgx.Conn, pg string) {
			if err := sqlschema.Up(ctx, pg); err != nil {
				t.Fatal(err)
			}
			if _, err := seed.Load(ctx, conn, seed.Config{Scale: 40, Seed: 3}); err != nil {
				t.Fatal(err)
			}
		}, check: checkBookstoreDraft},
		{name: "hr", load: loadSQLFile("../../testdata/schemas/hr.sql"), check: checkHRDraft},
		{name: "saas", load: loadSQLFile("../../testdata/schemas/saas.sql"), check: checkSaaSDraft},
		{name: "oe", load: loadSQLFile("../../testdata/schemas/oe.sql"), check: checkOEDraft},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pg := migratetest.PostgresURL(t)
			endpoint := migratetest.DynamoDBEndpoint(t)
			conn, err := pgx.Connect(ctx, pg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close(context.Background()) })
			src.load(t, ctx, conn, pg)
			var dbName string
			if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
				t.Fatal(err)
			}

			for _, embed := range []bool{false, true} {
				variant := src.name
				if embed {
					variant += "-embed"
				}
				dir := t.TempDir()
				path := filepath.Join(dir, "mapping.yaml")
				args := []string{"init", "--pg", pg, "-o", path, "--table", "Draft-" + src.name}
				if embed {
					args = append(args, "--embed")
				}
				out, errOut, code := runCLI(t, args...)
				if code != exitOK || !strings.Contains(out, "init: wrote "+path) {
					t.Fatalf("init: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				t.Logf("%s", out)
				text, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				compareDraft(t, variant, strings.ReplaceAll(string(text), "database "+dbName+",", "database example,"))
				if embed && !strings.Contains(string(text), "\n    embed:\n") {
					t.Errorf("--embed wrote no active embed:\n%s", text)
				}

				out, errOut, code = runCLI(t, "validate", "--mapping", path, "--pg", pg)
				if code != exitOK || errOut != "" || !strings.Contains(out, "; 0 warnings)") {
					t.Fatalf("validate the draft: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				table := migratetest.TableName(t, "init-"+variant)
				state := filepath.Join(dir, "state.json")
				out, errOut, code = runCLI(t, "run", "--mapping", path, "--pg", pg, "--endpoint", endpoint, "--table", table,
					"--create-table", "--state", state, "--quiet")
				if code != exitOK {
					t.Fatalf("run the draft: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				out, errOut, code = runCLI(t, "verify", "--mapping", path, "--pg", pg, "--endpoint", endpoint, "--table", table)
				if code != exitOK || !strings.Contains(out, "IDENTICAL") {
					t.Fatalf("verify the draft: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
				proveDraft(t, path, pg, endpoint, table, state)
				m, err := mapping.Parse(path, text)
				if err != nil {
					t.Fatal(err)
				}
				src.check(t, &drafted{conn: conn, ddb: migratetest.DynamoDBClient(t, endpoint), table: table, mapping: m})
			}
		})
	}
}

// proveDraft runs prove on the draft as written: every access pattern it
// declares is tried and matches its SQL.
func proveDraft(t *testing.T, path, pg, endpoint, table, state string) {
	t.Helper()
	out, errOut, code := runCLI(t, "prove", "--mapping", path, "--pg", pg, "--endpoint", endpoint, "--table", table,
		"--state", state, "--samples", "25", "--format", "json")
	var res prove.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("prove the draft: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	if code != exitOK || !res.Proven {
		text, _, _ := runCLI(t, "prove", "--mapping", path, "--pg", pg, "--endpoint", endpoint, "--table", table, "--state", state, "--samples", "25")
		t.Fatalf("prove the draft: exit %d\n%s\nstderr:\n%s", code, text, errOut)
	}
	if len(res.Patterns) == 0 {
		t.Fatalf("prove tried no pattern of the draft:\n%s", out)
	}
	for _, p := range res.Patterns {
		if p.Items == 0 {
			t.Logf("%s: no items in the data to compare", p.Name)
		}
	}
}

// compareDraft compares a draft with its file in testdata/init.
func compareDraft(t *testing.T, variant, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "init", variant+".yaml")
	if *updateDrafts {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/migrate -run TestInit -update-drafts writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the draft differs from %s (-update-drafts rewrites it; review the diff):\n%s", path, golden.FirstLineDiff(got, string(want)))
	}
}

// entity finds a drafted entity by its source table.
func (d *drafted) entity(t *testing.T, table string) *mapping.Entity {
	t.Helper()
	for _, e := range d.mapping.Entities {
		if e.From == table {
			return e
		}
	}
	t.Fatalf("no entity reads %s", table)
	return nil
}

// index finds the index an entity of table uses with a pk template that
// starts with prefix.
func (d *drafted) index(t *testing.T, table, prefix string) string {
	t.Helper()
	e := d.entity(t, table)
	for _, ix := range e.Indexes {
		if strings.HasPrefix(ix.PK.Raw, prefix) {
			return ix.Index
		}
	}
	t.Fatalf("entity %s has no index with a pk starting %q", e.Name, prefix)
	return ""
}

// query counts, by entity, the items of one partition of the table or an
// index.
func (d *drafted) query(t *testing.T, index, pk string) map[string]int {
	t.Helper()
	pkAttr := "PK"
	in := &dynamodb.QueryInput{TableName: &d.table, ExpressionAttributeNames: map[string]string{"#k": pkAttr}}
	if index != "" {
		in.IndexName = aws.String(index)
		in.ExpressionAttributeNames["#k"] = index + "PK"
	}
	in.KeyConditionExpression = aws.String("#k = :v")
	in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: pk}}
	counts := map[string]int{}
	p := dynamodb.NewQueryPaginator(d.ddb, in)
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("Query %s %s: %v", index, pk, err)
		}
		for _, it := range page.Items {
			if v, ok := it["_type"].(*types.AttributeValueMemberS); ok {
				counts[v.Value]++
			}
		}
	}
	return counts
}

func (d *drafted) sqlInt(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.conn.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (d *drafted) sqlString(t *testing.T, q string, args ...any) string {
	t.Helper()
	var s string
	if err := d.conn.QueryRow(t.Context(), q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func wantCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d %s items, want %d (all: %v)", what, got[k], k, v, got)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s items (all: %v)", what, k, got)
		}
	}
}

// The access patterns the bookstore draft's comments promise, answered by
// DynamoDB and by SQL alike.
func checkBookstoreDraft(t *testing.T, d *drafted) {
	c := d.sqlInt(t, `SELECT customer_id FROM orders GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	wantCounts(t, "a customer with its addresses and orders", d.query(t, "", "CUSTOMER#"+strconv.Itoa(c)), map[string]int{
		"Customer": 1,
		"Address":  d.sqlInt(t, `SELECT count(*) FROM addresses WHERE customer_id = $1`, c),
		"Order":    d.sqlInt(t, `SELECT count(*) FROM orders WHERE customer_id = $1`, c),
	})
	b := d.sqlInt(t, `SELECT book_id FROM order_items GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	// The book's own entry shares the index partition: a book lives under
	// its author, and the index reads it by its own id.
	wantCounts(t, "a book with its orders", d.query(t, d.index(t, "order_items", "BOOK#"), "BOOK#"+strconv.Itoa(b)), map[string]int{
		"Book":      1,
		"OrderItem": d.sqlInt(t, `SELECT count(*) FROM order_items WHERE book_id = $1`, b),
	})
	email := d.sqlString(t, `SELECT email FROM customers WHERE email IS NOT NULL ORDER BY customer_id LIMIT 1`)
	wantCounts(t, "a customer by email", d.query(t, d.index(t, "customers", "CUSTOMER_EMAIL#"), "CUSTOMER_EMAIL#"+email), map[string]int{"Customer": 1})
}

func checkHRDraft(t *testing.T, d *drafted) {
	e := d.sqlInt(t, `SELECT employee_id FROM job_history GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	wantCounts(t, "an employee with their job history", d.query(t, "", "EMPLOYEE#"+strconv.Itoa(e)), map[string]int{
		"Employee":        1,
		"JobHistory":      d.sqlInt(t, `SELECT count(*) FROM job_history WHERE employee_id = $1`, e),
		"EmployeeProject": d.sqlInt(t, `SELECT count(*) FROM employee_projects WHERE employee_id = $1`, e),
	})
	wantCounts(t, "the employees of a manager", d.query(t, d.index(t, "employees", "MANAGER#"), "MANAGER#1"), map[string]int{
		"Employee": d.sqlInt(t, `SELECT count(*) FROM employees WHERE manager_id = 1`),
	})
	p := d.sqlInt(t, `SELECT project_id FROM employee_projects GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`)
	wantCounts(t, "the employees of a project (many-to-many)", d.query(t, d.index(t, "employee_projects", "PROJECT#"), "PROJECT#"+strconv.Itoa(p)), map[string]int{
		"EmployeeProject": d.sqlInt(t, `SELECT count(*) FROM employee_projects WHERE project_id = $1`, p),
	})
	wantCounts(t, "a region with its countries", d.query(t, "", "REGION#1"), map[string]int{
		"Region":  1,
		"Country": d.sqlInt(t, `SELECT count(*) FROM countries WHERE region_id = 1`),
	})
	// A country lives in its region's partition; its own id reads it
	// through an index, with the locations of the country beside it.
	wantCounts(t, "a country by its id", d.query(t, d.index(t, "countries", "COUNTRY#"), "COUNTRY#NO"), map[string]int{
		"Country":  1,
		"Location": d.sqlInt(t, `SELECT count(*) FROM locations WHERE country_id = 'NO'`),
	})
}

func checkSaaSDraft(t *testing.T, d *drafted) {
	tenant := d.sqlString(t, `SELECT tenant_id::text FROM tenants WHERE slug = 'tenant-5'`)
	wantCounts(t, "a project with its tasks and members", d.query(t, "", "PROJECT#"+tenant+"#2"), map[string]int{
		"Project":       1,
		"Task":          d.sqlInt(t, `SELECT count(*) FROM tasks WHERE tenant_id = $1 AND project_id = 2`, tenant),
		"ProjectMember": d.sqlInt(t, `SELECT count(*) FROM project_members WHERE tenant_id = $1 AND project_id = 2`, tenant),
	})
	wantCounts(t, "the tasks of an assignee", d.query(t, d.index(t, "tasks", "ASSIGNEE#"), "ASSIGNEE#"+tenant+"#2"), map[string]int{
		"Task": d.sqlInt(t, `SELECT count(*) FROM tasks WHERE tenant_id = $1 AND assignee_id = 2`, tenant),
	})
	wantCounts(t, "a tenant by slug", d.query(t, d.index(t, "tenants", "TENANT_SLUG#"), "TENANT_SLUG#tenant-5"), map[string]int{"Tenant": 1})
	wantCounts(t, "a task by its key", d.query(t, d.index(t, "tasks", "TASK#"), "TASK#"+tenant+"#201"), map[string]int{"Task": 1})
	wantCounts(t, "an invoice by its id", d.query(t, d.index(t, "invoices", "INVOICE#"), "INVOICE#7"), map[string]int{"Invoice": 1})
}

func checkOEDraft(t *testing.T, d *drafted) {
	// A location lives under its country; its own id reads it through an
	// index, beside its departments and warehouses.
	wantCounts(t, "a location by its id", d.query(t, d.index(t, "locations", "LOCATION#"), "LOCATION#2"), map[string]int{
		"Location":   1,
		"Department": d.sqlInt(t, `SELECT count(*) FROM departments WHERE location_id = 2`),
		"Warehouse":  d.sqlInt(t, `SELECT count(*) FROM warehouses WHERE location_id = 2`),
	})
	wantCounts(t, "a warehouse by name", d.query(t, d.index(t, "warehouses", "WAREHOUSE_WAREHOUSE_NAME#"), "WAREHOUSE_WAREHOUSE_NAME#North East"),
		map[string]int{"Warehouse": 1})
}
