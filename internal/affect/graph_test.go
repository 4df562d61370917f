package affect

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// bookstoreCatalog is the catalog of the sample bookstore (sql/migrations),
// written out by hand.
func bookstoreCatalog() *mapping.Catalog {
	col := func(name, typ string, kind pgkind.Kind, notNull bool) mapping.Column {
		return mapping.Column{Name: name, Type: pgkind.Type{Name: typ, Kind: kind}, NotNull: notNull}
	}
	id := func(name string) mapping.Column { return col(name, "bigint", pgkind.Int, true) }
	text := func(name string, notNull bool) mapping.Column { return col(name, "text", pgkind.Text, notNull) }
	tables := []*mapping.Table{
		{Name: "customers", PrimaryKey: []string{"customer_id"}, Unique: [][]string{{"customer_id"}, {"email"}}, Columns: []mapping.Column{
			id("customer_id"), text("name", true), text("email", false), text("phone", false), col("created_at", "timestamp with time zone", pgkind.Timestamptz, true)}},
		{Name: "addresses", PrimaryKey: []string{"address_id"}, Unique: [][]string{{"address_id"}, {"customer_id", "label"}}, Columns: []mapping.Column{
			id("address_id"), id("customer_id"), text("label", true), text("line1", true), text("line2", false), text("city", true),
			text("postal_code", true), col("country", "character(2)", pgkind.Text, true)}},
		{Name: "authors", PrimaryKey: []string{"author_id"}, Unique: [][]string{{"author_id"}}, Columns: []mapping.Column{
			id("author_id"), text("name", true), col("birth_year", "integer", pgkind.Int, false), col("country", "character(2)", pgkind.Text, false)}},
		{Name: "books", PrimaryKey: []string{"book_id"}, Unique: [][]string{{"book_id"}, {"isbn"}}, Columns: []mapping.Column{
			id("book_id"), id("author_id"), text("isbn", true), text("title", true), col("price", "numeric(10,2)", pgkind.Numeric, true),
			col("published", "date", pgkind.Date, false), {Name: "tags", Type: pgkind.Type{Name: "text[]", Kind: pgkind.Array, Elem: pgkind.Text}, NotNull: true},
			col("metadata", "jsonb", pgkind.JSON, false)}},
		{Name: "orders", PrimaryKey: []string{"order_id"}, Unique: [][]string{{"order_id"}}, Columns: []mapping.Column{
			id("order_id"), id("customer_id"), col("status", "order_status", pgkind.Text, true), col("placed_at", "timestamp with time zone", pgkind.Timestamptz, true),
			col("total", "numeric(12,2)", pgkind.Numeric, true), col("shipping_address_id", "bigint", pgkind.Int, false)}},
		{Name: "order_items", PrimaryKey: []string{"order_id", "book_id"}, Unique: [][]string{{"order_id", "book_id"}}, Columns: []mapping.Column{
			id("order_id"), id("book_id"), col("quantity", "integer", pgkind.Int, true), col("unit_price", "numeric(10,2)", pgkind.Numeric, true)}},
	}
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	for _, t := range tables {
		t.Schema = "public"
		cat.Tables["public."+t.Name] = t
	}
	return cat
}

func bookstoreGraph(t *testing.T) *Graph {
	t.Helper()
	data, err := os.ReadFile("../../testdata/bookstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("bookstore.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	cat := bookstoreCatalog()
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatal(ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(plan, cat)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func pub(name string) replicate.Table { return replicate.Table{Schema: "public", Name: name} }

func TestGraphEdges(t *testing.T) {
	t.Parallel()
	g := bookstoreGraph(t)
	var tables []string
	for _, tb := range g.Tables() {
		tables = append(tables, tb.String())
	}
	want := []string{"public.addresses", "public.authors", "public.books", "public.customers", "public.order_items", "public.orders"}
	if !slices.Equal(tables, want) {
		t.Errorf("tables %v, want %v", tables, want)
	}
	var got []string
	for _, tb := range g.Tables() {
		for _, e := range g.byTable[tb] {
			line := tb.String() + ": " + e.via
			if e.direct != nil {
				line += " (direct)"
			}
			got = append(got, line)
		}
	}
	slices.Sort(got)
	wantEdges := []string{
		"public.addresses: Customer embeds public.addresses (direct)",
		"public.addresses: Order copies from public.addresses",
		"public.authors: Author built from public.authors (direct)",
		"public.authors: Book copies from public.authors",
		"public.authors: OrderLine copies from public.authors",
		"public.books: Book built from public.books (direct)",
		"public.books: OrderLine copies from public.books",
		"public.customers: Customer built from public.customers (direct)",
		"public.order_items: OrderLine built from public.order_items (direct)",
		"public.orders: Order, OrderSummary built from public.orders (direct)",
	}
	if !slices.Equal(got, wantEdges) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEdges, "\n"))
	}
	// The author hop of OrderLine matches books joined to the line.
	for _, e := range g.byTable[pub("authors")] {
		if strings.HasPrefix(e.via, "OrderLine") && (e.ref != 0 || e.joins != 1 || e.refCols[0].Name != "author_id") {
			t.Errorf("OrderLine's author hop: ref %d, joins %d, columns %v", e.ref, e.joins, e.refCols)
		}
	}
}

