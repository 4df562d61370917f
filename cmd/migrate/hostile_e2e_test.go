package main

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/migratetest"
)

const hostileMapping = "../../testdata/hostile_values.yaml"

// hostileSamples are the rows of testdata/hostile_values.yaml by id, and
// what must become of each: "" written, else the reject's column and
// words of its reason.
var hostileSamples = []struct {
	id             int
	insert         string
	column, reason string
}{
	{1, `(1, '2024-05-01', '\x', '{"a": 1}', 1.5, 0.5)`, "", ""},
	{2, `(2, '2024-05-02', NULL, (repeat('[', 40) || '1' || repeat(']', 40))::jsonb, NULL, NULL)`, "data", "nests 40 levels of lists and maps, 41 with the item around it; DynamoDB allows 32"},
	{3, `(3, '2024-05-03', NULL, (repeat('[', 64) || '1' || repeat(']', 64))::jsonb, NULL, NULL)`, "data", "nests 64 levels"},
	{4, `(4, '10000-01-01', NULL, NULL, NULL, NULL)`, "made", "10000-01-01 is outside years 0000-9999"},
	{5, `(5, '0044-03-15 BC', NULL, NULL, NULL, NULL)`, "made", "0044-03-15 BC is outside years 0000-9999"},
	{6, `(6, NULL, NULL, NULL, 1234567890123456789012345678901234567891, 'NaN')`, "made",
		`column made: SK "MADE#{made}": value is NULL; column amount: attribute amount: 1234567890123456789012345678901234567891 has 40 significant digits; DynamoDB numbers hold at most 38 (declare as: string to keep it exact as text); column ratio: attribute ratio: NaN cannot be stored in DynamoDB`},
	{7, `(7, '2024-05-07', '\x00ff', NULL, NULL, NULL)`, "", ""},
}

func newHostileSamples(t *testing.T) (pg, endpoint string) {
	t.Helper()
	pg, endpoint = migratetest.PostgresURL(t), migratetest.DynamoDBEndpoint(t)
	conn, err := pgx.Connect(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	sql := `CREATE TABLE samples (id int8 PRIMARY KEY, made date, blob bytea, data jsonb, amount numeric, ratio float8)`
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
	for _, s := range hostileSamples {
		if _, err := conn.Exec(t.Context(), "INSERT INTO samples VALUES "+s.insert); err != nil {
			t.Fatalf("sample %d: %v", s.id, err)
		}
	}
	return pg, endpoint
}

// plan exits 1 when rows cannot become items, and prints them as problems
// in the format asked; which rows and why is the engine's to test
// (engine/hostile_test.go).
func TestHostileValuesPlan(t *testing.T) {
	pg, endpoint := newHostileSamples(t)
	table := migratetest.TableName(t, "hostile-plan")
	out, errOut, code := runCLI(t, "plan", "--mapping", hostileMapping, "--pg", pg, "--endpoint", endpoint, "--table", table, "--format", "json")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d (problems)\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errOut)
	}
	var p report.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan output is not JSON: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	want := 0
	for _, s := range hostileSamples {
		if s.column != "" {
			want++
		}
	}
	if p.Summary.Problems != int64(want) || len(p.Problems) != want {
		t.Errorf("%d problems (%d listed), want %d: %+v", p.Summary.Problems, len(p.Problems), want, p.Problems)
	}
}
