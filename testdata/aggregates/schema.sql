-- The source of testdata/aggregates/mapping.yaml: customers and their orders,
-- with customers 31..40 without orders, NULL dates and notes, ties.
CREATE TYPE order_state AS ENUM ('OPEN', 'SHIPPED', 'VOID');
CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (
  order_id bigint PRIMARY KEY, customer_id bigint REFERENCES customers,
  status order_state NOT NULL, total numeric NOT NULL, qty int NOT NULL,
  placed_at timestamptz, note text);
INSERT INTO customers SELECT i, 'Customer ' || i FROM generate_series(1, 40) i;
INSERT INTO orders SELECT i, 1 + i % 30, (ARRAY['OPEN', 'SHIPPED', 'VOID'])[1 + i % 3]::order_state,
  (i * 7.31 - 100)::numeric(12,2), i % 5,
  CASE WHEN i % 17 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00:00+00' + (i % 40) * interval '1 day 0.000001 seconds' END,
  CASE WHEN i % 4 = 0 THEN NULL ELSE 'note ' || i END
FROM generate_series(1, 300) i;