func TestRequirements(t *testing.T) {
	t.Parallel()
	g := bookstoreGraph(t)
	byTable := map[string]Requirement{}
	for _, r := range g.Requirements() {
		byTable[r.Table.Name] = r
	}
	for _, c := range []struct {
		table   string
		columns []string
		pk      []string // the default identity
		fails   bool
	}{
		{"orders", []string{"order_id", "customer_id", "placed_at"}, []string{"order_id"}, true},
		{"addresses", []string{"customer_id", "address_id"}, []string{"address_id"}, true},
		{"order_items", []string{"order_id", "book_id"}, []string{"order_id", "book_id"}, false},
		{"customers", []string{"customer_id"}, []string{"customer_id"}, false},
		{"books", []string{"book_id"}, []string{"book_id"}, false},
		{"authors", []string{"author_id"}, []string{"author_id"}, false},
	} {
		r := byTable[c.table]
		if !slices.Equal(r.Columns, c.columns) {
			t.Errorf("%s needs %v, want %v", c.table, r.Columns, c.columns)
		}
		err := r.Check(extract.Identity{Mode: extract.IdentityDefault, Columns: c.pk})
		var ie *IdentityError
		if c.fails != errors.As(err, &ie) {
			t.Errorf("%s with its primary key as identity: %v", c.table, err)
		}
		if err := r.Check(extract.Identity{Mode: extract.IdentityFull}); err != nil {
			t.Errorf("%s with REPLICA IDENTITY FULL: %v", c.table, err)
		}
	}
	err := byTable["orders"].Check(extract.Identity{Mode: extract.IdentityDefault, Columns: []string{"order_id"}})
	want := `table public.orders: REPLICA IDENTITY DEFAULT (order_id) lacks customer_id, placed_at, which deletes and key changes need (the keys of Order, OrderSummary items are built from order_id, customer_id, placed_at); run: ALTER TABLE "public"."orders" REPLICA IDENTITY FULL;`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// change builds a change of a bookstore table; values by column name, nil
// for NULL, absent for not sent.
func change(op replicate.Op, table string, identity byte, newRow, oldRow map[string]*string) *replicate.Change {
	cat := bookstoreCatalog()
	tb := cat.Lookup("public", table)
	rel := &replicate.Relation{Table: pub(table), Identity: identity}
	for _, c := range tb.Columns {
		rel.Columns = append(rel.Columns, replicate.RelationColumn{Name: c.Name, Key: identity == 'f' || slices.Contains(tb.PrimaryKey, c.Name)})
	}
	version := func(vals map[string]*string) []replicate.Value {
		if vals == nil {
			return nil
		}
		out := make([]replicate.Value, len(tb.Columns))
		for i, c := range tb.Columns {
			v, ok := vals[c.Name]
			switch {
			case !ok:
				out[i].Null = true // as pgoutput sends the columns of a key-only version
			case v == nil:
				out[i].Null = true
			default:
				out[i].Text = *v
			}
		}
		return out
	}
	c := &replicate.Change{Op: op, Rel: rel, New: version(newRow), Old: version(oldRow)}
	c.OldKeyOnly = oldRow != nil && identity != 'f'
	return c
}

func str(s string) *string { return &s }

func TestBatchAdd(t *testing.T) {
	t.Parallel()
	g := bookstoreGraph(t)
	src := func(table string) *transform.Source {
		for _, s := range g.plan.Sources {
			if s.Query.Table == table {
				return s
			}
		}
		t.Fatalf("no source %s", table)
		return nil
	}
	addressRow := map[string]*string{"address_id": str("7"), "customer_id": str("3"), "label": str("home"), "line1": str("1 Main St"),
		"city": str("Porto"), "postal_code": str("4000"), "country": str("PT")}
	moved := map[string]*string{}
	for k, v := range addressRow {
		moved[k] = v
	}
	moved["customer_id"] = str("4")

	b := g.NewBatch()
	// An address moved to another customer: both customers' embedded maps
	// (direct, by the customer key) and the orders shipping there (a
	// lookup) are affected.
	if err := b.Add(change(replicate.Update, "addresses", 'f', moved, addressRow)); err != nil {
		t.Fatal(err)
	}
	customers := b.rows[src("customers")]
	if customers == nil || len(customers.values) != 2 || *customers.values[0][0] != "4" || *customers.values[1][0] != "3" {
		t.Errorf("customers to render: %+v", customers)
	}
	var orderLookup *tuples
	for e, lk := range b.lookups {
		if e.via == "Order copies from public.addresses" {
			orderLookup = lk
		}
	}
	if orderLookup == nil || len(orderLookup.values) != 1 || *orderLookup.values[0][0] != "7" {
		t.Errorf("orders to look up: %+v", orderLookup)
	}
	if b.changes[0].desc != "update of public.addresses (address_id=7)" {
		t.Errorf("description %q", b.changes[0].desc)
	}

	// An order deleted: its items go by the keys of its old version.
	old := map[string]*string{"order_id": str("9"), "customer_id": str("3"), "status": str("OPEN"), "placed_at": str("2024-05-01 10:00:00+00"), "total": str("1.00")}
	if err := b.Add(change(replicate.Delete, "orders", 'f', nil, old)); err != nil {
		t.Fatal(err)
	}
	orders := src("orders")
	if o := b.old[orders]; o == nil || len(o.values) != 1 || len(o.values[0]) != 3 {
		t.Errorf("old versions of orders: %+v", b.old[orders])
	}
	if r := b.rows[orders]; r == nil || len(r.values) != 1 || *r.values[0][0] != "9" {
		t.Errorf("orders to render: %+v", b.rows[orders])
	}

	// The same delete with only the primary key sent cannot name the
	// order's items: the identity must be FULL.
	err := g.NewBatch().Add(change(replicate.Delete, "orders", 'd', nil, map[string]*string{"order_id": str("9")}))
	var ie *IdentityError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "REPLICA IDENTITY FULL") {
		t.Errorf("delete with a key-only old version: %v", err)
	}

	// A NULL join value joins nothing: an order without a shipping
	// address affects only its own items.
	b = g.NewBatch()
	noAddress := map[string]*string{"order_id": str("10"), "customer_id": str("3"), "status": str("OPEN"), "placed_at": str("2024-05-01 10:00:00+00"), "total": str("1.00"), "shipping_address_id": nil}
	if err := b.Add(change(replicate.Insert, "orders", 'f', noAddress, nil)); err != nil {
		t.Fatal(err)
	}
	if len(b.lookups) != 0 || len(b.old) != 0 || b.rows[orders] == nil {
		t.Errorf("insert of an order: rows %v, lookups %v, old %v", b.rows, b.lookups, b.old)
	}
}

