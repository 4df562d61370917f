package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

func TestTemplateMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		template, sep, key string
		want               bool
	}{
		{"CUSTOMER#{customer_id}", "#", "CUSTOMER#1", true},
		{"CUSTOMER#{customer_id}", "#", "OTHERAPP#1", false},
		{"CUSTOMER#{customer_id}", "#", "CUSTOMER#", false},    // values are never empty
		{"CUSTOMER#{customer_id}", "#", "CUSTOMER#1#2", false}, // nor contain the separator
		{"CUSTOMER#{customer_id}", "#", "customer#1", false},
		{"PROFILE", "#", "PROFILE", true},
		{"PROFILE", "#", "PROFILE2", false},
		{"PROFILE", "#", "PROFIL", false},
		{"ORDER#{placed_at}#{order_id:12}", "#", "ORDER#2024-05-01T10:00:00.500000Z#000000000981", true},
		{"ORDER#{placed_at}#{order_id:12}", "#", "ORDER#2024-05-01T10:00:00.500000Z#00000000981", false}, // 11 digits
		{"ORDER#{placed_at}#{order_id:12}", "#", "ORDER#2024-05-01T10:00:00.500000Z#00000000098x", false},
		{"ORDER#{placed_at}#{order_id:12}", "#", "ORDER#000000000981", false},
		// A literal between placeholders may also occur inside a value:
		// every split is tried.
		{"T#{p}-{q}", "#", "T#a-b-c", true},
		{"T#{p}-{q}", "#", "T#a-", false},
		{"T#{p}-{q}", "#", "T#ab", false},
		{"{a}{b}", "#", "xy", true},
		{"{a}{b}", "#", "x", false},
		{"{a}:{b}", "#", "x:y:z", true},
		{"{{literal}}#{id}", "#", "{literal}#7", true},
		// A separator of several characters: a value may hold a part of it.
		{"A||{x}||{y}", "||", "A||a|b||c", true},
		{"A||{x}||{y}", "||", "A||a||b||c", false},
		{"{x}||END", "||", "a|||END", true},
		{"", "#", "", true},
	}
	for _, tc := range cases {
		tpl, err := mapping.ParseTemplate(tc.template)
		if err != nil {
			t.Fatalf("%q: %v", tc.template, err)
		}
		if got := tpl.Match(tc.key, tc.sep); got != tc.want {
			t.Errorf("%q.Match(%q, %q) = %v, want %v", tc.template, tc.key, tc.sep, got, tc.want)
		}
	}
}

// A long key with many ways to split it is still decided quickly (the
// matcher remembers what failed).
func TestTemplateMatchBacktracking(t *testing.T) {
	t.Parallel()
	tpl, err := mapping.ParseTemplate("{a}-{b}-{c}-{d}-{e}-{f}!")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Match(strings.Repeat("-x", 1000)+"?", "#") {
		t.Error("matched a key without the final literal")
	}
}

func TestEntityMatchesKey(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("m.yaml", []byte(header+`  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: "PROFILE" }
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "ORDER#{placed_at}#{order_id:10}" }
`))
	if err != nil {
		t.Fatal(err)
	}
	customer, order := m.Entity("Customer"), m.Entity("Order")
	if customer == nil || order == nil || m.Entity("Nobody") != nil {
		t.Fatalf("Entity lookup: %v %v", customer, order)
	}
	cases := []struct {
		e      *mapping.Entity
		pk, sk string
		want   bool
	}{
		{customer, "CUSTOMER#1", "PROFILE", true},
		{customer, "OTHERAPP#1", "PROFILE", false}, // type=Customer, but not a key this mapping writes
		{customer, "CUSTOMER#1", "ORDER#x#0000000001", false},
		{order, "CUSTOMER#1", "ORDER#x#0000000001", true},
		{order, "CUSTOMER#1", "PROFILE", false},
		{customer, "CUSTOMER#1", "", false},
	}
	for _, tc := range cases {
		if got := tc.e.MatchesKey(tc.pk, tc.sk, m.Separator); got != tc.want {
			t.Errorf("%s.MatchesKey(%q, %q) = %v, want %v", tc.e.Name, tc.pk, tc.sk, got, tc.want)
		}
		if got := m.MayProduce(tc.e.Name, tc.pk, tc.sk); got != tc.want {
			t.Errorf("MayProduce(%s, %q, %q) = %v, want %v", tc.e.Name, tc.pk, tc.sk, got, tc.want)
		}
	}
	if m.MayProduce("Nobody", "CUSTOMER#1", "PROFILE") {
		t.Error("an entity the mapping lacks may be produced")
	}
}

// A number sort key (one placeholder) matches any value; the string
// partition key is still checked.
func TestMayProduceTypedKeys(t *testing.T) {
	t.Parallel()
	m, err := mapping.Parse("m.yaml", []byte(`table: Shop
keys: { partition: PK, sort: { name: SK, type: N } }
entities:
  Order:
    from: orders
    key: { pk: "CUSTOMER#{customer_id}", sk: "{order_id}" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if !m.MayProduce("Order", "CUSTOMER#1", "981") || m.MayProduce("Order", "OTHER#1", "981") {
		t.Error("MayProduce with a number sort key")
	}
}
