// Package workload changes a seeded bookstore (package sql, internal/seed)
// the way a live shop does, for the tests and the benchmark of sync: it
// inserts and deletes orders, changes customers' addresses (embedded in the
// customer, copied onto orders), order lines (their keys too), order
// statuses and dates (a sort key, a sharded index key), authors' names and
// books' titles (copied over one and two hops), and customers' emails (a
// sparse index).
//
// Each operation is one transaction. Operations that collide with a
// constraint or with another worker (a deadlock, a duplicate label) are
// rolled back and counted as skipped: the database stays valid, and every
// committed change is one sync must apply.
package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Config configures Run.
type Config struct {
	// Workers run operations at once, each on its own connection.
	// Default 3.
	Workers int
	// Rate is the operations per second of all workers together; 0 runs
	// them as fast as the database allows.
	Rate float64
	// Seed makes the choice of operations repeatable (their interleaving
	// between workers is not).
	Seed uint64
}

// Stats counts what Run did.
type Stats struct {
	Committed int64            // transactions committed
	Skipped   int64            // rolled back on a conflict
	ByOp      map[string]int64 // committed, by operation
}

// op is one kind of change.
type op struct {
	name   string
	weight int
	run    func(ctx context.Context, tx pgx.Tx, r *rand.Rand, w *worker) error
}

// ops are the operations and how often each is picked.
var ops = []op{
	{"insert order", 20, insertOrder},
	{"change address", 12, changeAddress},
	{"move address", 3, moveAddress},
	{"change order line", 12, changeOrderLine},
	{"re-key order line", 5, rekeyOrderLine},
	{"add order line", 6, addOrderLine},
	{"delete order line", 4, deleteOrderLine},
	{"delete order", 6, deleteOrder},
	{"change order date", 5, changeOrderDate},
	{"change order status", 14, changeOrderStatus},
	{"rename author", 2, renameAuthor},
	{"retitle book", 3, retitleBook},
	{"change email", 4, changeEmail},
	{"delete address", 2, deleteAddress},
}

// worker holds one connection and the id range it creates orders in.
type worker struct {
	conn   *pgx.Conn
	nextID int64
}

// Run runs operations on the database at url until ctx ends, and returns
// what it did. A failure that is not a conflict stops it with an error.
func Run(ctx context.Context, url string, cfg Config) (Stats, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 3
	}
	var base int64
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return Stats{}, err
	}
	err = conn.QueryRow(ctx, "SELECT coalesce(max(order_id), 0) FROM orders").Scan(&base)
	conn.Close(context.WithoutCancel(ctx))
	if err != nil {
		return Stats{}, fmt.Errorf("workload: %w", err)
	}
	var committed, skipped atomic.Int64
	var mu sync.Mutex
	byOp := map[string]int64{}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(cfg.Workers) / cfg.Rate * float64(time.Second))
	}
	errs := make([]error, cfg.Workers)
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		wg.Go(func() {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close(context.WithoutCancel(ctx))
			// Each worker creates orders in its own id range, far above
			// the seeded ones and those of the other workers.
			w := &worker{conn: c, nextID: base + 1_000_000*int64(i+1)}
			r := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
			next := time.Now()
			for ctx.Err() == nil {
				if interval > 0 {
					next = next.Add(interval)
					select {
					case <-time.After(time.Until(next)):
					case <-ctx.Done():
						return
					}
				}
				pick := r.IntN(total)
				o := ops[0]
				for _, cand := range ops {
					if pick < cand.weight {
						o = cand
						break
					}
					pick -= cand.weight
				}
				err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return o.run(ctx, tx, r, w) })
				switch {
				case err == nil:
					committed.Add(1)
					mu.Lock()
					byOp[o.name]++
					mu.Unlock()
				case ctx.Err() != nil:
					return
				case conflict(err):
					skipped.Add(1)
				default:
					errs[i] = fmt.Errorf("workload: %s: %w", o.name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return Stats{Committed: committed.Load(), Skipped: skipped.Load(), ByOp: byOp}, errors.Join(errs...)
}

// errNothing rolls back an operation that found nothing to change.
var errNothing = errors.New("workload: nothing to change")

// conflict reports errors that only mean this operation lost a race or
// picked a row it cannot change: it is rolled back and skipped.
func conflict(err error) bool {
	if errors.Is(err, errNothing) || errors.Is(err, pgx.ErrNoRows) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40P01", "40001", "23505", "23503", "23514":
			// deadlock, serialization, unique, foreign key, check
			return true
		}
	}
	return false
}

