package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// uniqueCatalog adds tables with several kinds of unique keys to the test
// catalog.
func uniqueCatalog() *mapping.Catalog {
	cat := testCatalog()
	cat.Tables["public.lines"] = &mapping.Table{Schema: "public", Name: "lines",
		Columns: []mapping.Column{
			col("order_id", pgkind.Int, "bigint", true), col("line", pgkind.Int, "integer", true),
			col("sku", pgkind.Text, "text", true), col("code", pgkind.Text, "text", false),
		},
		PrimaryKey: []string{"order_id", "line"},
		Unique:     [][]string{{"order_id", "line"}, {"sku"}, {"code"}},
	}
	return cat
}

func TestProveUniqueKeys(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		entities string
		want     map[string]string // entity -> "" when proven, else a part of the reason
	}{
		{
			name: "primary key with separators; entities told apart by literals",
			entities: `  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "PROFILE" }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id}" }
  Line:
    from: lines
    key: { pk: "ORDER#{order_id}", sk: "LINE#{line}" }
`,
			want: map[string]string{"Customer": "", "Order": "", "Line": ""},
		},
		{
			name: "zero padding delimits a placeholder; another unique key serves",
			entities: `  Line:
    from: lines
    key: { pk: "L#{order_id:12}{line}", sk: "X" }
  Sku:
    from: lines
    key: { pk: "SKU#{sku}", sk: "X" }
`,
			want: map[string]string{"Line": "", "Sku": ""},
		},
		{
			name: "placeholders without a separator between them",
			entities: `  Line:
    from: lines
    key: { pk: "L#{order_id}-{line}", sk: "X" }
`,
			want: map[string]string{"Line": `two placeholders meet without the separator "#"`},
		},
		{
			name: "part of the primary key, or a NULL-able unique key",
			entities: `  Line:
    from: lines
    key: { pk: "ORDER#{order_id}", sk: "X" }
  Code:
    from: lines
    key: { pk: "CODE#{code}", sk: "X" }
`,
			want: map[string]string{"Line": "does not contain every column", "Code": "does not contain every column"},
		},
		{
			name: "two entities of one table with the same key shape",
			entities: `  A:
    from: orders
    key: { pk: "O#{order_id}", sk: "X" }
  B:
    from: orders
    key: { pk: "O#{customer_id}", sk: "X" }
`,
			want: map[string]string{"A": "could equal keys of B", "B": "does not contain every column"},
		},
		{
			name: "literal segments tell keys apart, or could match a value",
			entities: `  A:
    from: orders
    key: { pk: "O#{order_id}", sk: "A" }
  B:
    from: customers
    key: { pk: "O#{customer_id}", sk: "B#X" }
  C:
    from: lines
    key: { pk: "O#{order_id}#{line}", sk: "A" }
  D:
    from: customers
    key: { pk: "O#{customer_id}", sk: "{name}" }
`,
			want: map[string]string{"A": "could equal keys of D", "B": "", "C": "", "D": "could equal keys of A"},
		},
		{
			// lower gives "ABC" and "abc" one text: a unique key read
			// through a value function proves nothing.
			name: "a unique key through a value function",
			entities: `  Sku:
    from: lines
    key: { pk: "SKU#{sku|lower}", sk: "X" }
`,
			want: map[string]string{"Sku": "does not contain every column"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte("table: Things\nkeys: { partition: PK, sort: SK }\nentities:\n"+tt.entities))
			if err != nil {
				t.Fatal(err)
			}
			cat := uniqueCatalog()
			if ds := mapping.Check(m, cat); ds != nil {
				// Check refuses some of these; the proof must still be sound.
				t.Logf("check: %v", ds)
			}
			proof := mapping.ProveUniqueKeys(m, cat)
			if len(proof.Entities) != len(tt.want) {
				t.Fatalf("%d entities in the proof, want %d", len(proof.Entities), len(tt.want))
			}
			all := true
			for _, e := range proof.Entities {
				want := tt.want[e.Entity]
				all = all && want == ""
				switch {
				case want == "" && !e.Unique:
					t.Errorf("%s: not proven unique (%s)", e.Entity, e.Reason)
				case want != "" && e.Unique:
					t.Errorf("%s: proven unique (%s), want not: %s", e.Entity, e.Reason, want)
				case want != "" && !strings.Contains(e.Reason, want):
					t.Errorf("%s: reason %q, want it to mention %q", e.Entity, e.Reason, want)
				}
			}
			if proof.Proven() != all {
				t.Errorf("Proven() = %v, want %v", proof.Proven(), all)
			}
		})
	}
}

// FuzzTemplatesDisjoint checks the disjointness proof against rendering:
// two templates proven disjoint never render the same key, whatever the
// values (without the separator, not empty).
func FuzzTemplatesDisjoint(f *testing.F) {
	f.Add("A#{x}", "A#{y}#B", "1", "2")
	f.Add("{x}#B", "A#{y}", "A", "B")
	f.Add("P{x}", "PQ{y}", "Q1", "1")
	f.Fuzz(func(t *testing.T, a, b, v1, v2 string) {
		ta, err1 := mapping.ParseTemplate(a)
		tb, err2 := mapping.ParseTemplate(b)
		if err1 != nil || err2 != nil || v1 == "" || v2 == "" || strings.Contains(v1+v2, "#") {
			return
		}
		render := func(t *mapping.Template, v string) string {
			var s strings.Builder
			for _, p := range t.Parts {
				if p.Column == "" {
					s.WriteString(p.Literal)
				} else {
					s.WriteString(v)
				}
			}
			return s.String()
		}
		// Every placeholder of a takes v1, of b v2: one of many value
		// choices, enough to find a wrong proof.
		if mapping.TemplatesDisjoint(ta, tb, "#") && render(ta, v1) == render(tb, v2) {
			t.Fatalf("%q and %q proven disjoint, but both render %q", a, b, render(ta, v1))
		}
	})
}
