-- An HR database: regions, countries, locations, departments, jobs,
-- employees with their managers, job history and a many-to-many between
-- employees and projects. A source for "migrate init" tests, shaped unlike
-- the bookstore: a self-referencing foreign key, a cycle between departments
-- and employees, text and char keys, a date in a composite primary key, and
-- nullable foreign keys. The data is deterministic (no random()).

CREATE TABLE regions (
    region_id integer PRIMARY KEY,
    name      text NOT NULL UNIQUE
);

CREATE TABLE countries (
    country_id char(2) PRIMARY KEY CHECK (country_id ~ '^[A-Z]{2}$'),
    name       text    NOT NULL,
    region_id  integer NOT NULL REFERENCES regions
);

CREATE TABLE locations (
    location_id integer PRIMARY KEY,
    street      text,
    postal_code text,
    city        text    NOT NULL,
    country_id  char(2) NOT NULL REFERENCES countries
);

CREATE TABLE jobs (
    job_id     text PRIMARY KEY CHECK (job_id ~ '^[A-Z_]+$'),
    title      text NOT NULL,
    min_salary numeric(8,2),
    max_salary numeric(8,2)
);

CREATE TABLE departments (
    department_id integer PRIMARY KEY,
    name          text    NOT NULL UNIQUE,
    location_id   integer REFERENCES locations,
    manager_id    integer -- references employees, added below: the tables refer to each other
);

CREATE TABLE employees (
    employee_id   integer PRIMARY KEY,
    first_name    text,
    last_name     text    NOT NULL,
    email         text    NOT NULL UNIQUE,
    phone         text,
    hired_on      date    NOT NULL,
    job_id        text    NOT NULL REFERENCES jobs,
    salary        numeric(8,2) CHECK (salary > 0),
    commission    numeric(2,2),
    manager_id    integer REFERENCES employees,
    department_id integer REFERENCES departments
);

ALTER TABLE departments ADD FOREIGN KEY (manager_id) REFERENCES employees;

CREATE TABLE job_history (
    employee_id   integer NOT NULL REFERENCES employees,
    start_date    date    NOT NULL,
    end_date      date    NOT NULL,
    job_id        text    NOT NULL REFERENCES jobs,
    department_id integer REFERENCES departments,
    PRIMARY KEY (employee_id, start_date),
    CHECK (end_date > start_date)
);

