package mapping_test

import (
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

// FuzzParse feeds arbitrary bytes to the mapping parser and, when they
// parse, to Check (and what they partly parse to, as validate does):
// neither may panic, and every diagnostic has a position
// and a message, sorted.
func FuzzParse(f *testing.F) {
	f.Add([]byte(header + "  C: { from: customers, key: { pk: \"C#{customer_id}\", sk: S } }\n"))
	f.Add([]byte("table: [\n"))
	f.Add([]byte("entities: {A: {embed: {x: {max: 0}}, copy: [{}], index: {G: {shard: {count: auto}}}}}"))
	f.Add([]byte("table: Orders\nkeys: { partition: PK, sort: { name: SK, type: N } }\nindexes:\n  LSI1: { local: true, sort: LS, projection: KEYS_ONLY }\n  GSI1: { partition: { name: GP, type: B }, projection: { include: [n] } }\n" +
		"entities:\n  O:\n    from: orders\n    where: \"total > 0 AND customer_id IN (1, 2)\"\n    key: { pk: 'O#{\"order_id\"|signed:5}', sk: \"{order_id}\" }\n    copy: [{ from: customers, join: { customer_id: customer_id }, into: c, attributes: { n: name } }]\n" +
		"    index: { LSI1: { sk: \"{c.name|lower}\" }, GSI1: { pk: X, empty: absent, where: c.email IS NULL } }\n" +
		"accessPatterns:\n  p:\n    params: { id: orders.order_id }\n    query: { index: LSI1, pk: \"O#{id|signed:5}\", sk: { begins_with: a } }\n    sql: SELECT @id\n"))
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := mapping.Parse("f.yaml", data)
		var ds mapping.Diagnostics
		if err != nil {
			var ok bool
			if ds, ok = err.(mapping.Diagnostics); !ok {
				t.Fatalf("error is %T, not Diagnostics: %v", err, err)
			}
			if len(ds) == 0 {
				t.Fatal("empty Diagnostics returned as an error")
			}
		} else {
			ds = mapping.Check(m, cat)
		}
		// What a file with problems parses to is checked too, for the
		// one-pass report of validate.
		if pm, parsed := mapping.ParsePartial("f.yaml", data); pm != nil {
			if all := mapping.MergeDiagnostics(parsed, mapping.Check(pm, cat)); len(all) < len(ds) {
				t.Fatalf("one pass lost problems: %v of %v", all, ds)
			}
		}
		for i, d := range ds {
			if d.Line < 1 || d.Col < 1 || d.Msg == "" || d.File != "f.yaml" {
				t.Fatalf("bad diagnostic %+v", d)
			}
			if i > 0 && (ds[i-1].Line > d.Line || ds[i-1].Line == d.Line && ds[i-1].Col > d.Col) {
				t.Fatalf("diagnostics not sorted: %v", ds)
			}
		}
	})
}
