package engine_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/migratetest"
)

const hostileMapping = "../testdata/hostile_values.yaml"

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

// run writes the good samples exactly (the empty bytea as an empty binary
// value) and rejects each hostile one in the transform stage, naming its
// column and every problem of the row.
// Run writes the good samples exactly (the empty bytea as an empty binary
// value) and rejects each hostile one in the transform stage, naming its
// column and every problem of the row.
func TestHostileValuesRun(t *testing.T) {
	pg, endpoint := newHostileSamples(t)
	dir := t.TempDir()
	table := migratetest.TableName(t, "hostile-values")
	rejects := filepath.Join(dir, "rejects.jsonl")
	m, err := engine.LoadMapping(hostileMapping)
	if err != nil {
		t.Fatal(err)
	}
	ddb := migratetest.DynamoDBClient(t, endpoint)
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, DynamoDB: ddb, Table: table, CreateTable: true,
		StateFile: filepath.Join(dir, "state.json"), OnError: engine.OnErrorReject, RejectFile: rejects, MaxRejects: -1})
	if err != nil || res.Status != engine.StatusComplete {
		t.Fatalf("run: %v (%+v)", err, res)
	}

	f, err := os.Open(rejects)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct{ SourceKey, Column, Reason, Stage, Kind string }
	got := map[string]line{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("reject line %q: %v", sc.Text(), err)
		}
		got[l.SourceKey] = l
	}
	for _, s := range hostileSamples {
		key := "id=" + strconv.Itoa(s.id)
		l, rejected := got[key]
		if s.column == "" {
			if rejected {
				t.Errorf("sample %d rejected: %+v", s.id, l)
			}
			continue
		}
		if !rejected {
			t.Errorf("sample %d not rejected", s.id)
			continue
		}
		if l.Stage != "transform" || l.Column != s.column || !strings.Contains(l.Reason, s.reason) {
			t.Errorf("reject of sample %d: %+v\nwant stage transform, column %s, reason ~ %q", s.id, l, s.column, s.reason)
		}
	}
	if len(got) != 5 || res.AllRuns.Rejects != 5 {
		t.Errorf("%d reject lines, %d rejects counted, want 5: %v", len(got), res.AllRuns.Rejects, got)
	}

	item := func(pk, sk string) map[string]types.AttributeValue {
		t.Helper()
		o, err := ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
		return o.Item
	}
	if b, ok := item("SAMPLE#1", "MADE#2024-05-01")["blob"].(*types.AttributeValueMemberB); !ok || len(b.Value) != 0 {
		t.Errorf("the empty bytea is stored as %#v, want an empty binary value", item("SAMPLE#1", "MADE#2024-05-01")["blob"])
	}
	if b, ok := item("SAMPLE#7", "MADE#2024-05-07")["blob"].(*types.AttributeValueMemberB); !ok || string(b.Value) != "\x00\xff" {
		t.Errorf("bytea 00ff is stored as %#v", item("SAMPLE#7", "MADE#2024-05-07")["blob"])
	}
}

// Plan reports the same rows as problems, each naming its row: a jsonb
// nested 64 levels once stopped plan with "diff: corrupt record".
func TestHostileValuesPlan(t *testing.T) {
	pg, endpoint := newHostileSamples(t)
	m, err := engine.LoadMapping(hostileMapping)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Plan(t.Context(), engine.PlanConfig{CompareConfig: engine.CompareConfig{Mapping: m, Postgres: pg,
		DynamoDB: migratetest.DynamoDBClient(t, endpoint), Table: migratetest.TableName(t, "hostile-plan")}})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	got := map[string]string{}
	for _, pr := range p.Problems {
		got[pr.Origin] = pr.Message
		if strings.Contains(pr.Message, "corrupt") {
			t.Errorf("plan reports a corrupt record: %+v", pr)
		}
	}
	for _, s := range hostileSamples {
		msg, ok := got["public.samples id="+strconv.Itoa(s.id)]
		switch {
		case s.column == "" && ok:
			t.Errorf("sample %d is a problem: %s", s.id, msg)
		case s.column != "" && (!ok || !strings.Contains(msg, s.reason)):
			t.Errorf("problem of sample %d: %q, want ~ %q", s.id, msg, s.reason)
		}
	}
	if p.Summary.Problems != 5 {
		t.Errorf("%d problems, want 5: %+v", p.Summary.Problems, p.Problems)
	}
}
