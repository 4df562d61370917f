package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/migratetest"
)

// patternsSchema is a small HR source: employees with a job history, of
// which at most one job per employee is current (a partial unique index
// says so), and the last employee has none.
const patternsSchema = `
CREATE TABLE employees (emp_id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE job_history (
  job_id bigint PRIMARY KEY, emp_id bigint NOT NULL REFERENCES employees,
  title text NOT NULL, end_date date);
CREATE UNIQUE INDEX one_current_job ON job_history (emp_id) WHERE end_date IS NULL;
CREATE TABLE skills (emp_id bigint REFERENCES employees, skill text, level int NOT NULL, PRIMARY KEY (emp_id, skill));
INSERT INTO employees SELECT i, 'Employee ' || i FROM generate_series(1, 20) i;
INSERT INTO job_history SELECT 100 * e + j, e, 'Title ' || e || '.' || j,
  CASE WHEN j < 3 OR e = 20 THEN date '2020-01-01' + 100 * j END
FROM generate_series(1, 20) e, generate_series(1, 3) j;
CREATE TABLE sales (sale_id bigint PRIMARY KEY, emp_id bigint NOT NULL REFERENCES employees,
  sold_at timestamptz NOT NULL, amount numeric(10,2) NOT NULL);
INSERT INTO sales SELECT i, 1 + i % 20, timestamptz '2023-03-01 00:00:00+00' + i * interval '1 day 7 hours 0.5 seconds',
  (i * 3.7)::numeric(10,2) FROM generate_series(1, 600) i;
INSERT INTO skills SELECT e, (ARRAY['go', 'sql', 'dynamodb', 'k8s'])[k], 1 + (e + k) % 3
FROM generate_series(1, 19) e, generate_series(1, 4) k WHERE k <= 1 + e % 4;
`

// patternsMapping has a singleton (an employee's current job) and an item
// collection (an employee with the current job and skills).
const patternsMapping = "../../testdata/patterns.yaml"

type patternsSource struct {
	pg, endpoint, table, file string
	src                       string // the mapping
	ddb                       *dynamodb.Client
}

func newPatternsSource(t *testing.T) *patternsSource {
	t.Helper()
	s := &patternsSource{pg: migratetest.PostgresURL(t), endpoint: migratetest.DynamoDBEndpoint(t)}
	s.table = migratetest.TableName(t, "patterns")
	s.ddb = migratetest.DynamoDBClient(t, s.endpoint)
	s.exec(t, patternsSchema)
	src, err := os.ReadFile(patternsMapping)
	if err != nil {
		t.Fatal(err)
	}
	s.src = string(src)
	s.file = s.write(t, "patterns.yaml", s.src)
	return s
}

func (s *patternsSource) exec(t *testing.T, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), s.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (s *patternsSource) write(t *testing.T, name, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func (s *patternsSource) args(file, table string, extra ...string) []string {
	return append([]string{"--mapping", file, "--pg", s.pg, "--endpoint", s.endpoint, "--table", table}, extra...)
}

func (s *patternsSource) get(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := s.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      &s.table,
		Key:            map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem %s/%s: %v", pk, sk, err)
	}
	return out.Item
}

