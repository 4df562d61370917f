package extract_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/migratetest"
)

// Connections that join an exported snapshot see what it sees, not what
// was committed since; ranges from SplitPoints read every row once.
func TestSnapshotSharedAndSplit(t *testing.T) {
	ctx := t.Context()
	url := migratetest.PostgresURL(t)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, `CREATE TABLE pairs (a int, b text, v int, PRIMARY KEY (a, b));
		INSERT INTO pairs SELECT i / 7, 'k' || (i % 7), i FROM generate_series(1, 5000) i; ANALYZE pairs`); err != nil {
		t.Fatal(err)
	}
	open := func(id string) *extract.Snapshot {
		conn, err := extract.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		snap, err := extract.BeginAt(ctx, conn, id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { snap.Close(context.Background()) })
		return snap
	}
	coord := open("")
	id, err := coord.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Committed after the snapshot was taken: nobody reading in it sees it.
	if _, err := admin.Exec(ctx, `INSERT INTO pairs VALUES (10000, 'late', 0)`); err != nil {
		t.Fatal(err)
	}
	cat, err := coord.Catalog(ctx, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	q := extract.Query{Schema: "public", Table: "pairs", Columns: cat.Lookup("public", "pairs").Columns, OrderBy: []string{"a", "b"}}
	points, err := coord.SplitPoints(ctx, q, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 3 {
		t.Fatalf("split points %v, want 3", points)
	}
	var all []string
	var lower []any
	for i := range len(points) + 1 {
		rq := q
		rq.After = lower
		if i < len(points) {
			rq.Until = points[i]
			lower = points[i]
		}
		n := 0
		for r, err := range open(id).Rows(ctx, rq) {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, fmt.Sprint(r.Values...))
			n++
		}
		if n < 500 || n > 2500 {
			t.Errorf("range %d holds %d rows of 5000: the split is far off", i, n)
		}
	}
	var whole []string
	for r, err := range coord.Rows(ctx, q) {
		if err != nil {
			t.Fatal(err)
		}
		whole = append(whole, fmt.Sprint(r.Values...))
	}
	if len(whole) != 5000 || !slices.Equal(all, whole) {
		t.Errorf("ranges read %d rows, the whole table %d; the same in order: %v", len(all), len(whole), slices.Equal(all, whole))
	}
	if _, err := extract.BeginAt(ctx, nil, "x'; DROP TABLE pairs; --"); err == nil {
		t.Error("a malformed snapshot id was accepted")
	}
}