func TestTruncated(t *testing.T) {
	t.Parallel()
	g := bookstoreGraph(t)
	entities, sources := g.Truncated([]replicate.Table{pub("order_items"), pub("authors")})
	var names []string
	for _, s := range sources {
		names = append(names, s.Name)
	}
	if !slices.Equal(entities, []string{"Author", "OrderLine"}) || !slices.Equal(names, []string{"public.order_items", "public.authors", "public.books"}) {
		t.Errorf("entities %v, sources %v", entities, names)
	}
	if e, s := g.Truncated([]replicate.Table{pub("unmapped")}); len(e)+len(s) != 0 {
		t.Errorf("an unmapped table: %v %v", e, s)
	}
}

// TestItemKey: two items get one key exactly when their key attributes
// are equal in type and value, however the text falls between them.
func TestItemKey(t *testing.T) {
	t.Parallel()
	m := &mapping.Mapping{PartitionKey: "PK", SortKey: "SK"}
	item := func(pk, sk types.AttributeValue) transform.Item {
		return transform.Item{Attrs: map[string]types.AttributeValue{"PK": pk, "SK": sk, "other": s("x")}}
	}
	keys := []transform.Item{
		item(s("a"), s("bc")),
		item(s("ab"), s("c")),
		item(s("1"), s("x")),
		item(&types.AttributeValueMemberN{Value: "1"}, s("x")),
		item(&types.AttributeValueMemberB{Value: []byte("1")}, s("x")),
		item(s("1:Sx"), s("")),
		item(s(""), s("")),
		item(s("a"), nil),
	}
	seen := map[string]int{}
	for i, it := range keys {
		k := itemKey(m, it)
		if j, dup := seen[k]; dup {
			t.Errorf("items %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
		again := item(it.Attrs["PK"], it.Attrs["SK"])
		again.Attrs["other"] = s("y")
		if k2 := itemKey(m, again); k2 != k {
			t.Errorf("item %d: key %q, with another non-key attribute %q", i, k, k2)
		}
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
