package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/prove"
)

// TestProveBookstore runs migrate prove on the migrated bookstore: the 8
// access patterns of testdata/bookstore.yaml, answered by DynamoDB (GetItem
// and Query only, on every shard of GSI2) and by SQL, must all match, with
// parameter sets drawn from the source. Then the table is tampered with
// and prove must find it and fail with exit code 3.
func TestProveBookstore(t *testing.T) {
	b := migrateBookstore(t, 60)
	out, errOut, code := runCLI(t, "prove", "--mapping", bookstoreMapping, "--pg", b.pg,
		"--endpoint", b.endpoint, "--table", b.table, "--samples", "40", "--format", "json")
	if code != 0 {
		t.Fatalf("prove exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var res prove.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("prove --format json: %v\n%s", err, out)
	}
	if !res.Proven || len(res.Patterns) != 8 {
		t.Fatalf("proven %v with %d patterns", res.Proven, len(res.Patterns))
	}
	for _, p := range res.Patterns {
		if p.Tried == 0 || p.Matched != p.Tried || p.Mismatched != 0 || p.Missing == 0 || p.Error != "" {
			t.Errorf("%s: tried %d, matched %d, mismatched %d, missing %d, error %q", p.Name, p.Tried, p.Matched, p.Mismatched, p.Missing, p.Error)
		}
		if p.Items == 0 {
			t.Errorf("%s: no items compared: the pattern proves nothing", p.Name)
		}
	}
	shards := res.Patterns[7]
	if shards.Name != "openOrdersInMonth" || shards.Shards < 2 || !strings.Contains(b.output, fmt.Sprintf("padded to %d", shards.Shards)) {
		t.Errorf("openOrdersInMonth queried %d shards; run said:\n%s", shards.Shards, b.output)
	}

	text, _, code := runCLI(t, "prove", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table, "--samples", "10")
	if code != 0 || !strings.Contains(text, "all 8 access patterns answered alike by DynamoDB and SQL") {
		t.Errorf("text report (exit %d):\n%s", code, text)
	}
	t.Logf("migrate prove:\n%s", text)

	t.Run("a tampered table differs, exit code 3", func(t *testing.T) {
		ctx := t.Context()
		_, err := b.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &b.table,
			Key:                       map[string]types.AttributeValue{"PK": s("CUSTOMER#1"), "SK": s("PROFILE")},
			UpdateExpression:          aws.String("SET #n = :n"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeNames:  map[string]string{"#n": "name"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("Somebody Else")},
		})
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"prove", "--mapping", bookstoreMapping, "--pg", b.pg, "--endpoint", b.endpoint, "--table", b.table,
			"--pattern", "customerProfile", "--samples", "100000"}
		out, errOut, code := runCLI(t, args...)
		t.Logf("migrate prove on a tampered table (exit %d):\n%s", code, out)
		if code != exitDiffers || !strings.Contains(out, "DIFFERS") || !strings.Contains(out, `differs for id=1:`) ||
			!strings.Contains(out, `name is {"S":"Somebody Else"}, SQL says`) {
			t.Fatalf("prove exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
}
