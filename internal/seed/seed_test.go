package seed

import (
	"encoding/json"
	"iter"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		want    Config
		wantErr string
	}{
		{name: "zero gets defaults", cfg: Config{}, want: Config{Scale: DefaultScale}},
		{name: "explicit kept", cfg: Config{Scale: 7, Seed: -3, Replace: true}, want: Config{Scale: 7, Seed: -3, Replace: true}},
		{name: "negative scale", cfg: Config{Scale: -1}, want: Config{Scale: -1}, wantErr: "seed: scale -1 out of range 1..10000000"},
		{name: "huge scale", cfg: Config{Scale: MaxScale + 1}, want: Config{Scale: MaxScale + 1}, wantErr: "seed: scale 10000001 out of range 1..10000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.cfg.WithDefaults()
			if got != tt.want {
				t.Fatalf("WithDefaults() = %+v, want %+v", got, tt.want)
			}
			err := got.Validate()
			if gotErr := errString(err); gotErr != tt.wantErr {
				t.Fatalf("Validate() = %q, want %q", gotErr, tt.wantErr)
			}
			if _, err := NewGenerator(tt.cfg); errString(err) != tt.wantErr {
				t.Fatalf("NewGenerator() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// tables is everything a generator yields, as JSON lines per table: a
// canonical form that compares values, not pointers.
type tables map[string][]string

func generate(t *testing.T, cfg Config) tables {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tables{
		"customers":   lines(t, g.Customers()),
		"addresses":   lines(t, g.Addresses()),
		"authors":     lines(t, g.Authors()),
		"books":       lines(t, g.Books()),
		"orders":      lines(t, g.Orders()),
		"order_items": lines(t, g.OrderItems()),
	}
}

func lines[T any](t *testing.T, rows iter.Seq[T]) []string {
	t.Helper()
	var out []string
	for r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func TestGeneratorDeterministic(t *testing.T) {
	t.Parallel()
	a := generate(t, Config{Scale: 300, Seed: 42})
	b := generate(t, Config{Scale: 300, Seed: 42})
	for table, rows := range a {
		if !slices.Equal(rows, b[table]) {
			t.Errorf("%s: two runs with the same seed differ", table)
		}
	}
	// Each table's stream stands alone: generating one table twice from the
	// same generator, or after others, gives the same rows.
	g, _ := NewGenerator(Config{Scale: 300, Seed: 42})
	if got := lines(t, g.OrderItems()); !slices.Equal(got, a["order_items"]) {
		t.Error("order_items differ when generated on their own")
	}

	c := generate(t, Config{Scale: 300, Seed: 43})
	for _, table := range []string{"customers", "addresses", "books", "orders", "order_items"} {
		if slices.Equal(a[table], c[table]) {
			t.Errorf("%s: seeds 42 and 43 give the same rows", table)
		}
	}
}

func TestGeneratorStopsEarly(t *testing.T) {
	t.Parallel()
	g, _ := NewGenerator(Config{Scale: 50})
	n := 0
	for range g.OrderItems() {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("got %d items before break, want 3", n)
	}
}

// dataset is a generator's whole output as typed rows.
type dataset struct {
	customers []Customer
	addresses []Address
	authors   []Author
	books     []Book
	orders    []Order
	items     []OrderItem
}

func collect(t *testing.T, cfg Config) dataset {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dataset{
		customers: slices.Collect(g.Customers()),
		addresses: slices.Collect(g.Addresses()),
		authors:   slices.Collect(g.Authors()),
		books:     slices.Collect(g.Books()),
		orders:    slices.Collect(g.Orders()),
		items:     slices.Collect(g.OrderItems()),
	}
}

// TestGeneratorInvariants checks what the schema would enforce (keys,
// foreign keys, uniqueness, checks) plus the cross-table facts the data
// promises, at scales down to one customer.
func TestGeneratorInvariants(t *testing.T) {
	t.Parallel()
	for _, scale := range []int{1, 2, 9, 10, 99, 101, 1000} {
		t.Run("scale="+strconv.Itoa(scale), func(t *testing.T) {
			t.Parallel()
			d := collect(t, Config{Scale: scale, Seed: int64(scale)})
			checkInvariants(t, scale, d)
		})
	}
}

func checkInvariants(t *testing.T, scale int, d dataset) {
	t.Helper()
	if len(d.customers) != scale || len(d.authors) != max(3, scale/10) ||
		len(d.books) != max(10, scale/2) || len(d.orders) != max(1, scale*7/2) {
		t.Fatalf("sizes: %d customers, %d authors, %d books, %d orders",
			len(d.customers), len(d.authors), len(d.books), len(d.orders))
	}
	for i, c := range d.customers {
		if c.ID != int64(i+1) || c.Name == "" || c.CreatedAt.Location() != time.UTC {
			t.Fatalf("customer %+v", c)
		}
	}
	emails := map[string]bool{}
	for _, c := range d.customers {
		if c.Email == nil {
			continue
		}
		if emails[*c.Email] || !strings.Contains(*c.Email, "@") {
			t.Fatalf("customer %d: email %q duplicate or invalid", c.ID, *c.Email)
		}
		emails[*c.Email] = true
	}

	// Addresses: 1..5 per customer, distinct labels, owned by their customer.
	addressOwner := map[int64]int64{}
	labels := map[int64][]string{}
	for _, a := range d.addresses {
		if _, dup := addressOwner[a.ID]; dup {
			t.Fatalf("address id %d twice", a.ID)
		}
		addressOwner[a.ID] = a.CustomerID
		if slices.Contains(labels[a.CustomerID], a.Label) {
			t.Fatalf("customer %d: label %q twice", a.CustomerID, a.Label)
		}
		labels[a.CustomerID] = append(labels[a.CustomerID], a.Label)
	}
	for _, c := range d.customers {
		if n := len(labels[c.ID]); n < 1 || n > 5 {
			t.Fatalf("customer %d has %d addresses", c.ID, n)
		}
	}

	// Books: valid ISBNs, every author has one, authors exist.
	isbns := map[string]bool{}
	booksOf := map[int64]int{}
	price := map[int64]Cents{}
	for _, b := range d.books {
		if isbns[b.ISBN] || len(b.ISBN) != 13 || isbn13(mustAtoi(t, b.ISBN[3:12])) != b.ISBN {
			t.Fatalf("book %d: ISBN %q duplicate or invalid", b.ID, b.ISBN)
		}
		isbns[b.ISBN] = true
		if b.AuthorID < 1 || b.AuthorID > int64(len(d.authors)) {
			t.Fatalf("book %d: author %d does not exist", b.ID, b.AuthorID)
		}
		if b.Tags == nil || b.Price < 0 || b.Title == "" {
			t.Fatalf("book %+v", b)
		}
		if b.Metadata != nil && !json.Valid(b.Metadata) {
			t.Fatalf("book %d: invalid metadata %s", b.ID, b.Metadata)
		}
		booksOf[b.AuthorID]++
		price[b.ID] = b.Price
	}
	if len(booksOf) != len(d.authors) {
		t.Fatalf("%d of %d authors have books", len(booksOf), len(d.authors))
	}

	// Items: 1..8 distinct books per order, priced from the book.
	itemsOf := map[int64][]OrderItem{}
	for _, it := range d.items {
		if it.Quantity < 1 || it.BookID < 1 || it.BookID > int64(len(d.books)) {
			t.Fatalf("item %+v", it)
		}
		if it.UnitPrice != price[it.BookID] && it.UnitPrice != price[it.BookID]*9/10 {
			t.Fatalf("item %+v: book price is %v", it, price[it.BookID])
		}
		for _, other := range itemsOf[it.OrderID] {
			if other.BookID == it.BookID {
				t.Fatalf("order %d: book %d twice", it.OrderID, it.BookID)
			}
		}
		itemsOf[it.OrderID] = append(itemsOf[it.OrderID], it)
	}

	// Orders: ids in placed_at order, inside the window; totals add up;
	// shipping addresses belong to the customer.
	var prev time.Time
	for i, o := range d.orders {
		if o.ID != int64(i+1) || o.CustomerID < 1 || o.CustomerID > int64(scale) {
			t.Fatalf("order %+v", o)
		}
		if o.PlacedAt.Before(prev) || o.PlacedAt.Before(ordersFrom) || !o.PlacedAt.Before(ordersUntil) ||
			o.PlacedAt.Location() != time.UTC || o.PlacedAt.Nanosecond()%1000 != 0 {
			t.Fatalf("order %d: placed_at %v (previous %v)", o.ID, o.PlacedAt, prev)
		}
		prev = o.PlacedAt
		if o.ShippingAddressID != nil && addressOwner[*o.ShippingAddressID] != o.CustomerID {
			t.Fatalf("order %d of customer %d ships to address %d of customer %d",
				o.ID, o.CustomerID, *o.ShippingAddressID, addressOwner[*o.ShippingAddressID])
		}
		items := itemsOf[o.ID]
		if len(items) < 1 || len(items) > 8 {
			t.Fatalf("order %d has %d items", o.ID, len(items))
		}
		var total Cents
		for _, it := range items {
			total += it.UnitPrice * Cents(it.Quantity)
		}
		if total != o.Total {
			t.Fatalf("order %d: total %v, items add up to %v", o.ID, o.Total, total)
		}
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGeneratorShape checks the skew, the NULLs and the hostile values the
// package documentation promises, at a scale where they are reliable.
func TestGeneratorShape(t *testing.T) {
	t.Parallel()
	const scale = 1000
	d := collect(t, Config{Scale: scale, Seed: 7})

	ordersOf := map[int64]int{}
	status := map[string]int{}
	for _, o := range d.orders {
		ordersOf[o.CustomerID]++
		status[o.Status]++
	}
	if without := scale - len(ordersOf); without < scale*15/100 || without > scale*30/100 {
		t.Errorf("%d of %d customers have no orders, want about 20%%", without, scale)
	}
	perCustomer := sortedDesc(ordersOf)
	top := 0
	for _, n := range perCustomer[:scale/100] {
		top += n
	}
	if top*100 < len(d.orders)*15 {
		t.Errorf("the top 1%% of customers hold %d of %d orders, want about 20%%", top, len(d.orders))
	}
	if perCustomer[0] < 40 {
		t.Errorf("the busiest customer has %d orders, want very many", perCustomer[0])
	}
	for _, s := range []string{StatusPending, StatusOpen, StatusShipped, StatusDelivered, StatusCancelled} {
		if status[s] == 0 {
			t.Errorf("no %s orders", s)
		}
	}
	if status[StatusOpen]*100 < len(d.orders)*15 {
		t.Errorf("%d of %d orders are OPEN, want at least 15%%", status[StatusOpen], len(d.orders))
	}

	booksOf := map[int64]int{}
	for _, b := range d.books {
		booksOf[b.AuthorID]++
	}
	if most := sortedDesc(booksOf)[0]; most*100 < len(d.books)*5 {
		t.Errorf("the most prolific author has %d of %d books, want at least 5%%", most, len(d.books))
	}

	itemsOf := map[int64]int{}
	for _, it := range d.items {
		itemsOf[it.OrderID]++
	}
	itemCounts := map[int]bool{}
	for _, n := range itemsOf {
		itemCounts[n] = true
	}
	if !itemCounts[1] || !itemCounts[8] {
		t.Errorf("item counts seen: %v, want 1 through 8", itemCounts)
	}

	// Every nullable column has NULLs and values.
	nulls := map[string][2]int{} // column: {null, not null}
	count := func(col string, isNull bool) {
		n := nulls[col]
		if isNull {
			n[0]++
		} else {
			n[1]++
		}
		nulls[col] = n
	}
	for _, c := range d.customers {
		count("customers.email", c.Email == nil)
		count("customers.phone", c.Phone == nil)
	}
	for _, a := range d.addresses {
		count("addresses.line2", a.Line2 == nil)
	}
	for _, a := range d.authors {
		count("authors.birth_year", a.BirthYear == nil)
		count("authors.country", a.Country == nil)
	}
	for _, b := range d.books {
		count("books.published", b.Published == nil)
		count("books.metadata", b.Metadata == nil)
	}
	for _, o := range d.orders {
		count("orders.shipping_address_id", o.ShippingAddressID == nil)
	}
	for col, n := range nulls {
		if n[0] == 0 || n[1] == 0 {
			t.Errorf("%s: %d NULLs, %d values; want both", col, n[0], n[1])
		}
	}

	// Timestamps: microseconds, and some on whole seconds or milliseconds.
	var micro, whole, milli, ties int
	for i, o := range d.orders {
		switch ns := o.PlacedAt.Nanosecond(); {
		case ns == 0:
			whole++
		case ns%1_000_000 == 0:
			milli++
		default:
			micro++
		}
		if i > 0 && o.PlacedAt.Equal(d.orders[i-1].PlacedAt) {
			ties++
		}
	}
	if micro == 0 || whole == 0 || milli == 0 || ties == 0 {
		t.Errorf("placed_at: %d with µs, %d whole seconds, %d whole ms, %d ties; want all", micro, whole, milli, ties)
	}

	// Values that break naive keys and number handling.
	var names, emails, titles, tags, metadata []string
	var prices []Cents
	emptyTags := 0
	for _, c := range d.customers {
		names = append(names, c.Name)
		if c.Email != nil {
			emails = append(emails, *c.Email)
		}
	}
	for _, a := range d.authors {
		names = append(names, a.Name)
	}
	for _, b := range d.books {
		titles = append(titles, b.Title)
		tags = append(tags, b.Tags...)
		metadata = append(metadata, string(b.Metadata))
		prices = append(prices, b.Price)
		if len(b.Tags) == 0 {
			emptyTags++
		}
	}
	for _, want := range []string{"Zoë Ångström", "José Müller", "李小龙", "Ørjan Ødegård"} {
		if !slices.Contains(names, want) {
			t.Errorf("no name %q", want)
		}
	}
	anyContains := func(what string, values []string, sub string) {
		t.Helper()
		if !slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, sub) }) {
			t.Errorf("no %s contains %q", what, sub)
		}
	}
	anyContains("title", titles, "#")
	anyContains("tag", tags, " ")
	anyContains("email", emails, "+")
	anyContains("metadata", metadata, `"list_price":19.990`)
	anyContains("metadata", metadata, `12345678901234567890`)
	anyContains("metadata", metadata, `"languages":[]`)
	anyContains("metadata", metadata, `"series":null`)
	if emptyTags == 0 {
		t.Error("no book without tags")
	}
	for _, want := range []Cents{10, 123456789} {
		if !slices.Contains(prices, want) {
			t.Errorf("no book priced %v", want)
		}
	}
}

func sortedDesc(m map[int64]int) []int {
	var out []int
	for _, n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

func TestCentsString(t *testing.T) {
	t.Parallel()
	for c, want := range map[Cents]string{0: "0.00", 10: "0.10", 1999: "19.99", 123456789: "1234567.89", -5: "-0.05"} {
		if got := c.String(); got != want {
			t.Errorf("Cents(%d).String() = %q, want %q", int64(c), got, want)
		}
	}
}

func TestISBN13(t *testing.T) {
	t.Parallel()
	// 978-0-306-40615-7 is the textbook example of an ISBN-13.
	if got := isbn13(30640615); got != "9780306406157" {
		t.Fatalf("isbn13 = %s, want 9780306406157", got)
	}
}

func BenchmarkGenerate(b *testing.B) {
	g, _ := NewGenerator(Config{Scale: 10_000})
	rows := 0
	for b.Loop() {
		rows = 0
		for _, c := range copies {
			for range c.rows(g) {
				rows++
			}
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
