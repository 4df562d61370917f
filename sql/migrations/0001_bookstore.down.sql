DROP TABLE IF EXISTS order_items, orders, books, authors, addresses, customers;
DROP TYPE IF EXISTS order_status;