// some returns the key of a random row of a table: the first at or after a
// random point of its key range.
func some(ctx context.Context, tx pgx.Tx, r *rand.Rand, sql string) (int64, error) {
	var lo, hi int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(min(k), 0), coalesce(max(k), 0) FROM ("+sql+") AS s(k)").Scan(&lo, &hi); err != nil {
		return 0, err
	}
	if hi == 0 {
		return 0, errNothing
	}
	var id *int64
	if err := tx.QueryRow(ctx, "SELECT min(k) FROM ("+sql+") AS s(k) WHERE k >= $1", lo+r.Int64N(hi-lo+1)).Scan(&id); err != nil {
		return 0, err
	}
	if id == nil {
		return 0, errNothing // another worker deleted the rows past the point
	}
	return *id, nil
}

var cities = []string{"Lisboa", "Porto", "Zürich", "Kraków", "Nagoya", "Québec", "Austin", "Tromsø"}

var statuses = []string{"PENDING", "OPEN", "SHIPPED", "DELIVERED", "CANCELLED"}

func insertOrder(ctx context.Context, tx pgx.Tx, r *rand.Rand, w *worker) error {
	cust, err := some(ctx, tx, r, "SELECT customer_id FROM customers")
	if err != nil {
		return err
	}
	var addr *int64
	var a int64
	// No address is fine; any other failure (a deadlock with DDL) has
	// aborted the transaction and must end it, to be judged by conflict.
	switch err := tx.QueryRow(ctx, "SELECT address_id FROM addresses WHERE customer_id = $1 ORDER BY address_id LIMIT 1", cust).Scan(&a); {
	case err == nil:
		addr = &a
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	w.nextID++
	id := w.nextID
	placed := time.Now().UTC().Add(-time.Duration(r.IntN(3600)) * time.Second).Truncate(time.Microsecond)
	if _, err := tx.Exec(ctx, "INSERT INTO orders VALUES ($1, $2, $3, $4, 0, $5)", id, cust, statuses[r.IntN(2)], placed, addr); err != nil {
		return err
	}
	for range 1 + r.IntN(3) {
		book, err := some(ctx, tx, r, "SELECT book_id FROM books")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO order_items SELECT $1, $2, $3, price FROM books WHERE book_id = $2
			ON CONFLICT DO NOTHING`, id, book, 1+r.IntN(3)); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, "UPDATE orders SET total = (SELECT coalesce(sum(quantity * unit_price), 0) FROM order_items WHERE order_id = $1) WHERE order_id = $1", id)
	return err
}

func changeAddress(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT address_id FROM addresses")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE addresses SET city = $2, line1 = $3 WHERE address_id = $1",
		id, cities[r.IntN(len(cities))], fmt.Sprintf("%d Rua Nova #%d", 1+r.IntN(999), r.IntN(99)))
	return err
}

// moveAddress gives an address to another customer: it leaves one
// customer's embedded map and joins another's.
func moveAddress(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT address_id FROM addresses")
	if err != nil {
		return err
	}
	cust, err := some(ctx, tx, r, "SELECT customer_id FROM customers")
	if err != nil {
		return err
	}
	// The mapping embeds at most 20 addresses per customer; stay well
	// below. A label the customer has already is a conflict (skipped).
	label := "moved_" + string(rune('a'+r.IntN(26))) + string(rune('a'+r.IntN(26)))
	tag, err := tx.Exec(ctx, `UPDATE addresses SET customer_id = $2, label = $3
		WHERE address_id = $1 AND (SELECT count(*) FROM addresses WHERE customer_id = $2) < 10`, id, cust, label)
	if err == nil && tag.RowsAffected() == 0 {
		return errNothing
	}
	return err
}

func deleteAddress(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT address_id FROM addresses")
	if err != nil {
		return err
	}
	// Orders shipping there lose the address (ON DELETE SET NULL).
	_, err = tx.Exec(ctx, "DELETE FROM addresses WHERE address_id = $1", id)
	return err
}

func changeOrderLine(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	order, err := some(ctx, tx, r, "SELECT order_id FROM order_items")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE order_items SET quantity = quantity % 9 + 1, unit_price = unit_price + 0.01
		WHERE (order_id, book_id) = (SELECT order_id, book_id FROM order_items WHERE order_id = $1 LIMIT 1)`, order)
	return err
}

// rekeyOrderLine changes an order line's book: a primary key change.
func rekeyOrderLine(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	order, err := some(ctx, tx, r, "SELECT order_id FROM order_items")
	if err != nil {
		return err
	}
	book, err := some(ctx, tx, r, "SELECT book_id FROM books")
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `UPDATE order_items SET book_id = $2
		WHERE (order_id, book_id) = (SELECT order_id, book_id FROM order_items WHERE order_id = $1 LIMIT 1)`, order, book)
	if err == nil && tag.RowsAffected() == 0 {
		return errNothing
	}
	return err
}