CREATE TABLE projects (
    project_id integer PRIMARY KEY,
    name       text NOT NULL,
    budget     numeric(12,2),
    starts_on  date,
    tags       text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE employee_projects (
    employee_id integer NOT NULL REFERENCES employees,
    project_id  integer NOT NULL REFERENCES projects,
    role        text    NOT NULL,
    hours       numeric(6,1),
    PRIMARY KEY (employee_id, project_id)
);

INSERT INTO regions VALUES (1, 'Europe'), (2, 'Americas'), (3, 'Asia'), (4, 'Middle East and Africa');

INSERT INTO countries VALUES
    ('NO', 'Norway', 1), ('DE', 'Germany', 1), ('FR', 'France', 1), ('GB', 'United Kingdom', 1),
    ('US', 'United States of America', 2), ('CA', 'Canada', 2), ('BR', 'Brazil', 2),
    ('JP', 'Japan', 3), ('CN', 'China', 3), ('EG', 'Egypt', 4);

INSERT INTO locations
SELECT i, CASE WHEN i % 4 = 0 THEN NULL ELSE i * 100 || ' Main Street' END, lpad((i * 7919 % 100000)::text, 5, '0'),
       (ARRAY['Oslo', 'Berlin', 'Paris', 'London', 'Seattle', 'Toronto', 'São Paulo', '東京', '北京', 'Cairo'])[i],
       (ARRAY['NO', 'DE', 'FR', 'GB', 'US', 'CA', 'BR', 'JP', 'CN', 'EG'])[i]
FROM generate_series(1, 10) AS i;

INSERT INTO jobs VALUES
    ('AD_PRES', 'President', 20000, 40000), ('AD_VP', 'Vice President', 15000, 30000),
    ('FI_MGR', 'Finance Manager', 8200, 16000), ('FI_ACCOUNT', 'Accountant', 4200, 9000),
    ('IT_PROG', 'Programmer', 4000, 10000), ('SA_MAN', 'Sales Manager', 10000, 20000),
    ('SA_REP', 'Sales Representative', 6000, 12000), ('ST_CLERK', 'Stock Clerk', 2000, 5000),
    ('HR_REP', 'Human Resources Representative', 4000, 9000), ('PR_REP', 'Public Relations Representative', NULL, NULL);

INSERT INTO departments (department_id, name, location_id)
SELECT i, (ARRAY['Administration', 'Marketing', 'Purchasing', 'Human Resources', 'Shipping', 'IT', 'Sales', 'Finance'])[i],
       CASE WHEN i = 8 THEN NULL ELSE i END
FROM generate_series(1, 8) AS i;

-- Employee 1 is the president; everyone else reports to an earlier
-- employee, and a few have no department.
INSERT INTO employees
SELECT i,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (ARRAY['Ada', 'Grace', 'Linus', 'Ørjan', 'Zoë', 'Ken', '李', 'Barbara'])[1 + i % 8] END,
       (ARRAY['Lovelace', 'Hopper', 'Torvalds', 'Ødegård', 'Ångström', 'Thompson', '小龙', 'Liskov', 'O''Brien'])[1 + i % 9] || ' ' || i,
       'employee' || i || '@example.com',
       CASE WHEN i % 3 = 0 THEN NULL ELSE '+47 ' || (10000000 + i * 7919) END,
       date '2015-01-01' + (i * 37),
       CASE WHEN i = 1 THEN 'AD_PRES' WHEN i < 4 THEN 'AD_VP'
            ELSE (ARRAY['FI_MGR', 'FI_ACCOUNT', 'IT_PROG', 'SA_MAN', 'SA_REP', 'ST_CLERK', 'HR_REP', 'PR_REP'])[1 + i % 8] END,
       3000 + (i * 977) % 17000,
       CASE WHEN i % 5 = 0 THEN 0.15 END,
       CASE WHEN i = 1 THEN NULL ELSE 1 + (i * 31) % (i - 1) END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE 1 + i % 8 END
FROM generate_series(1, 60) AS i;

UPDATE departments SET manager_id = department_id * 3 WHERE department_id <> 4;

-- Up to four earlier positions per employee, consecutive, ending before
-- the current one began.
INSERT INTO job_history
SELECT e.employee_id,
       e.hired_on - (400 * (h + 1)),
       e.hired_on - (400 * h) - 1,
       (ARRAY['FI_ACCOUNT', 'IT_PROG', 'SA_REP', 'ST_CLERK', 'HR_REP'])[1 + (e.employee_id + h) % 5],
       CASE WHEN (e.employee_id + h) % 6 = 0 THEN NULL ELSE 1 + (e.employee_id + h) % 8 END
FROM employees e, generate_series(0, 3) AS h
WHERE h < e.employee_id % 5;

INSERT INTO projects
SELECT i, 'Project ' || (ARRAY['Apollo', 'Borealis', 'Cassini', 'Dawn', 'Europa', 'Fermi'])[1 + i % 6] || ' ' || i,
       CASE WHEN i % 4 = 0 THEN NULL ELSE 10000.50 * i END,
       CASE WHEN i % 3 = 0 THEN NULL ELSE date '2023-01-01' + i * 30 END,
       CASE WHEN i % 2 = 0 THEN ARRAY['internal'] ELSE ARRAY['customer', 'billable'] END
FROM generate_series(1, 12) AS i;

INSERT INTO employee_projects
SELECT e, p, (ARRAY['lead', 'developer', 'reviewer', 'observer'])[1 + (e + p) % 4], CASE WHEN (e + p) % 7 = 0 THEN NULL ELSE ((e * p) % 400) / 2.0 END
FROM generate_series(1, 60) AS e, generate_series(1, 12) AS p
WHERE (e * 7 + p * 3) % 5 = 0;
