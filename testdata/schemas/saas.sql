-- A multi-tenant SaaS database: every tenant-owned row is keyed by
-- (tenant_id, id) and every foreign key between them carries the tenant.
-- A source for "migrate init" tests, shaped unlike the bookstore: uuid and
-- composite keys, composite foreign keys that share a column, a join table
-- whose two foreign keys overlap on tenant_id, a unique key of a type no key
-- can hold (bytea), and a table without a primary key. The data is
-- deterministic (no random()).

CREATE TABLE tenants (
    tenant_id  uuid PRIMARY KEY,
    slug       text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9-]+$'),
    name       text NOT NULL,
    plan       text NOT NULL CHECK (plan IN ('free', 'team', 'enterprise')),
    created_at timestamptz NOT NULL,
    settings   jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE users (
    tenant_id    uuid   NOT NULL REFERENCES tenants,
    user_id      bigint NOT NULL,
    email        text   NOT NULL,
    display_name text,
    is_admin     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (tenant_id, user_id),
    UNIQUE (tenant_id, email)
);

CREATE TABLE projects (
    tenant_id  uuid   NOT NULL REFERENCES tenants,
    project_id bigint NOT NULL,
    name       text   NOT NULL,
    owner_id   bigint,
    archived   boolean NOT NULL DEFAULT false,
    PRIMARY KEY (tenant_id, project_id),
    FOREIGN KEY (tenant_id, owner_id) REFERENCES users
);

CREATE TABLE project_members (
    tenant_id  uuid   NOT NULL,
    project_id bigint NOT NULL,
    user_id    bigint NOT NULL,
    role       text   NOT NULL,
    PRIMARY KEY (tenant_id, project_id, user_id),
    FOREIGN KEY (tenant_id, project_id) REFERENCES projects,
    FOREIGN KEY (tenant_id, user_id) REFERENCES users
);

CREATE TABLE tasks (
    tenant_id   uuid   NOT NULL,
    task_id     bigint NOT NULL,
    project_id  bigint NOT NULL,
    assignee_id bigint,
    title       text   NOT NULL,
    status      text   NOT NULL,
    due         date,
    estimate    interval,
    labels      text[],
    PRIMARY KEY (tenant_id, task_id),
    FOREIGN KEY (tenant_id, project_id) REFERENCES projects,
    FOREIGN KEY (tenant_id, assignee_id) REFERENCES users
);

CREATE TABLE invoices (
    invoice_id bigint PRIMARY KEY,
    tenant_id  uuid   NOT NULL REFERENCES tenants,
    number     text   NOT NULL UNIQUE,
    amount     numeric(12,2) NOT NULL,
    issued_at  timestamptz NOT NULL,
    paid_at    timestamptz
);

CREATE TABLE api_keys (
    key_id     uuid  PRIMARY KEY,
    tenant_id  uuid  NOT NULL REFERENCES tenants,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
);

-- No primary key: init leaves it out and says why.
CREATE TABLE audit_log (
    tenant_id uuid,
    at        timestamptz NOT NULL,
    event     jsonb NOT NULL
);

INSERT INTO tenants
SELECT ('00000000-0000-4000-8000-' || lpad(t::text, 12, '0'))::uuid, 'tenant-' || t, 'Tenant ' || t || (CASE WHEN t = 3 THEN ' & Søn' ELSE '' END),
       (ARRAY['free', 'team', 'enterprise'])[1 + t % 3], timestamptz '2024-01-01 00:00:00+00' + t * interval '1 day 1.5 second',
       jsonb_build_object('seats', t * 5, 'sso', t % 2 = 0)
FROM generate_series(1, 6) AS t;

INSERT INTO users
SELECT tn.tenant_id, u, 'user' || u || '@tenant' || t || '.example', CASE WHEN u % 4 = 0 THEN NULL ELSE 'User ' || u END, u = 1
FROM generate_series(1, 6) AS t
JOIN tenants tn ON tn.slug = 'tenant-' || t
CROSS JOIN generate_series(1, 3 + t * 2) AS u;

INSERT INTO projects
SELECT tn.tenant_id, p, 'Project ' || p, CASE WHEN p % 3 = 0 THEN NULL ELSE 1 + p % 5 END, p % 4 = 0
FROM generate_series(1, 6) AS t
JOIN tenants tn ON tn.slug = 'tenant-' || t
CROSS JOIN generate_series(1, t + 1) AS p;

INSERT INTO project_members
SELECT p.tenant_id, p.project_id, u.user_id, CASE WHEN u.user_id = p.owner_id THEN 'owner' ELSE 'member' END
FROM projects p JOIN users u ON u.tenant_id = p.tenant_id
WHERE (p.project_id + u.user_id) % 3 = 0;

INSERT INTO tasks
SELECT p.tenant_id, p.project_id * 100 + k, p.project_id,
       CASE WHEN k % 3 = 0 THEN NULL ELSE 1 + (p.project_id + k) % 5 END,
       'Task ' || k || ' of project ' || p.project_id,
       (ARRAY['todo', 'doing', 'done'])[1 + k % 3],
       CASE WHEN k % 2 = 0 THEN date '2025-03-01' + k END,
       CASE WHEN k % 4 = 1 THEN k * interval '90 minutes' END,
       CASE WHEN k % 5 = 0 THEN NULL ELSE ARRAY['l' || k % 3, 'l' || k % 2] END
FROM projects p CROSS JOIN generate_series(1, 2 + p.project_id::int % 4) AS k;

INSERT INTO invoices
SELECT i, tn.tenant_id, 'INV-' || lpad(i::text, 6, '0'), 99.5 * i, timestamptz '2024-06-01 12:00:00.123456+00' + i * interval '7 days',
       CASE WHEN i % 3 = 0 THEN NULL ELSE timestamptz '2024-06-03 08:30:00+00' + i * interval '7 days' END
FROM generate_series(1, 20) AS i
JOIN tenants tn ON tn.slug = 'tenant-' || (1 + i % 6);

INSERT INTO api_keys
SELECT ('10000000-0000-4000-8000-' || lpad(k::text, 12, '0'))::uuid, tn.tenant_id, sha256(('key' || k)::bytea), timestamptz '2024-02-01 00:00:00+00' + k * interval '1 hour'
FROM generate_series(1, 9) AS k
JOIN tenants tn ON tn.slug = 'tenant-' || (1 + k % 6);

INSERT INTO audit_log
SELECT tn.tenant_id, timestamptz '2024-03-01 00:00:00+00' + k * interval '1 minute', jsonb_build_object('event', 'login', 'n', k)
FROM generate_series(1, 12) AS k
JOIN tenants tn ON tn.slug = 'tenant-' || (1 + k % 6);
