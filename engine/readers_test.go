package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// Parallel readers split the analyzed tables into ranges and produce the
// same items as one reader; a run that fails halfway resumes range by
// range, with another number of readers.
func TestParallelReaders(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "ANALYZE customers; ANALYZE orders;")
	one := newFakeTarget()
	if _, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: one, StateFile: filepath.Join(t.TempDir(), "one.json")}); err != nil {
		t.Fatal(err)
	}
	four := newFakeTarget()
	state := filepath.Join(t.TempDir(), "four.json")
	res, err := engine.Run(t.Context(), engine.RunConfig{Mapping: m, Postgres: pg, Target: four, StateFile: state, Readers: 4, RangeRows: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(four.keys(), one.keys()) || !slices.Equal(one.keys(), allShopKeys()) {
		t.Errorf("4 readers wrote %d keys, 1 reader %d", len(four.keys()), len(one.keys()))
	}
	if res.Total.RowsRead != 250 || res.AllRuns.Rows != 250 {
		t.Errorf("4 readers: %+v, all runs %+v", res.Total, res.AllRuns)
	}
	st, err := checkpoint.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	ranges := map[string]int{}
	for _, s := range st.Sources {
		if s.Table == "" || !s.Done || !strings.HasPrefix(s.Name, s.Table+" [") {
			t.Errorf("state source %+v: want a done range of a table", s)
		}
		ranges[s.Table]++
	}
	// 50 customers and 200 orders at 20 rows a range: 3 and 10 ranges,
	// fewer when the sample has fewer distinct quantiles.
	if ranges["public.customers"] < 2 || ranges["public.orders"] < 5 {
		t.Errorf("ranges per table: %v", ranges)
	}

	// Fail after 100 items, resume with 2 readers: every item once more
	// at most, every range continued from its own checkpoint.
	state = filepath.Join(t.TempDir(), "resumed.json")
	first := newFakeTarget()
	first.failAfter = 100
	cfg := engine.RunConfig{Mapping: m, Postgres: pg, Target: first, StateFile: state, Readers: 4, RangeRows: 20}
	if _, err := engine.Run(t.Context(), cfg); !errors.Is(err, errTargetDown) {
		t.Fatalf("first run: %v", err)
	}
	st, err = checkpoint.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	partial := 0
	for _, s := range st.Sources {
		if !s.Done && len(s.After) > 0 {
			partial++
		}
	}
	second := newFakeTarget()
	cfg.Target, cfg.Resume, cfg.Readers = second, true, 2
	res, err = engine.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	union := map[string]bool{}
	for _, k := range append(first.keys(), second.keys()...) {
		union[k] = true
	}
	if len(union) != 250 || res.AllRuns.Items != 250 || res.AllRuns.Rows != 250 {
		t.Errorf("after resume: %d distinct keys, all runs %+v", len(union), res.AllRuns)
	}
	if res.Total.ItemsWritten > 250-int64(st.Rows())+int64(100) || len(second.keys()) == 250 {
		t.Errorf("the resumed run wrote %d items; %d rows were done before (%d ranges partly)", res.Total.ItemsWritten, st.Rows(), partial)
	}
}

// A run given an exported snapshot reads in it: rows committed after the
// snapshot was exported are not read, with one reader or several.
func TestRunInGivenSnapshot(t *testing.T) {
	t.Parallel()
	pg, m := shop(t, "ANALYZE customers; ANALYZE orders;")
	ctx := t.Context()
	holder, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	tx, err := holder.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var id string
	if err := tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	writer, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())
	if _, err := writer.Exec(ctx, "INSERT INTO customers VALUES (51, 'late', 0); DELETE FROM orders WHERE id = 7"); err != nil {
		t.Fatal(err)
	}
	for _, readers := range []int{1, 3} {
		target := newFakeTarget()
		_, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pg, Target: target, Snapshot: id, Readers: readers, RangeRows: 20,
			StateFile: filepath.Join(t.TempDir(), "s.json")})
		if err != nil {
			t.Fatal(err)
		}
		if got := target.keys(); !slices.Equal(got, allShopKeys()) {
			t.Errorf("%d readers in the snapshot: %d keys, want the %d of the snapshot", readers, len(got), len(allShopKeys()))
		}
	}
	if _, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pg, Target: newFakeTarget(), Snapshot: "nope",
		StateFile: filepath.Join(t.TempDir(), "bad.json")}); err == nil {
		t.Error("a malformed snapshot id was accepted")
	}
}
