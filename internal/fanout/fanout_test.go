package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/fanout"
	"github.com/pgdynamo/migrate/mapping"
)

func items(sks ...string) []fanout.Item {
	var out []fanout.Item
	for _, sk := range sks {
		out = append(out, fanout.Item{"SK": &types.AttributeValueMemberS{Value: sk}})
	}
	return out
}

func sks(its []fanout.Item) string {
	var out []string
	for _, it := range its {
		out = append(out, it["SK"].(*types.AttributeValueMemberS).Value)
	}
	return strings.Join(out, " ")
}

func TestRun(t *testing.T) {
	t.Parallel()
	// Two year buckets, each answered newest first, as DynamoDB would.
	parts := [][]fanout.Item{items("2024-12", "2024-06", "2024-01"), items("2025-03", "2025-02")}
	one := func(_ context.Context, i int) ([]fanout.Item, error) { return parts[i], nil }
	cases := []struct {
		name  string
		desc  bool
		limit int
		want  string
	}{
		{"newest first, limit across the buckets", true, 3, "2025-03 2025-02 2024-12"},
		{"newest first, all", true, 0, "2025-03 2025-02 2024-12 2024-06 2024-01"},
		{"limit larger than the answer", true, 9, "2025-03 2025-02 2024-12 2024-06 2024-01"},
	}
	for _, tc := range cases {
		got, err := fanout.Run(t.Context(), len(parts), one, "SK", tc.desc, tc.limit)
		if err != nil || sks(got) != tc.want {
			t.Errorf("%s: got %q (%v), want %q", tc.name, sks(got), err, tc.want)
		}
	}
	asc := [][]fanout.Item{items("b", "d"), items("a", "c", "e")}
	got, err := fanout.Run(t.Context(), 2, func(_ context.Context, i int) ([]fanout.Item, error) { return asc[i], nil }, "SK", false, 4)
	if err != nil || sks(got) != "a b c d" {
		t.Errorf("ascending: got %q (%v)", sks(got), err)
	}
	// Numbers sort by value, not as text.
	n := func(v string) fanout.Item { return fanout.Item{"SK": &types.AttributeValueMemberN{Value: v}} }
	num := [][]fanout.Item{{n("9"), n("100")}, {n("10.5")}}
	got, _ = fanout.Run(t.Context(), 2, func(_ context.Context, i int) ([]fanout.Item, error) { return num[i], nil }, "SK", false, 0)
	if fmt.Sprint(got[0]["SK"], got[1]["SK"], got[2]["SK"]) != fmt.Sprint(n("9")["SK"], n("10.5")["SK"], n("100")["SK"]) {
		t.Errorf("numbers merged as %v %v %v", got[0]["SK"], got[1]["SK"], got[2]["SK"])
	}
	boom := errors.New("boom")
	if _, err := fanout.Run(t.Context(), 3, func(_ context.Context, i int) ([]fanout.Item, error) {
		if i == 1 {
			return nil, boom
		}
		return nil, nil
	}, "SK", false, 0); !errors.Is(err, boom) {
		t.Errorf("a partition's error: got %v", err)
	}
}

func TestPoints(t *testing.T) {
	t.Parallel()
	src := `table: Shop
keys: { partition: PK, sort: SK }
entities:
  O: { from: orders, key: { pk: "O#{id}", sk: X } }
accessPatterns:
  p:
    query: { pk: "O#{region}#{year:6}#{shard}", buckets: { region: [EU, US], year: [2024, 2025] } }
    sql: SELECT 1
`
	m, err := mapping.Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ap := m.AccessPatterns[0]
	var got []string
	for _, at := range fanout.Points(ap, 2) {
		var vals []string
		for _, part := range ap.PK.Placeholders() {
			kv, ok := at.Value(part)
			if !ok {
				t.Fatalf("%s has no value at %+v", part.Column, at)
			}
			vals = append(vals, fmt.Sprintf("%v/%d", kv.V, kv.Kind))
		}
		got = append(got, strings.Join(vals, ","))
	}
	// Buckets outermost in declaration order, shards innermost; a
	// whole-number bucket is an integer (kind 1), so {year:6} pads it.
	if strings.Join(got, " ") != "EU/4,2024/1,0/4 EU/4,2024/1,1/4 EU/4,2025/1,0/4 EU/4,2025/1,1/4 US/4,2024/1,0/4 US/4,2024/1,1/4 US/4,2025/1,0/4 US/4,2025/1,1/4" {
		t.Errorf("points: %v", got)
	}
	if _, ok := fanout.Points(ap, 2)[0].Value(mapping.Part{Column: "id"}); ok {
		t.Error("a parameter has a fan-out value")
	}
	if n := len(fanout.Points(ap, 0)); n != 4 {
		t.Errorf("%d points without a shard count; want the 4 bucket combinations", n)
	}
}
