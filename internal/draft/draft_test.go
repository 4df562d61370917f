package draft

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

var update = flag.Bool("update", false, "rewrite the golden draft")

func col(name string, k pgkind.Kind, typ string, notNull bool) mapping.Column {
	return mapping.Column{Name: name, Type: pgkind.Type{Name: typ, Kind: k}, NotNull: notNull}
}

// syntheticSource has the shapes that need care: reserved column names, a
// child whose prefix begins with its parent's, a table without a key, a
// key of a type no key can hold, a name that needs quoting, two foreign
// keys to one table, a self-reference, irregular plurals.
func syntheticSource() *Source {
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	add := func(name string, pk []string, unique [][]string, cols ...mapping.Column) {
		t := &mapping.Table{Schema: "app", Name: name, Columns: cols, PrimaryKey: pk}
		if pk != nil {
			t.Unique = append(t.Unique, pk)
		}
		t.Unique = append(t.Unique, unique...)
		cat.Tables["app."+name] = t
	}
	add("customers", []string{"customer_id"}, [][]string{{"email"}},
		col("customer_id", pgkind.Int, "bigint", true),
		col("email", pgkind.Text, "text", false),
		col("PK", pgkind.Text, "text", false), // would overwrite the table's key
		col("_type", pgkind.Text, "text", true),
		col("yes", pgkind.Bool, "boolean", false))
	add("customer_notes", []string{"note_id"}, nil,
		col("note_id", pgkind.Int, "integer", true),
		col("customer_id", pgkind.Int, "bigint", true),
		col("body", pgkind.Text, "text", true))
	add("order lines", []string{"line_id"}, nil,
		col("line_id", pgkind.Int, "smallint", true),
		col("customer_id", pgkind.Int, "bigint", true),
		col("sku", pgkind.Text, "text", true))
	add("friendships", []string{"user_id", "friend_id"}, nil,
		col("user_id", pgkind.Int, "bigint", true),
		col("friend_id", pgkind.Int, "bigint", true),
		col("since", pgkind.Date, "date", true))
	add("categories", []string{"category_id"}, nil,
		col("category_id", pgkind.UUID, "uuid", true),
		col("parent_id", pgkind.UUID, "uuid", false),
		col("name", pgkind.Text, "text", true))
	add("people", []string{"person_id"}, nil,
		col("person_id", pgkind.Text, "text", true),
		col("category_id", pgkind.UUID, "uuid", true))
	add("log", nil, nil, col("msg", pgkind.Text, "text", false))
	add("blobs", []string{"digest"}, nil, col("digest", pgkind.Bytea, "bytea", true))
	return &Source{
		Database: "shop", Schema: "app", Catalog: cat,
		Tables:  []string{"blobs", "categories", "customer_notes", "customers", "friendships", "log", "order lines", "people"},
		Ignored: map[string]string{"schema_migrations": "golang-migrate's migration history"},
		ForeignKeys: []ForeignKey{
			{Name: "categories_parent_fkey", Table: "categories", Columns: []string{"parent_id"}, RefTable: "categories", RefColumns: []string{"category_id"}},
			{Name: "customer_notes_customer_fkey", Table: "customer_notes", Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}, MaxChildren: 3, Measured: true},
			{Name: "friendships_friend_fkey", Table: "friendships", Columns: []string{"friend_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}, MaxChildren: 40, Measured: true},
			{Name: "friendships_user_fkey", Table: "friendships", Columns: []string{"user_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}, MaxChildren: 40, Measured: true},
			{Name: "order_lines_customer_fkey", Table: "order lines", Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}, MaxChildren: 30, Measured: true},
			{Name: "people_category_fkey", Table: "people", Columns: []string{"category_id"}, RefTable: "categories", RefColumns: []string{"category_id"}, MaxChildren: 1, Measured: true},
		},
	}
}

// The synthetic draft parses, passes Check against its catalog without a
// warning, and reads as the golden file says (testdata/init/synthetic.yaml,
// which the mapping package checks against the JSON Schema).
func TestSyntheticDraft(t *testing.T) {
	t.Parallel()
	src := syntheticSource()
	d, err := Make(src, Options{JSONSchema: "../../docs/schema/mapping.schema.json"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("synthetic.yaml", d.YAML)
	if err != nil {
		t.Fatalf("the draft does not parse:\n%v\n%s", err, d.YAML)
	}
	if ds := mapping.Check(m, src.Catalog); ds != nil {
		t.Fatalf("the draft does not pass Check:\n%v\n%s", ds, d.YAML)
	}
	if ws := mapping.Warnings(m, src.Catalog); ws != nil {
		t.Errorf("the draft has warnings:\n%v", ws)
	}
	if d.Table != "shop" || d.Entities != 6 || d.Offers != 2 || len(d.Skipped) != 2 {
		t.Errorf("summary: table %q, %d entities, %d offers, skipped %q", d.Table, d.Entities, d.Offers, d.Skipped)
	}
	golden := filepath.Join("..", "..", "testdata", "init", "synthetic.yaml")
	if *update {
		if err := os.WriteFile(golden, d.YAML, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./draft -update writes it)", err)
	}
	if string(d.YAML) != string(want) {
		t.Errorf("the draft differs from %s (go test ./draft -update rewrites it; review the diff):\n%s", golden, d.YAML)
	}

	// The choices the golden file shows, pinned here too.
	entities := map[string]*mapping.Entity{}
	for _, e := range m.Entities {
		entities[e.Name] = e
	}
	for name, want := range map[string][2]string{
		"Customer":     {"CUSTOMER#{customer_id}", "CUSTOMER#"}, // not "CUSTOMER": CUSTOMER_NOTE#... follows it
		"CustomerNote": {"CUSTOMER#{customer_id}", "CUSTOMER_NOTE#{note_id:10}"},
		"OrderLine":    {"CUSTOMER#{customer_id}", "ORDER_LINE#{line_id:5}"},
		"Friendship":   {"USER#{user_id}", "FRIEND#{friend_id:19}"},
		"Category":     {"CATEGORY#{category_id}", "CATEGORY"},
		"Person":       {"CATEGORY#{category_id}", "PERSON#{person_id}"},
	} {
		e := entities[name]
		if e == nil {
			t.Errorf("no entity %s", name)
			continue
		}
		if e.PK.Raw != want[0] || e.SK.Raw != want[1] {
			t.Errorf("%s key = %q, %q; want %q, %q", name, e.PK.Raw, e.SK.Raw, want[0], want[1])
		}
	}
	if e := entities["Customer"]; e == nil || e.AllColumns || len(e.Attributes) != 5 {
		t.Errorf("Customer must list its columns to rename PK and _type: %+v", e)
	}
}

// Every entity is read by its own primary key: a pattern of it alone whose
// parameters are its key columns, by GetItem on the table, or on an index
// where its partition is its parent's and the parent's key is not part of
// its own (a person under its category). Each pattern reads only the
// entities its SQL asks.
func TestDraftReadsEveryEntityByKey(t *testing.T) {
	t.Parallel()
	d := newDesign(syntheticSource(), Options{})
	byKey := map[string]string{}
	for _, e := range d.entities {
		for _, ap := range e.patterns {
			if ap.left != "" {
				t.Errorf("%s: %s left out: %s", e.name, ap.what, ap.left)
			}
			if len(ap.members) == 1 && ap.members[0].e == e && sameSet(ap.members[0].cols, e.key) && byKey[e.name] == "" {
				byKey[e.name] = fmt.Sprintf("%s %s %s", ap.name, ap.op, ap.cond())
			}
		}
	}
	want := map[string]string{
		"Category":     "category GetItem PK=CATEGORY#<category_id>, SK=CATEGORY",
		"Person":       "person Query GSI1 PK=PERSON#<person_id>, SK=PERSON",
		"Customer":     "customer GetItem PK=CUSTOMER#<customer_id>, SK=CUSTOMER#",
		"CustomerNote": "customerNote Query GSI1 PK=CUSTOMER_NOTE#<note_id>, SK=CUSTOMER_NOTE",
		"OrderLine":    "orderLine Query GSI1 PK=ORDER_LINE#<line_id>, SK=ORDER_LINE",
		"Friendship":   "friendship GetItem PK=USER#<user_id>, SK=FRIEND#<friend_id>",
	}
	for name, w := range want {
		if byKey[name] != w {
			t.Errorf("%s by its key: %q, want %q", name, byKey[name], w)
		}
	}
	if len(byKey) != len(d.entities) {
		t.Errorf("read by key: %v; entities: %d", byKey, len(d.entities))
	}
}

// An index entry goes to the first GSI where no other entity's entry has
// keys its pattern could read: two foreign keys named alike (a pk shape
// PARENT#{...}) with sort keys of one prefix cannot share a GSI.
func TestAllocateAvoidsLookalikes(t *testing.T) {
	t.Parallel()
	d := &design{}
	a := &entity{name: "A", indexes: []indexUse{{slot: 1, pk: "PARENT#{x}", sk: "NODE#{id:19}",
		pattern: &accessPattern{slot: 1, pk: keyPart{prefix: "PARENT", cols: []string{"x"}}, sk: keyPart{prefix: "NODE#"}, skOp: "begins_with"}}}}
	a.indexes[0].pattern.members = []member{{a, []string{"x"}}}
	a.table = &mapping.Table{Name: "a", Columns: []mapping.Column{col("x", pgkind.Int, "bigint", true)}}
	d.entities = []*entity{a}
	b := &entity{name: "B", table: &mapping.Table{Name: "b", Columns: []mapping.Column{col("y", pgkind.Int, "bigint", true)}}}
	mk := func(sk, lit string) indexUse {
		u := indexUse{pk: "PARENT#{y}", sk: sk, pattern: &accessPattern{pk: keyPart{prefix: "PARENT", cols: []string{"y"}}, sk: keyPart{prefix: lit}, skOp: "begins_with"}}
		u.pattern.members = []member{{b, []string{"y"}}}
		return u
	}
	got := d.allocate(b, []indexUse{mk("NODE#{id:19}", "NODE#"), mk("LEAF#{id:19}", "LEAF#")})
	if len(got) != 2 || got[0].slot != 2 || got[1].slot != 1 {
		t.Errorf("slots %+v: want the look-alike in GSI2 and the other in GSI1", got)
	}
}

// --embed writes exactly the offered blocks, uncommented.
func TestAcceptEmbeds(t *testing.T) {
	t.Parallel()
	src := syntheticSource()
	offered, err := Make(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := Make(src, Options{AcceptEmbeds: true})
	if err != nil {
		t.Fatal(err)
	}
	block := func(text string, marker string) string {
		var out []string
		in := false
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, marker+"embed:") {
				in = true
			} else if in && !strings.HasPrefix(l, marker+"  ") {
				in = false
			}
			if in {
				out = append(out, "    "+strings.TrimPrefix(l, marker))
			}
		}
		return strings.Join(out, "\n")
	}
	uncommented := block(string(offered.YAML), "    # ")
	active := block(string(accepted.YAML), "    ")
	if uncommented == "" || uncommented != active {
		t.Fatalf("uncommenting the offers:\n%s\ndoes not give the accepted embeds:\n%s", uncommented, active)
	}
	m, err := mapping.Parse("accepted.yaml", accepted.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, src.Catalog); ds != nil {
		t.Fatalf("the accepted draft does not pass Check:\n%v", ds)
	}
	var embeds []string
	for _, e := range m.Entities {
		for _, em := range e.Embeds {
			embeds = append(embeds, e.Name+"."+em.Attribute+" max "+strconv.Itoa(em.Max))
		}
	}
	if got := strings.Join(embeds, ", "); got != "Category.people max 5, Customer.customerNotes max 10" {
		t.Errorf("embeds: %s", got)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"customers": "Customer", "order_items": "OrderItem", "addresses": "Address", "categories": "Category",
		"statuses": "Status", "people": "Person", "job_history": "JobHistory", "OrderLines": "OrderLine",
		"boxes": "Box", "bus": "Bus", "order lines": "OrderLine", "2fa_codes": "T2faCode", "news": "News",
		"warehouses": "Warehouse", "analyses": "Analysis", "indices": "Index", "children": "Child", "movies": "Movie",
	} {
		if got := entityName(in); got != want {
			t.Errorf("entityName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"OrderItem": "ORDER_ITEM", "shipping_address_id": "SHIPPING_ADDRESS", "id": "ID", "manager_id": "MANAGER"} {
		if got := keyPrefix(in); got != want {
			t.Errorf("keyPrefix(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"order": "an order", "user": "a user", "item": "an item", "unit": "a unit", "book": "a book", "employee": "an employee"} {
		if got := article(in); got != want {
			t.Errorf("article(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"customers": "customers", "yes": `"yes"`, "Null": `"Null"`, "order lines": `"order lines"`, "a:b": `"a:b"`,
		"#x": `"#x"`, "naïve": `"naïve"`, `q"uote`: `"q\"uote"`, "x.y-z": "x.y-z", "1abc": `"1abc"`,
	} {
		if got := scalar(in); got != want {
			t.Errorf("scalar(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"shop": "shop", "ab": "db_ab", "my db!": "my_db", "x": "db_x", "": "db_"} {
		if got := tableName(in); got != want || mapping.TableNameProblem("table", got) != "" {
			t.Errorf("tableName(%q) = %q, want %q, a valid name", in, got, want)
		}
	}
	for in, want := range map[string]string{"friend": "friends", "category": "categories", "box": "boxes", "day": "days", "order item": "order items", "job history": "job histories", "person": "people"} {
		if got := pluralize(in); got != want {
			t.Errorf("pluralize(%q) = %q, want %q", in, got, want)
		}
	}
	for observed, want := range map[int64]int64{1: 5, 3: 10, 5: 10, 8: 20, 20: 40, 60000: 100000} {
		if got := headroom(observed); got != want {
			t.Errorf("headroom(%d) = %d, want %d", observed, got, want)
		}
	}
}

// The SQL of the patterns compares a column of an enum (or domain) type as
// text, since prove makes up values that do not exist and the type would
// reject them; it sorts as the key sorts, and an item collection is a
// union with the key columns of each entity.
func TestPatternSQL(t *testing.T) {
	t.Parallel()
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	cat.Tables["public.statuses"] = &mapping.Table{Schema: "public", Name: "statuses", PrimaryKey: []string{"status"}, Unique: [][]string{{"status"}},
		Columns: []mapping.Column{col("status", pgkind.Text, "order_status", true), col("label", pgkind.Text, "text", true)}}
	cat.Tables["public.orders"] = &mapping.Table{Schema: "public", Name: "orders", PrimaryKey: []string{"order_id"}, Unique: [][]string{{"order_id"}},
		Columns: []mapping.Column{col("order_id", pgkind.Int, "bigint", true), col("status", pgkind.Text, "order_status", true), col("total", pgkind.Numeric, "numeric(10,2)", true)}}
	src := &Source{Database: "shop", Schema: "public", Catalog: cat, Tables: []string{"orders", "statuses"},
		ForeignKeys: []ForeignKey{{Name: "orders_status_fkey", Table: "orders", Columns: []string{"status"}, RefTable: "statuses", RefColumns: []string{"status"}}}}
	d := newDesign(src, Options{})
	got := map[string]string{}
	for _, e := range d.entities {
		for _, ap := range e.patterns {
			got[ap.name] = ap.sql("public")
		}
	}
	want := map[string]string{
		"status": "SELECT * FROM statuses WHERE status::text = @status",
		"statusCollection": "SELECT 'Status' AS _type, status::text AS status, NULL::bigint AS order_id FROM statuses WHERE status::text = @status\n" +
			"UNION ALL\nSELECT 'Order', status::text, order_id FROM orders WHERE status::text = @status",
		"ordersOfStatus": "SELECT * FROM orders WHERE status::text = @status ORDER BY order_id",
		"order":          "SELECT * FROM orders WHERE order_id = @order_id",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("patterns: %v", got)
	}
}

// A Query's SQL sorts as its sort key does only when each column's key text
// sorts like its values and only the last is of variable width; else the
// pattern is compared unordered, with the reason.
func TestOrdering(t *testing.T) {
	t.Parallel()
	tbl := &mapping.Table{Name: "t", Columns: []mapping.Column{
		col("p", pgkind.Text, "text", true), col("id", pgkind.Int, "bigint", true), col("name", pgkind.Text, "text", true),
		col("code", pgkind.Text, "character(3)", true), col("amount", pgkind.Numeric, "numeric", true), col("at", pgkind.Timestamptz, "timestamp with time zone", true),
	}}
	e := &entity{table: tbl}
	for _, tc := range []struct {
		order     []string
		want, why string
	}{
		{[]string{"p", "id", "name"}, `id, name COLLATE "C"`, ""},
		{[]string{"at", "code"}, `at, code::text COLLATE "C"`, ""},
		{[]string{"name", "id"}, "", "the sort key holds name, of variable width, before other columns"},
		{[]string{"name", "p"}, "", "the sort key holds name, of variable width, before other columns"},
		{[]string{"amount"}, "", "the sort key holds amount (numeric), whose key text does not sort as its values do"},
	} {
		ap := &accessPattern{members: []member{{e, []string{"p"}}}, order: tc.order}
		got, why := ap.ordering()
		if got != tc.want || why != tc.why {
			t.Errorf("%v: %q, %q; want %q, %q", tc.order, got, why, tc.want, tc.why)
		}
	}
}

// A pattern that could read another entity's items by chance is listed but
// not written out: friendships keyed USER#{user_id} (a customer, named by
// its column) share the partitions of the users table's own USER#{user_id},
// so the query for a user with its sessions would return friendships too.
func TestPatternLeftOut(t *testing.T) {
	t.Parallel()
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	add := func(name string, pk []string, cols ...mapping.Column) {
		cat.Tables["public."+name] = &mapping.Table{Schema: "public", Name: name, Columns: cols, PrimaryKey: pk, Unique: [][]string{pk}}
	}
	add("users", []string{"user_id"}, col("user_id", pgkind.Int, "bigint", true))
	add("sessions", []string{"session_id"}, col("session_id", pgkind.Int, "bigint", true), col("user_id", pgkind.Int, "bigint", true))
	add("customers", []string{"customer_id"}, col("customer_id", pgkind.Int, "bigint", true))
	add("friendships", []string{"user_id", "friend_id"}, col("user_id", pgkind.Int, "bigint", true), col("friend_id", pgkind.Int, "bigint", true))
	src := &Source{Database: "app", Schema: "public", Catalog: cat, Tables: []string{"customers", "friendships", "sessions", "users"},
		ForeignKeys: []ForeignKey{
			{Name: "f_friend", Table: "friendships", Columns: []string{"friend_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}},
			{Name: "f_user", Table: "friendships", Columns: []string{"user_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}},
			{Name: "s_user", Table: "sessions", Columns: []string{"user_id"}, RefTable: "users", RefColumns: []string{"user_id"}},
		}}
	d := newDesign(src, Options{})
	left := map[string]string{}
	for _, e := range d.entities {
		for _, ap := range e.patterns {
			if ap.left != "" {
				left[ap.name] = ap.left
			}
		}
	}
	if len(left) != 1 || left["userCollection"] != "items of Friendship have keys of the same shape, so its answer may hold them too" {
		t.Errorf("left out: %v", left)
	}
	dr, err := Make(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("app.yaml", dr.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatalf("Check: %v\n%s", ds, dr.YAML)
	}
	if !strings.Contains(string(dr.YAML), "#   Not written out below: a user with its sessions, since items of Friendship") ||
		strings.Contains(string(dr.YAML), "  userCollection:") {
		t.Errorf("the left-out pattern:\n%s", dr.YAML)
	}
}
