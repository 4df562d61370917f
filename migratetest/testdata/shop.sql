CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, country text);
CREATE TABLE orders (
    id          int PRIMARY KEY,
    customer_id int NOT NULL REFERENCES customers,
    placed_at   timestamptz NOT NULL,
    total       numeric(12, 2) NOT NULL
);
INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Grace', 'US');
INSERT INTO orders VALUES
    (10, 1, '2024-05-01 10:00:00Z', 19.90),
    (11, 1, '2024-06-02 11:30:00Z', 5.00),
    (12, 2, '2024-06-03 09:15:00Z', 120.00);
