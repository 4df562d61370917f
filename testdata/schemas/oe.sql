-- An order-entry database in the manner of the classic HR and OE samples:
-- regions, countries, locations, warehouses, departments, employees,
-- customers, products, inventories, orders and their items. A source for
-- "migrate init" tests, shaped unlike the others: an enum and a domain in
-- keys, a char(2) key, a column named like a keyword ("user"), children
-- that hang under a parent whose id is not part of their key (a location
-- under its country, a warehouse under its location), a composite text key,
-- and text key values that are prefixes of each other ('new', 'new arrival',
-- 'new-ish'), which sort differently in SQL and in DynamoDB unless the key
-- ends with them. The data is deterministic (no random()).

CREATE TYPE product_status AS ENUM ('orderable', 'planned', 'obsolete');
CREATE DOMAIN email_address AS text CHECK (VALUE LIKE '%@%');
CREATE TABLE regions (region_id integer PRIMARY KEY, region_name text NOT NULL);
CREATE TABLE countries (country_id char(2) PRIMARY KEY, country_name text NOT NULL, region_id integer REFERENCES regions);
CREATE TABLE locations (location_id integer PRIMARY KEY, street_address text, city text NOT NULL, country_id char(2) NOT NULL REFERENCES countries);
CREATE TABLE warehouses (warehouse_id integer PRIMARY KEY, warehouse_name text NOT NULL UNIQUE, location_id integer NOT NULL REFERENCES locations);
CREATE TABLE jobs (job_id varchar(10) PRIMARY KEY, job_title text NOT NULL);
CREATE TABLE departments (department_id integer PRIMARY KEY, department_name text NOT NULL, location_id integer REFERENCES locations);
CREATE TABLE employees (employee_id integer PRIMARY KEY, last_name text NOT NULL, email email_address NOT NULL UNIQUE, job_id varchar(10) NOT NULL REFERENCES jobs,
  manager_id integer REFERENCES employees, department_id integer REFERENCES departments, hired timestamp NOT NULL);
CREATE TABLE customers (customer_id integer PRIMARY KEY, "user" text NOT NULL, credit_limit numeric(9,2), account_mgr_id integer REFERENCES employees);
CREATE TABLE product_information (product_id integer PRIMARY KEY, product_name text NOT NULL, status product_status NOT NULL, list_price numeric(8,2));
CREATE TABLE inventories (product_id integer NOT NULL REFERENCES product_information, warehouse_id integer NOT NULL REFERENCES warehouses,
  quantity_on_hand integer NOT NULL, PRIMARY KEY (product_id, warehouse_id));
CREATE TABLE orders (order_id integer PRIMARY KEY, order_date timestamptz NOT NULL, customer_id integer NOT NULL REFERENCES customers,
  sales_rep_id integer REFERENCES employees, order_total numeric(8,2));
CREATE TABLE order_items (order_id integer NOT NULL REFERENCES orders, line_item_id integer NOT NULL, product_id integer NOT NULL REFERENCES product_information,
  unit_price numeric(8,2), quantity integer, PRIMARY KEY (order_id, line_item_id));
CREATE TABLE tags (label text PRIMARY KEY, note text);
CREATE TABLE product_tags (product_id integer NOT NULL REFERENCES product_information, label text NOT NULL REFERENCES tags, PRIMARY KEY (label, product_id));
CREATE TABLE promotions (promo_name text NOT NULL, valid_from date NOT NULL, discount numeric(4,2), PRIMARY KEY (promo_name, valid_from));

INSERT INTO regions VALUES (1, 'Europe'), (2, 'Americas');
INSERT INTO countries VALUES ('NO', 'Norway', 1), ('US', 'United States', 2), ('XX', 'Nowhere', NULL);
INSERT INTO locations SELECT i, i || ' Street', (ARRAY['Oslo','New York','Bergen'])[1 + i % 3], (ARRAY['NO','US','NO'])[1 + i % 3] FROM generate_series(1, 6) i;
INSERT INTO warehouses SELECT i, (ARRAY['North', 'North East', 'North-West', 'Northern', 'South'])[i], 1 + i % 6 FROM generate_series(1, 5) i;
INSERT INTO jobs VALUES ('SA_REP', 'Sales'), ('IT', 'IT'), ('AD_PRES', 'President');
INSERT INTO departments SELECT i, 'Dept ' || i, CASE WHEN i = 3 THEN NULL ELSE i END FROM generate_series(1, 4) i;
INSERT INTO employees SELECT i, 'Last ' || i, 'e' || i || '@x.example', (ARRAY['SA_REP','IT','AD_PRES'])[1 + i % 3], CASE WHEN i > 1 THEN 1 + i % 3 END,
  CASE WHEN i % 5 <> 0 THEN 1 + i % 4 END, timestamp '2020-01-01 00:00:00' + i * interval '17 days 3 hours' FROM generate_series(1, 15) i;
INSERT INTO customers SELECT i, 'User ' || i, 100.5 * i, CASE WHEN i % 4 <> 0 THEN 1 + i % 15 END FROM generate_series(1, 20) i;
INSERT INTO product_information SELECT i, 'Product ' || i, (ARRAY['orderable','planned','obsolete'])[1 + i % 3]::product_status, 9.99 * i FROM generate_series(1, 12) i;
INSERT INTO inventories SELECT p, w, p * w FROM generate_series(1, 12) p CROSS JOIN generate_series(1, 5) w WHERE (p + w) % 2 = 0;
INSERT INTO orders SELECT i, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 day 1.25 second', 1 + i % 20, CASE WHEN i % 3 <> 0 THEN 1 + i % 15 END, 10 * i FROM generate_series(1, 40) i;
INSERT INTO order_items SELECT o, l, 1 + (o * l) % 12, 1.5 * l, l FROM generate_series(1, 40) o CROSS JOIN generate_series(1, 1 + o % 4) l;
INSERT INTO tags VALUES ('new', NULL), ('new arrival', 'x'), ('new-ish', NULL), ('sale', 'y');
INSERT INTO product_tags SELECT p, (ARRAY['new','new arrival','new-ish','sale'])[1 + p % 4] FROM generate_series(1, 12) p;
INSERT INTO product_tags SELECT p, 'sale' FROM generate_series(1, 12) p WHERE p % 4 <> 3;
INSERT INTO promotions VALUES ('Spring', '2024-03-01', 0.1), ('Spring sale', '2024-03-01', 0.2), ('Spring', '2025-03-01', 0.15), ('Summer', '2024-06-01', 0.05);
