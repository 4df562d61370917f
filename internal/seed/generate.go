package seed

import (
	"encoding/json"
	"fmt"
	"iter"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Row types: one per table, in the table's column order. A nil pointer is a
// NULL.

// Cents is an exact amount of money in hundredths, as numeric(10,2) and
// numeric(12,2) hold it. It never passes through a float.
type Cents int64

// String formats c as a decimal with two fractional digits, e.g. "0.10".
func (c Cents) String() string {
	sign, v := "", int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// NumericValue lets pgx encode c as an exact numeric.
func (c Cents) NumericValue() (pgtype.Numeric, error) {
	return pgtype.Numeric{Int: big.NewInt(int64(c)), Exp: -2, Valid: true}, nil
}

// Customer is a row of customers.
type Customer struct {
	ID        int64
	Name      string
	Email     *string
	Phone     *string
	CreatedAt time.Time
}

// Address is a row of addresses.
type Address struct {
	ID         int64
	CustomerID int64
	Label      string
	Line1      string
	Line2      *string
	City       string
	PostalCode string
	Country    string
}

// Author is a row of authors.
type Author struct {
	ID        int64
	Name      string
	BirthYear *int32
	Country   *string
}

// Book is a row of books.
type Book struct {
	ID        int64
	AuthorID  int64
	ISBN      string
	Title     string
	Price     Cents
	Published *time.Time // a date: midnight UTC
	Tags      []string   // never nil: the column is NOT NULL
	Metadata  json.RawMessage
}

// Order is a row of orders.
type Order struct {
	ID                int64
	CustomerID        int64
	Status            string
	PlacedAt          time.Time
	Total             Cents
	ShippingAddressID *int64
}

// OrderItem is a row of order_items.
type OrderItem struct {
	OrderID   int64
	BookID    int64
	Quantity  int32
	UnitPrice Cents
}

// The order_status enum's labels.
const (
	StatusPending   = "PENDING"
	StatusOpen      = "OPEN"
	StatusShipped   = "SHIPPED"
	StatusDelivered = "DELIVERED"
	StatusCancelled = "CANCELLED"
)

// The time windows the data falls in, all UTC. Customers sign up before the
// first order is placed; orders spread over three years and their ids grow
// with placed_at.
var (
	customersFrom = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	ordersFrom    = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	ordersUntil   = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

// maxAddresses bounds addresses per customer; address ids are
// (customer_id-1)*maxAddresses + n, so they can be computed without state.
const maxAddresses = 5

// Distributions, as weights of 1, 2, 3, ... (or 0, 1, ... for tags).
var (
	addressCountWeights = []int{40, 30, 15, 10, 5}          // 1..5
	itemCountWeights    = []int{25, 22, 18, 12, 9, 6, 5, 3} // 1..8
	quantityWeights     = []int{70, 18, 6, 2, 1, 1, 1, 1}   // 1..8
	tagCountWeights     = []int{20, 30, 25, 15, 10}         // 0..4
)

// Generator produces the bookstore's rows. It is pure: rows depend only on
// Config.Seed and Config.Scale, each row on its own random stream, so every
// table can be streamed on its own, in any order, with O(1) memory.
type Generator struct {
	seed      uint64
	customers int64
	authors   int64
	books     int64
	orders    int64
	// Whales are the customers with id-1 ≡ whaleOffset (mod 100): 1% of
	// customers, who place 20% of the orders.
	whaleOffset int64
	whales      int64
}

// NewGenerator returns the generator for cfg after applying defaults.
func NewGenerator(cfg Config) (*Generator, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := int64(cfg.Scale)
	g := &Generator{
		seed:      uint64(cfg.Seed),
		customers: n,
		authors:   max(3, n/10),
		books:     max(10, n/2),
		orders:    max(1, n*7/2),
	}
	g.whaleOffset = int64(splitmix(g.seed^0x5eed) % uint64(min(100, n)))
	g.whales = (n-1-g.whaleOffset)/100 + 1
	return g, nil
}

// Customers yields customers in id order, ids 1..Scale.
func (g *Generator) Customers() iter.Seq[Customer] {
	return func(yield func(Customer) bool) {
		r := newRNG()
		for id := int64(1); id <= g.customers; id++ {
			if !yield(g.customer(r, id)) {
				return
			}
		}
	}
}

// Addresses yields every customer's 1..5 addresses, each with a distinct
// label, in id order. Ids have gaps.
func (g *Generator) Addresses() iter.Seq[Address] {
	return func(yield func(Address) bool) {
		plan, r := newRNG(), newRNG()
		for c := int64(1); c <= g.customers; c++ {
			p := g.plan(plan, c)
			labels := addressLabels
			for k := range p.addresses {
				// Partial Fisher-Yates: distinct labels, continuing the plan's stream.
				j := k + plan.IntN(len(labels)-k)
				labels[k], labels[j] = labels[j], labels[k]
				if !yield(g.address(r, c, k+1, labels[k])) {
					return
				}
			}
		}
	}
}

// Authors yields authors in id order.
func (g *Generator) Authors() iter.Seq[Author] {
	return func(yield func(Author) bool) {
		r := newRNG()
		for id := int64(1); id <= g.authors; id++ {
			if !yield(g.author(r, id)) {
				return
			}
		}
	}
}

// Books yields books in id order. Every author has at least one book; a few
// have very many.
func (g *Generator) Books() iter.Seq[Book] {
	return func(yield func(Book) bool) {
		r, price := newRNG(), newRNG()
		for id := int64(1); id <= g.books; id++ {
			if !yield(g.book(r, price, id)) {
				return
			}
		}
	}
}

// Orders yields orders in id order, which is also placed_at order (ties
// included). Each total is the sum of its items.
func (g *Generator) Orders() iter.Seq[Order] {
	return func(yield func(Order) bool) {
		s := newScratch()
		for id := int64(1); id <= g.orders; id++ {
			if !yield(g.order(s, id)) {
				return
			}
		}
	}
}

// OrderItems yields 1..8 items, with distinct books, for every order, in
// order id order.
func (g *Generator) OrderItems() iter.Seq[OrderItem] {
	return func(yield func(OrderItem) bool) {
		s := newScratch()
		for id := int64(1); id <= g.orders; id++ {
			for _, it := range g.items(s, id) {
				if !yield(it) {
					return
				}
			}
		}
	}
}

type customerKind uint8

const (
	regular customerKind = iota
	noOrders
	whale
)

// customerPlan is what other tables need to know about a customer.
type customerPlan struct {
	kind      customerKind
	addresses int
}

// plan positions r on the customer's plan stream and draws the plan. The
// address labels follow on the same stream (see Addresses).
func (g *Generator) plan(r *rng, id int64) customerPlan {
	r.at(g.seed, streamPlan, id)
	p := customerPlan{kind: regular}
	switch {
	case (id-1)%100 == g.whaleOffset:
		p.kind = whale
	case r.IntN(100) < 20:
		p.kind = noOrders
	}
	p.addresses = 1 + pick(r.Rand, addressCountWeights)
	return p
}

func (g *Generator) whaleID(n int64) int64 { return n*100 + g.whaleOffset + 1 }

func addressID(customerID int64, n int) int64 {
	return (customerID-1)*maxAddresses + int64(n)
}

func (g *Generator) customer(r *rng, id int64) Customer {
	r.at(g.seed, streamCustomer, id)
	c := Customer{ID: id}
	var slug string
	if id <= int64(len(specialCustomers)) {
		sc := specialCustomers[id-1]
		c.Name, slug = sc.display, sc.slug
	} else {
		f, l := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
		c.Name = f.display + " " + l.display
		slug = f.slug + "." + l.slug + "." + strconv.FormatInt(id, 10)
	}
	// Customer 1 always has a +tag address; others by chance.
	if id == 1 || r.IntN(100) < 85 {
		local := slug
		if id == 1 || r.IntN(100) < 10 {
			local += "+" + emailTags[r.IntN(len(emailTags))]
		}
		domain := emailDomains[r.IntN(len(emailDomains))]
		if r.IntN(100) < 5 {
			domain = strings.ToUpper(domain)
		}
		c.Email = ptr(local + "@" + domain)
	}
	if r.IntN(100) < 70 {
		c.Phone = ptr(phone(r.Rand))
	}
	span := ordersFrom.Sub(customersFrom).Microseconds()
	c.CreatedAt = customersFrom.Add(time.Duration(r.Int64N(span)) * time.Microsecond)
	if r.IntN(10) == 0 {
		c.CreatedAt = c.CreatedAt.Truncate(time.Second)
	}
	return c
}

func phone(r *rand.Rand) string {
	switch r.IntN(5) {
	case 0:
		return fmt.Sprintf("+1 555-01%02d", r.IntN(100))
	case 1:
		return fmt.Sprintf("+44 20 7946 %04d", r.IntN(10000))
	case 2:
		return fmt.Sprintf("+49 30 %08d", r.IntN(100000000))
	case 3:
		return fmt.Sprintf("+81 3-%04d-%04d", r.IntN(10000), r.IntN(10000))
	default:
		return fmt.Sprintf("(555) %03d-%04d", r.IntN(1000), r.IntN(10000))
	}
}

func (g *Generator) address(r *rng, customerID int64, n int, label string) Address {
	id := addressID(customerID, n)
	r.at(g.seed, streamAddress, id)
	p := places[r.IntN(len(places))]
	a := Address{
		ID:         id,
		CustomerID: customerID,
		Label:      label,
		Line1:      fmt.Sprintf("%d %s", 1+r.IntN(250), streets[r.IntN(len(streets))]),
		City:       p.city,
		PostalCode: p.postalCode,
		Country:    p.country,
	}
	if r.IntN(100) < 40 {
		a.Line2 = ptr(fmt.Sprintf(line2s[r.IntN(len(line2s))], 1+r.IntN(40)))
	}
	return a
}

func (g *Generator) author(r *rng, id int64) Author {
	r.at(g.seed, streamAuthor, id)
	a := Author{ID: id}
	if id <= int64(len(specialAuthors)) {
		sa := specialAuthors[id-1]
		a.Name = sa.name
		if sa.birthYear != 0 {
			a.BirthYear = ptr(sa.birthYear)
		}
		if sa.country != "" {
			a.Country = ptr(sa.country)
		}
		return a
	}
	a.Name = firstNames[r.IntN(len(firstNames))].display + " " + lastNames[r.IntN(len(lastNames))].display
	if r.IntN(100) < 80 {
		a.BirthYear = ptr(int32(1800 + r.IntN(196)))
	}
	if r.IntN(100) < 75 {
		a.Country = ptr(authorCountries[r.IntN(len(authorCountries))])
	}
	return a
}

func (g *Generator) book(r, price *rng, id int64) Book {
	r.at(g.seed, streamBook, id)
	b := Book{ID: id, AuthorID: id, ISBN: isbn13(id), Price: g.bookPrice(price, id)}
	if id > g.authors {
		b.AuthorID = 1 + skewed(r.Rand, g.authors)
	}
	if id <= int64(len(specialTitles)) {
		b.Title = specialTitles[id-1]
	} else {
		adj, noun := titleAdjectives[r.IntN(len(titleAdjectives))], titleNouns[r.IntN(len(titleNouns))]
		switch v := r.IntN(100); {
		case v < 55:
			b.Title = "The " + adj + " " + noun
		case v < 80:
			b.Title = adj + " " + noun
		case v < 90:
			b.Title = fmt.Sprintf("The %s %s, Vol. %d", adj, noun, 2+r.IntN(6))
		case v < 95:
			b.Title = fmt.Sprintf("%s %s #%d", adj, noun, 1+r.IntN(12))
		default:
			b.Title = fmt.Sprintf("%s: A %s Story", noun, adj)
		}
	}
	if r.IntN(100) >= 10 {
		var year int
		switch v := r.IntN(100); {
		case v < 70:
			year = 1990 + r.IntN(35)
		case v < 90:
			year = 1900 + r.IntN(90)
		default:
			year = 1800 + r.IntN(100)
		}
		b.Published = ptr(time.Date(year, 1, 1+r.IntN(365), 0, 0, 0, 0, time.UTC))
	}
	b.Tags = make([]string, 0, 4)
	for range pick(r.Rand, tagCountWeights) {
		t := tagWords[r.IntN(len(tagWords))]
		if !slices.Contains(b.Tags, t) {
			b.Tags = append(b.Tags, t)
		}
	}
	if id == 5 || r.IntN(100) >= 30 {
		b.Metadata = metadata(r.Rand, id, b.Price)
	}
	return b
}

// bookPrice is a function of the book id alone, so that order items can
// look a price up without the books table.
func (g *Generator) bookPrice(r *rng, id int64) Cents {
	switch id {
	case 2:
		return 10 // 0.10
	case 3:
		return 123456789 // 1234567.89
	}
	r.at(g.seed, streamPrice, id)
	var dollars int
	switch v := r.IntN(100); {
	case v < 10:
		dollars = 1 + r.IntN(9)
	case v < 70:
		dollars = 10 + r.IntN(20)
	case v < 95:
		dollars = 30 + r.IntN(50)
	default:
		dollars = 80 + r.IntN(220)
	}
	var cents int
	switch v := r.IntN(10); {
	case v < 6:
		cents = 99
	case v < 8:
		cents = 0
	case v < 9:
		cents = 50
	default:
		cents = r.IntN(100)
	}
	return Cents(dollars*100 + cents)
}

type bookMetadata struct {
	Format       string          `json:"format"`
	Pages        int             `json:"pages,omitempty"`
	Languages    []string        `json:"languages"`
	Dimensions   *bookDimensions `json:"dimensions,omitempty"`
	Awards       []bookAward     `json:"awards,omitempty"`
	Rating       json.Number     `json:"rating,omitempty"`
	ListPrice    json.Number     `json:"list_price,omitempty"`
	SKU          json.Number     `json:"sku,omitempty"`
	Series       *string         `json:"series"` // often an explicit null
	FirstEdition bool            `json:"first_edition"`
}

type bookDimensions struct {
	HeightCM json.Number `json:"height_cm"`
	WidthCM  json.Number `json:"width_cm"`
	WeightKG json.Number `json:"weight_kg,omitempty"`
}

type bookAward struct {
	Name        string `json:"name"`
	Year        int    `json:"year"`
	Shortlisted bool   `json:"shortlisted,omitempty"`
}

// metadata builds a book's jsonb document: nested objects, arrays (some
// empty), explicit nulls, decimals with trailing zeros and integers beyond
// int64, all of which must survive a migration exactly.
func metadata(r *rand.Rand, id int64, price Cents) json.RawMessage {
	m := bookMetadata{
		Format:    bookFormats[r.IntN(len(bookFormats))],
		Languages: []string{},
	}
	for range r.IntN(3) {
		if l := languages[r.IntN(len(languages))]; !slices.Contains(m.Languages, l) {
			m.Languages = append(m.Languages, l)
		}
	}
	if m.Format != "ebook" && m.Format != "audiobook" {
		m.Pages = 80 + r.IntN(900)
		m.Dimensions = &bookDimensions{
			HeightCM: json.Number(fmt.Sprintf("%d.%d", 17+r.IntN(10), r.IntN(10))),
			WidthCM:  json.Number(fmt.Sprintf("%d.%d", 11+r.IntN(8), r.IntN(10))),
		}
		if r.IntN(2) == 0 {
			m.Dimensions.WeightKG = json.Number(fmt.Sprintf("0.%02d0", 10+r.IntN(90)))
		}
	}
	for range pick(r, []int{80, 12, 5, 3}) {
		m.Awards = append(m.Awards, bookAward{
			Name:        awards[r.IntN(len(awards))],
			Year:        1950 + r.IntN(75),
			Shortlisted: r.IntN(3) == 0,
		})
	}
	if r.IntN(100) < 60 {
		m.Rating = json.Number(fmt.Sprintf("%d.%02d0", 1+r.IntN(4), r.IntN(100)))
	}
	if r.IntN(100) < 40 {
		m.ListPrice = json.Number(price.String() + "0")
	}
	if r.IntN(100) < 30 {
		m.SKU = json.Number(strconv.FormatUint(r.Uint64(), 10))
	}
	if r.IntN(100) < 20 {
		m.Series = ptr(titleNouns[r.IntN(len(titleNouns))] + " Cycle")
	}
	m.FirstEdition = r.IntN(4) == 0
	if id == 5 { // the showcase: every hostile value at once
		m.Languages = []string{"en", "fr"}
		m.Dimensions = &bookDimensions{HeightCM: "21.0", WidthCM: "13.5", WeightKG: "0.450"}
		m.Awards = []bookAward{{Name: "Hugo", Year: 1999, Shortlisted: true}, {Name: "Prix Goncourt", Year: 2003}}
		m.Rating = "4.250"
		m.ListPrice = "19.990"
		m.SKU = "12345678901234567890"
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("seed: marshal metadata: %v", err)) // static types: cannot happen
	}
	return out
}

// isbn13 makes a valid, unique ISBN-13 from a book id.
func isbn13(id int64) string {
	digits := fmt.Sprintf("978%09d", id)
	sum := 0
	for i, d := range digits {
		w := 1
		if i%2 == 1 {
			w = 3
		}
		sum += int(d-'0') * w
	}
	return digits + strconv.Itoa((10-sum%10)%10)
}

// scratch holds one stream's reusable state for orders and their items.
type scratch struct {
	order, plan, items, price, placed *rng
	buf                               []OrderItem
}

func newScratch() *scratch {
	return &scratch{
		order: newRNG(), plan: newRNG(), items: newRNG(), price: newRNG(), placed: newRNG(),
		buf: make([]OrderItem, 0, len(itemCountWeights)),
	}
}

func (g *Generator) order(s *scratch, id int64) Order {
	r := s.order.at(g.seed, streamOrder, id)
	o := Order{ID: id, PlacedAt: g.placedAt(s.placed, id)}
	var p customerPlan
	o.CustomerID, p = g.orderCustomer(r, s.plan)
	switch v := r.IntN(100); {
	case v < 5:
		o.Status = StatusPending
	case v < 30:
		o.Status = StatusOpen
	case v < 45:
		o.Status = StatusShipped
	case v < 90:
		o.Status = StatusDelivered
	default:
		o.Status = StatusCancelled
	}
	if r.IntN(100) < 85 {
		o.ShippingAddressID = ptr(addressID(o.CustomerID, 1+r.IntN(p.addresses)))
	}
	for _, it := range g.items(s, id) {
		o.Total += it.UnitPrice * Cents(it.Quantity)
	}
	return o
}

// orderCustomer picks who placed an order: a whale 20% of the time,
// otherwise a regular customer; customers planned without orders never.
func (g *Generator) orderCustomer(r, plan *rng) (int64, customerPlan) {
	if r.IntN(100) < 20 {
		id := g.whaleID(r.Int64N(g.whales))
		return id, g.plan(plan, id)
	}
	for range 64 {
		id := 1 + r.Int64N(g.customers)
		if p := g.plan(plan, id); p.kind == regular {
			return id, p
		}
	}
	id := g.whaleID(0) // only at tiny scales with no regular customer
	return id, g.plan(plan, id)
}

// placedAt spreads orders evenly over the window, one slot per order id, at
// microsecond precision; a few fall on whole seconds or milliseconds, and
// every 1000th order shares the previous one's timestamp.
func (g *Generator) placedAt(r *rng, id int64) time.Time {
	if id%1000 == 0 {
		return g.placedAt(r, id-1)
	}
	r.at(g.seed, streamPlacedAt, id)
	slot := max(1, ordersUntil.Sub(ordersFrom).Microseconds()/g.orders)
	t := ordersFrom.Add(time.Duration((id-1)*slot+r.Int64N(slot)) * time.Microsecond)
	switch v := r.IntN(100); {
	case v < 3:
		t = t.Truncate(time.Second)
	case v < 6:
		t = t.Truncate(time.Millisecond)
	}
	return t
}

// items returns the order's items in s.buf, valid until the next call.
func (g *Generator) items(s *scratch, orderID int64) []OrderItem {
	r := s.items.at(g.seed, streamItems, orderID)
	n := min(1+pick(r.Rand, itemCountWeights), int(g.books))
	s.buf = s.buf[:0]
	for len(s.buf) < n {
		it := OrderItem{
			OrderID:  orderID,
			BookID:   g.itemBook(r.Rand, s.buf),
			Quantity: int32(1 + pick(r.Rand, quantityWeights)),
		}
		it.UnitPrice = g.bookPrice(s.price, it.BookID)
		if r.IntN(10) == 0 {
			it.UnitPrice = it.UnitPrice * 9 / 10 // 10% off, rounded down to the cent
		}
		s.buf = append(s.buf, it)
	}
	return s.buf
}

// itemBook picks a popular book (skewed) not yet in the order.
func (g *Generator) itemBook(r *rand.Rand, taken []OrderItem) int64 {
	has := func(id int64) bool {
		return slices.ContainsFunc(taken, func(it OrderItem) bool { return it.BookID == id })
	}
	for range 16 {
		if id := 1 + skewed(r, g.books); !has(id) {
			return id
		}
	}
	id := 1 + r.Int64N(g.books)
	for has(id) {
		id = id%g.books + 1
	}
	return id
}

// stream names a kind of random stream; every (seed, stream, id) has its own.
type stream uint64

const (
	streamPlan stream = iota + 1
	streamCustomer
	streamAddress
	streamAuthor
	streamBook
	streamPrice
	streamOrder
	streamPlacedAt
	streamItems
)

// rng is a reusable random source that can be repositioned on the stream of
// any (seed, stream, id) without allocating.
type rng struct {
	pcg rand.PCG
	*rand.Rand
}

func newRNG() *rng {
	r := &rng{}
	r.Rand = rand.New(&r.pcg)
	return r
}

func (r *rng) at(seed uint64, s stream, id int64) *rng {
	hi := splitmix(seed ^ splitmix(uint64(s)))
	r.pcg.Seed(hi, splitmix(hi^uint64(id)))
	return r
}

// splitmix is SplitMix64's finalizer: a bijection that scatters nearby inputs.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pick returns an index drawn with the given weights.
func pick(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	v := r.IntN(total)
	for i, w := range weights {
		if v < w {
			return i
		}
		v -= w
	}
	return len(weights) - 1
}

// skewed returns a value in [0, n) where small values are far more likely:
// u³·n for uniform u, so the first 1% of values take about 22% of draws and
// the first 10% about 46%. Integer arithmetic only, so it is the same on
// every platform.
func skewed(r *rand.Rand, n int64) int64 {
	u := uint64(r.Uint32())
	u3 := (u * u >> 32) * u >> 32
	return int64(u3 * uint64(n) >> 32)
}

func ptr[T any](v T) *T { return &v }
