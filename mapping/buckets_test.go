package mapping_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

const bucketEntities = header + `  Order:
    from: orders
    key: { pk: "ORDERS#{customer_id}#{placed_at|year}", sk: "ORDER#{placed_at}#{order_id:10}" }
accessPatterns:
`

// TestBuckets: a query pattern's buckets parse into their values and
// every combination; every refusal is pinned.
func TestBuckets(t *testing.T) {
	t.Parallel()
	ok := bucketEntities + `  latest:
    params: { id: customers.customer_id }
    query: { pk: "ORDERS#{id}#{year}", buckets: { year: { from: 2023, to: 2025 } }, direction: desc, limit: 10 }
    sql: SELECT order_id FROM orders WHERE customer_id = @id ORDER BY placed_at DESC LIMIT 10
  two:
    query: { pk: "ORDERS#{c}#{y}", buckets: { c: [A, B], y: [2024, "2025"] } }
    sql: SELECT 1
`
	m, err := mapping.Parse("m.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, testCatalog()); ds != nil {
		t.Fatal(ds)
	}
	latest, two := m.AccessPatterns[0], m.AccessPatterns[1]
	if b := latest.Buckets[0]; b.Name != "year" || strings.Join(b.Values, ",") != "2023,2024,2025" || !b.Int || !latest.FansOut() || latest.BucketText() != "year in 2023..2025" {
		t.Errorf("latest: bucket %+v, text %q", b, latest.BucketText())
	}
	if got := fmt.Sprint(two.FanOut()); got != "[map[c:A y:2024] map[c:A y:2025] map[c:B y:2024] map[c:B y:2025]]" || two.Buckets[0].Int || !two.Buckets[1].Int {
		t.Errorf("two: fan-out %s, buckets %+v %+v", got, two.Buckets[0], two.Buckets[1])
	}

	pat := func(query string) string {
		return bucketEntities + "  p:\n    params: { id: customers.customer_id }\n    query: " + query + "\n    sql: SELECT 1\n"
	}
	cases := []struct{ name, src, want string }{
		{"bucket not in the pk", pat(`{ pk: "ORDERS#{id}#2024", buckets: { year: [2024] } }`),
			`m.yaml:12:49: access pattern p: bucket year is not in the pk "ORDERS#{id}#2024": write {year} where the partition key holds it`},
		{"bucket in the sk", pat(`{ pk: "ORDERS#{id}#{year}", sk: "ORDER#{year}", buckets: { year: [2024] } }`),
			`m.yaml:12:51: access pattern p: {year} is a bucket: it belongs in the pk, where it picks the partitions the query fans out over`},
		{"bucket named like a parameter", pat(`{ pk: "ORDERS#{id}", buckets: { id: [1, 2] } }`),
			`m.yaml:12:44: access pattern p: bucket id is also a parameter: name one of them otherwise`},
		{"bucket named shard", pat(`{ pk: "ORDERS#{id}#{shard}", buckets: { shard: [1, 2] } }`),
			`m.yaml:12:52: bucket shard: {shard} is the shard number of a sharded index; name the bucket otherwise`},
		{"empty list", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: [] } }`),
			`m.yaml:12:57: bucket year has no values: list them, or give a range { from: N, to: M }`},
		{"value twice", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: [2024, 2024] } }`),
			`m.yaml:12:64: bucket year: value "2024" is listed twice`},
		{"range downwards", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: { from: 2025, to: 2024 } } }`),
			`m.yaml:12:57: bucket year: the range 2025 to 2024 must run upwards over at most 1000 values`},
		{"range without to", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: { from: 2025 } } }`),
			`m.yaml:12:57: bucket year: a range needs from and to (both included)`},
		{"range of text", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: { from: a, to: 2024 } } }`),
			`m.yaml:12:65: bucket year from must be a whole number, not "a"`},
		{"bucket a string", pat(`{ pk: "ORDERS#{id}#{year}", buckets: { year: 2024 } }`),
			`m.yaml:12:57: bucket year must be a list of values or a range { from: N, to: M }, not "2024"`},
		{"too many partitions", pat(`{ pk: "ORDERS#{id}#{a}#{b}", buckets: { a: { from: 1, to: 100 }, b: { from: 1, to: 11 } } }`),
			`m.yaml:12:77: buckets: 1100 partitions per parameter set, more than 1000`},
		{"buckets on a get", bucketEntities + "  p:\n    params: { id: customers.customer_id }\n    get: { pk: \"ORDERS#{id}#{year}\", sk: X, buckets: { year: [2024] } }\n    sql: SELECT 1\n",
			"m.yaml:12:29: access pattern p: {year} is not a parameter: declare it under params\nm.yaml:12:45: unknown field \"buckets\" in get"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := mapping.Parse("m.yaml", []byte(tc.src))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("diagnostics:\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