func addOrderLine(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	order, err := some(ctx, tx, r, "SELECT order_id FROM orders")
	if err != nil {
		return err
	}
	book, err := some(ctx, tx, r, "SELECT book_id FROM books")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "INSERT INTO order_items SELECT $1, $2, 1, price FROM books WHERE book_id = $2", order, book)
	return err
}

func deleteOrderLine(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	order, err := some(ctx, tx, r, "SELECT order_id FROM order_items")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `DELETE FROM order_items
		WHERE (order_id, book_id) = (SELECT order_id, book_id FROM order_items WHERE order_id = $1 LIMIT 1)`, order)
	return err
}

func deleteOrder(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT order_id FROM orders")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "DELETE FROM orders WHERE order_id = $1", id) // its lines by cascade
	return err
}

// changeOrderDate moves placed_at, which the order's sort key and its
// index sort key are built from: a key change of the item.
func changeOrderDate(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT order_id FROM orders")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE orders SET placed_at = placed_at + make_interval(secs => $2) WHERE order_id = $1", id, float64(r.IntN(86400))+0.25)
	return err
}

// changeOrderStatus moves an order to another sharded index partition
// (GSI2PK = STATUS#<status>#<shard>).
func changeOrderStatus(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT order_id FROM orders")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE orders SET status = $2 WHERE order_id = $1", id, statuses[r.IntN(len(statuses))])
	return err
}

func renameAuthor(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT author_id FROM authors")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE authors SET name = $2 WHERE author_id = $1", id, fmt.Sprintf("Author %d-%d", id, r.IntN(1000)))
	return err
}

func retitleBook(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT book_id FROM books")
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE books SET title = $2 WHERE book_id = $1", id, fmt.Sprintf("Revised Edition #%d", r.IntN(1000)))
	return err
}

// changeEmail sets, changes or clears an email: in and out of the sparse
// index GSI1.
func changeEmail(ctx context.Context, tx pgx.Tx, r *rand.Rand, _ *worker) error {
	id, err := some(ctx, tx, r, "SELECT customer_id FROM customers")
	if err != nil {
		return err
	}
	var email *string
	if r.IntN(3) > 0 {
		e := fmt.Sprintf("c%d.%d@example.org", id, r.IntN(10000))
		email = &e
	}
	_, err = tx.Exec(ctx, "UPDATE customers SET email = $2 WHERE customer_id = $1", id, email)
	return err
}
