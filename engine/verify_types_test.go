package engine_test

import (
	"context"
	"math/big"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

// TestVerifyRealAtItsWidth: verify computes its expected items through
// the same transform as run, so a wrong conversion would match itself.
// This test checks the table against PostgreSQL's own text (r::text), a
// path that shares nothing with the transform, then plants the 64-bit
// forms a real used to be written in (0.10000000149011612 for 0.1) and
// expects verify to report those items different.
func TestVerifyRealAtItsWidth(t *testing.T) {
	env := migratetest.New(t)
	env.Exec(t, `
CREATE TABLE m (id int PRIMARY KEY, r real, ra real[], d double precision);
INSERT INTO m VALUES (1, 0.1, '{0.1,NULL}', 0.1), (2, 3.4028235e38, '{{3.4028235e38},{-1e-45}}', 1e20), (3, 1234567, '{}', -0.5);`)
	m, err := mapping.Parse("reals.yaml", []byte(`table: Reals
keys: { partition: PK, sort: SK }
entities:
  Measure:
    from: m
    key: { pk: "M#{id}", sk: M }
    attributes:
      r: r
      ra: ra
      d: d
      rs: { column: r, as: string }
`))
	if err != nil {
		t.Fatal(err)
	}
	env.MigrateMapping(t, m)

	// The table against PostgreSQL's text, by number (N) and by text (as:
	// string).
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, env.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	items := env.Items(t)
	byKey := map[string]map[string]types.AttributeValue{}
	for _, it := range items {
		byKey[it["PK"].(*types.AttributeValueMemberS).Value] = it
	}
	rows, err := conn.Query(ctx, `SELECT 'M#' || id, r::text, d::text FROM m ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pk, r, d string
		if err := rows.Scan(&pk, &r, &d); err != nil {
			t.Fatal(err)
		}
		it := byKey[pk]
		if it == nil {
			t.Fatalf("no item %s", pk)
		}
		for attr, text := range map[string]string{"r": r, "d": d} {
			n, ok := it[attr].(*types.AttributeValueMemberN)
			want, _ := new(big.Rat).SetString(text)
			if got, okN := new(big.Rat).SetString(n.Value); !ok || !okN || got.Cmp(want) != 0 {
				t.Errorf("%s %s = %s, PostgreSQL has %s", pk, attr, n.Value, text)
			}
		}
		if s := it["rs"].(*types.AttributeValueMemberS).Value; s != r {
			t.Errorf("%s rs = %q, PostgreSQL has %q", pk, s, r)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	verify := func() ([]string, bool) {
		t.Helper()
		v, err := engine.Verify(ctx, engine.VerifyConfig{CompareConfig: engine.CompareConfig{
			Mapping: m, Postgres: env.PostgresURL, DynamoDB: env.DynamoDB, Table: env.Table}})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, d := range v.Different {
			for _, a := range d.Attributes {
				paths = append(paths, a.Path)
			}
		}
		slices.Sort(paths)
		return paths, v.Identical
	}
	if paths, identical := verify(); !identical {
		t.Fatalf("verify after run: not identical (%v)", paths)
	}

	// The 64-bit forms, as an earlier version wrote them.
	plant := func(pk string, attrs map[string]types.AttributeValue) {
		it := byKey[pk]
		for k, v := range attrs {
			it[k] = v
		}
		if _, err := env.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	plant("M#1", map[string]types.AttributeValue{
		"r":  n("0.10000000149011612"),
		"ra": &types.AttributeValueMemberL{Value: []types.AttributeValue{n("0.10000000149011612"), &types.AttributeValueMemberNULL{Value: true}}},
	})
	plant("M#2", map[string]types.AttributeValue{"rs": &types.AttributeValueMemberS{Value: "3.4028234663852886e+38"}})
	plant("M#3", map[string]types.AttributeValue{"r": n("1234567.0000000001")})
	paths, identical := verify()
	if identical {
		t.Fatal("verify finds the table identical with reals written in their 64-bit form")
	}
	if want := []string{"r", "r", "ra[0]", "rs"}; !slices.Equal(paths, want) {
		t.Errorf("verify reports %v different, want %v", paths, want)
	}
}
