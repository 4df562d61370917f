package draft_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/draft"
	"github.com/pgdynamo/migrate/migratetest"
)

// An external test package: migratetest imports the engine, which
// imports draft.
func TestMain(m *testing.M) { migratetest.Main(m) }

// Read finds the tables, the foreign keys between them (composite ones in
// column order) and the most children per parent, NULL references left
// out; it leaves out migration history and foreign keys into other schemas.
func TestRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, migratetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `
		CREATE SCHEMA "Shop";
		CREATE SCHEMA other;
		CREATE TABLE other.countries (code text PRIMARY KEY);
		CREATE TABLE "Shop".tenants (tenant_id int PRIMARY KEY, country text REFERENCES other.countries);
		CREATE TABLE "Shop"."Order Lists" (tenant_id int REFERENCES "Shop".tenants, list_id int, PRIMARY KEY (tenant_id, list_id));
		CREATE TABLE "Shop".items (item_id int PRIMARY KEY, list_id int, tenant_id int,
			FOREIGN KEY (tenant_id, list_id) REFERENCES "Shop"."Order Lists" (tenant_id, list_id));
		CREATE TABLE "Shop".schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL);
		CREATE VIEW "Shop".v AS SELECT 1 AS x;
		INSERT INTO other.countries VALUES ('NO');
		INSERT INTO "Shop".tenants VALUES (1, 'NO'), (2, NULL);
		INSERT INTO "Shop"."Order Lists" VALUES (1, 1), (1, 2), (1, 3), (2, 1);
		INSERT INTO "Shop".items VALUES (1, 1, 1), (2, 1, 1), (3, 2, 1), (4, NULL, 1), (5, NULL, 1), (6, NULL, 1), (7, 1, 2)`); err != nil {
		t.Fatal(err)
	}
	src, err := draft.Read(ctx, conn, draft.ReadConfig{Schema: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.Tables, []string{"Order Lists", "items", "tenants"}) || src.Ignored["schema_migrations"] == "" {
		t.Errorf("tables %q, ignored %v", src.Tables, src.Ignored)
	}
	if src.Catalog.Lookup("Shop", "items") == nil || src.Database == "" {
		t.Errorf("catalog lacks Shop.items or the database name is empty (%q)", src.Database)
	}
	got := map[string]draft.ForeignKey{}
	for _, fk := range src.ForeignKeys {
		got[fk.Table+">"+fk.RefTable] = fk
	}
	if len(got) != 2 {
		t.Fatalf("foreign keys %+v, want items>Order Lists and Order Lists>tenants", src.ForeignKeys)
	}
	items := got["items>Order Lists"]
	if !slices.Equal(items.Columns, []string{"tenant_id", "list_id"}) || !slices.Equal(items.RefColumns, []string{"tenant_id", "list_id"}) ||
		!items.Measured || items.MaxChildren != 2 {
		t.Errorf("items > Order Lists: %+v; want (tenant_id, list_id), 2 children at most (the NULLs are no parent's)", items)
	}
	if lists := got["Order Lists>tenants"]; lists.MaxChildren != 3 {
		t.Errorf("Order Lists > tenants: %+v, want 3 children at most", lists)
	}

	if _, err := draft.Read(ctx, conn, draft.ReadConfig{Schema: "Shop", Tables: []string{"items", "nope"}}); !errors.Is(err, draft.ErrUnknownTable) {
		t.Errorf("an unknown table: %v", err)
	}
	src, err = draft.Read(ctx, conn, draft.ReadConfig{Schema: "Shop", Tables: []string{"items", "schema_migrations"}})
	if err != nil || !slices.Equal(src.Tables, []string{"items", "schema_migrations"}) || len(src.ForeignKeys) != 0 {
		t.Errorf("named tables: %v, %+v", err, src)
	}
	if _, err := draft.Read(ctx, conn, draft.ReadConfig{Schema: "empty"}); !errors.Is(err, draft.ErrNoTables) {
		t.Errorf("an empty schema: %v", err)
	}
}
