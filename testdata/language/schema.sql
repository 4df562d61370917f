CREATE TABLE reps (rep_id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, country text NOT NULL, rep_id bigint REFERENCES reps);
CREATE TABLE txns (
  "Txn ID" bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers,
  amount numeric(12,2) NOT NULL, ratio double precision, placed_at timestamptz NOT NULL,
  tag text, status text NOT NULL);
INSERT INTO reps VALUES (1, 'Rita'), (2, 'Rolf');
INSERT INTO customers SELECT i, 'Customer ' || i, (ARRAY['no','se','dk'])[1 + i % 3],
  CASE WHEN i % 4 = 0 THEN NULL ELSE 1 + i % 2 END FROM generate_series(1, 30) i;
INSERT INTO txns SELECT i, 1 + i % 30, (i * 3.17 - 250)::numeric(12,2),
  CASE WHEN i % 11 = 0 THEN 'NaN'::float8 WHEN i % 13 = 0 THEN '-Infinity'::float8 WHEN i % 7 = 0 THEN NULL ELSE i / 16.0 END,
  timestamptz '2023-06-01 00:00:00+00' + i * interval '1 day 3 hours 0.000001 seconds',
  (ARRAY['Hot', 'ﬁre', '', NULL, 'cold'])[1 + i % 5], CASE WHEN i % 9 = 0 THEN 'VOID' ELSE 'OK' END
FROM generate_series(1, 240) i;