func attrS(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// TestPatternsEndToEnd loads testdata/patterns.yaml and proves its
// patterns. validate proves the current job one row per employee from the
// partial unique index; sync loads the table and follows the singleton
// when another row becomes the current job; prove answers the singleton's
// GetItem and the item collection's Query alike from both sides, and
// catches planted wrong answers; without the where filter validate
// refuses the singleton, and run refuses two rows with one key.
func TestPatternsEndToEnd(t *testing.T) {
	s := newPatternsSource(t)

	out, errOut, code := runCLI(t, "validate", "--mapping", s.file, "--pg", s.pg)
	if code != 0 {
		t.Fatalf("validate exited %d\n%s\n%s", code, out, errOut)
	}

	// Sync makes the table (its initial load is a run) and then follows
	// the stream; the singleton must follow its row.
	s.exec(t, "ALTER TABLE job_history REPLICA IDENTITY FULL; ALTER TABLE sales REPLICA IDENTITY FULL")
	state := filepath.Join(t.TempDir(), "state.json")
	t.Cleanup(func() {
		name := replicate.DefaultName(s.table)
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: s.pg, Slot: name, Publication: name}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	syncArgs := s.args(s.file, s.table, "--state", state, "--until-caught-up", "--quiet")
	out, errOut, code = runCLI(t, append([]string{"sync", "--create-table"}, syncArgs...)...)
	if code != 0 {
		t.Fatalf("sync exited %d\n%s\n%s", code, out, errOut)
	}
	if it := s.get(t, "EMP#1", "CURRENT_JOB"); attrS(it, "title") != "Title 1.3" {
		t.Fatalf("EMP#1/CURRENT_JOB after the load = %v, want Title 1.3", it)
	}
	if it := s.get(t, "EMP#20", "CURRENT_JOB"); it != nil {
		t.Fatalf("EMP#20 has no current job, but the table has %v", it)
	}
	// In one transaction the current job ends and a new one starts: the
	// old row leaves the filter, the new one enters it, at one key.
	s.exec(t, `BEGIN;
UPDATE job_history SET end_date = date '2024-06-01' WHERE emp_id = 1 AND end_date IS NULL;
INSERT INTO job_history VALUES (104, 1, 'Title 1.4', NULL);
COMMIT;
UPDATE job_history SET end_date = date '2024-06-01' WHERE emp_id = 2 AND end_date IS NULL;
INSERT INTO job_history VALUES (2004, 20, 'Title 20.4', NULL);`)
	out, errOut, code = runCLI(t, append([]string{"sync"}, syncArgs...)...)
	if code != 0 {
		t.Fatalf("sync exited %d\n%s\n%s", code, out, errOut)
	}
	if it := s.get(t, "EMP#1", "CURRENT_JOB"); attrS(it, "title") != "Title 1.4" {
		t.Errorf("EMP#1/CURRENT_JOB after the change of job = %v, want Title 1.4", it)
	}
	if it := s.get(t, "EMP#2", "CURRENT_JOB"); it != nil {
		t.Errorf("EMP#2's current job ended, but the table still has %v", it)
	}
	if it := s.get(t, "EMP#20", "CURRENT_JOB"); attrS(it, "title") != "Title 20.4" {
		t.Errorf("EMP#20/CURRENT_JOB after the new job = %v, want Title 20.4", it)
	}

	out, errOut, code = runCLI(t, append([]string{"prove", "--samples", "20", "--format", "json"}, s.args(s.file, s.table)...)...)
	var res prove.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.Proven {
		t.Fatalf("prove exited %d (%v)\n%s\n%s", code, err, out, errOut)
	}
	for _, p := range res.Patterns {
		if p.Tried == 0 || p.Items == 0 {
			t.Errorf("%s: tried %d, %d items: it proves nothing", p.Name, p.Tried, p.Items)
		}
	}

	// docs shows what plan measured, per entity.
	out, errOut, code = runCLI(t, append([]string{"plan", "--format", "json"}, s.args(s.file, s.table)...)...)
	if code != 0 {
		t.Fatalf("plan exited %d\n%s\n%s", code, out, errOut)
	}
	planFile := s.write(t, "plan.json", out)
	out, errOut, code = runCLI(t, "docs", "--mapping", s.file, "--plan", planFile)
	// Sales are in one partition per employee and year: 20 x 3.
	for _, want := range []string{"| Employee | 20 | ", "| CurrentJob | 19 | ", "| Sale | 600 | ", " | 60 |\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("docs --plan exited %d, lacks %q:\n%s\n%s", code, want, out, errOut)
		}
	}

	// Planted wrong answers: an entity's query that misses rows, and a
	// collection that leaves an entity without a query.
	for _, tc := range []struct{ name, old, new, want string }{
		{"an entity's query misses rows", "WHERE emp_id = @id ORDER BY skill", "WHERE emp_id = @id AND level > 1 ORDER BY skill", "Skill: DynamoDB returned"},
		{"an entity without a query", "      Employee: SELECT name FROM employees WHERE emp_id = @id\n", "", "items of Employee, for which the pattern has no query"},
		{"a bucket left out", "buckets: { year: { from: 2024, to: 2025 } }", "buckets: { year: [2025] }", "DynamoDB returned"},
	} {
		edited := strings.Replace(s.src, tc.old, tc.new, 1)
		if edited == s.src {
			t.Fatalf("%s: the edit did not apply", tc.name)
		}
		wrong := s.write(t, "wrong.yaml", edited)
		out, errOut, code = runCLI(t, append([]string{"prove", "--samples", "20", "--format", "json", "--pattern", "employeeWithJobAndSkills", "--pattern", "latestSales"}, s.args(wrong, s.table)...)...)
		var res prove.Result
		err := json.Unmarshal([]byte(out), &res)
		var msgs []string
		for _, p := range res.Patterns {
			for _, d := range p.Differences {
				msgs = append(msgs, d.Message)
			}
		}
		if err != nil || code != 3 || res.Proven || len(msgs) != 1 || !strings.Contains(msgs[0], tc.want) {
			t.Errorf("%s: prove exited %d (%v), want 3 and a difference with %q:\n%s\n%s", tc.name, code, err, tc.want, out, errOut)
		}
	}

	// query runs the bucket fan-out as prove does: both years, merged
	// newest first, ten items.
	out, errOut, code = runCLI(t, "query", "--pattern", "latestSales", "--param", "id=3", "--mapping", s.file, "--endpoint", s.endpoint, "--table", s.table)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 10 {
		t.Fatalf("query --pattern latestSales exited %d with %d items, want 10:\n%s\n%s", code, len(lines), out, errOut)
	}
	var years []string
	prevSK := "~"
	for _, line := range lines {
		var it struct{ PK, SK string }
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatal(err)
		}
		if it.SK >= prevSK {
			t.Errorf("query --pattern latestSales: %s after %s, want newest first", it.SK, prevSK)
		}
		prevSK = it.SK
		if y := strings.TrimPrefix(it.PK, "SALES#3#"); len(years) == 0 || years[len(years)-1] != y {
			years = append(years, y)
		}
	}
	if strings.Join(years, ",") != "2025,2024" {
		t.Errorf("query --pattern latestSales read the partitions %v, want 2025 then 2024 merged", years)
	}

	// Without the where filter the index proves nothing: refused, with
	// the position and what would make the key unique.
	unfiltered := s.write(t, "unfiltered.yaml", strings.Replace(s.src, "    where: end_date IS NULL\n", "", 1))
	_, errOut, code = runCLI(t, "validate", "--mapping", unfiltered, "--pg", s.pg)
	if want := unfiltered + ":15:3: the key of CurrentJob does not include the primary key (job_id) or another unique key of public.job_history, so two rows could produce the same item: the unique index one_current_job over (emp_id) holds only where end_date IS NULL, which the where filter of CurrentJob does not imply: add that condition to the where filter"; code != exitUsage || !strings.Contains(errOut, want) {
		t.Errorf("validate without the filter exited %d:\n%s\nwant exit 2 and %q", code, errOut, want)
	}

	// What validate proves holds for the values in the catalog's terms; a
	// key function can still fold two of them into one key ("Ann" and
	// "ann" under {holder|lower}), so run checks the keys of a singleton
	// and refuses, naming the key and both rows.
	desks := s.write(t, "desks.yaml", `
table: Desks
keys: { partition: PK, sort: SK }
entities:
  CurrentDesk:
    from: desks
    where: released IS NULL
    key: { pk: "HOLDER#{holder|lower}", sk: CURRENT_DESK }
    attributes: { desk: desk_id }
`)
	s.exec(t, `CREATE TABLE desks (desk_id bigint PRIMARY KEY, holder text NOT NULL, released date);
CREATE UNIQUE INDEX one_desk ON desks (holder) WHERE released IS NULL;
INSERT INTO desks VALUES (1, 'Ann', NULL), (2, 'Bob', NULL), (3, 'ann', NULL), (4, 'Bob', date '2024-01-01')`)
	out, errOut, code = runCLI(t, "validate", "--mapping", desks, "--pg", s.pg)
	if code != 0 {
		t.Fatalf("validate desks exited %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, append([]string{"run", "--create-table"}, s.args(desks, migratetest.TableName(t, "desks"), "--state", filepath.Join(t.TempDir(), "desks.state.json"))...)...)
	if code == 0 || !strings.Contains(errOut, "duplicate key") || !strings.Contains(errOut, "HOLDER#ann") || !strings.Contains(errOut, "desks") {
		t.Errorf("run with Ann and ann at one desk key exited %d; want a refusal naming the key and the table:\n%s\n%s", code, out, errOut)
	}
	t.Logf("run refused:\n%s", errOut)
}
