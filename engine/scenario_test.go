package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/draft"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

// Scenario tests: every verb through the engine's API, against the test
// services (a seeded bookstore in PostgreSQL, DynamoDB Local), each result
// checked by querying the target or the source. The CLI's tests check its
// flags, output and exit codes; these check what the verbs do.

// sqlCount runs a count query on the source.
func (e *syncEnv) sqlCount(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := e.conn.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// client is the DynamoDB client of the sync config, as the SDK's type.
func (e *syncEnv) client(t *testing.T) *dynamodb.Client {
	t.Helper()
	c, ok := e.cfg.DynamoDB.(*dynamodb.Client)
	if !ok {
		t.Fatalf("the test's DynamoDB client is a %T", e.cfg.DynamoDB)
	}
	return c
}

// query reads one partition of the table (or of index) through Query.
func (e *syncEnv) query(t *testing.T, index string, pks ...string) []map[string]types.AttributeValue {
	t.Helper()
	q := engine.QueryInput{Table: e.cfg.Table, Index: index, Consistent: index == ""}
	if len(pks) == 1 {
		q.PK = pks[0]
	} else {
		q.PKs = pks
	}
	items, err := engine.Query(t.Context(), e.client(t), q)
	if err != nil {
		t.Fatalf("query %s %v: %v", index, pks, err)
	}
	return items
}

func TestScenarioRunPlanVerifyPruneQueryProve(t *testing.T) {
	e := newSyncEnv(t, 30)
	ctx := t.Context()
	m, state := e.cfg.Mapping, e.cfg.StateFile
	cc := engine.CompareConfig{Mapping: m, Postgres: e.pg, DynamoDB: e.cfg.DynamoDB, Table: e.cfg.Table}
	verify := func() *engine.VerifyConfig {
		return &engine.VerifyConfig{CompareConfig: cc, StateFile: state}
	}

	// Run loads the table and records the "count: auto" shard counts.
	run := engine.RunConfig{Mapping: m, Postgres: e.pg, DynamoDB: e.cfg.DynamoDB, Table: e.cfg.Table, CreateTable: true, StateFile: state}
	res, err := engine.Run(ctx, run)
	if err != nil || res.Status != engine.StatusComplete {
		t.Fatalf("run: %v (%+v)", err, res)
	}
	recorded, err := engine.ReadStateShards(state, e.cfg.Table)
	if err != nil || len(recorded.Counts) != 1 || recorded.Counts[0].Count < 1 {
		t.Fatalf("the run's state file: %+v, %v; want the Order GSI2 count", recorded, err)
	}
	shards := recorded.Counts[0].Count

	// Verify, with the run's shard counts: identical, every item.
	v, err := engine.Verify(ctx, *verify())
	if err != nil {
		t.Fatal(err)
	}
	if !v.Identical || v.Summary.Expected != res.Total.ItemsWritten || v.Summary.Matching != v.Summary.Expected {
		t.Fatalf("verify after run: identical %v, %+v; the run wrote %d items", v.Identical, v.Summary, res.Total.ItemsWritten)
	}
	// A state file of another table is refused, not used.
	other := filepath.Join(t.TempDir(), "other.json")
	if err := checkpoint.Save(other, &checkpoint.State{Version: checkpoint.Version, Table: "another-table",
		Shards: []checkpoint.Shard{{Entity: "Order", Index: "GSI2", Count: shards + 1}}}); err != nil {
		t.Fatal(err)
	}
	bad := verify()
	bad.StateFile = other
	var te *engine.StateTableError
	if _, err := engine.Verify(ctx, *bad); !errors.As(err, &te) || !errors.Is(err, engine.ErrState) {
		t.Fatalf("verify with another table's state file: %v, want a StateTableError", err)
	}

	// Plan: nothing to do.
	p, err := engine.Plan(ctx, engine.PlanConfig{CompareConfig: cc})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Summary; s.Create != 0 || s.Change != 0 || s.Stale != 0 || s.Unchanged != res.Total.ItemsWritten {
		t.Fatalf("plan after run: %+v, want %d unchanged and nothing else", s, res.Total.ItemsWritten)
	}

	// The source changes: a customer renamed, an order deleted with its
	// lines (stale: the Order, its OrderSummary and its OrderLines).
	var order, customer int64
	if err := e.conn.QueryRow(ctx, `SELECT order_id, customer_id FROM orders WHERE EXISTS (SELECT FROM order_items i WHERE i.order_id = orders.order_id) ORDER BY order_id LIMIT 1`).Scan(&order, &customer); err != nil {
		t.Fatal(err)
	}
	lines := e.sqlCount(t, `SELECT count(*) FROM order_items WHERE order_id = $1`, order)
	stale := int64(2 + lines)
	e.exec(t, fmt.Sprintf(`UPDATE customers SET name = name || ' (renamed)' WHERE customer_id = %d`, customer))
	e.exec(t, fmt.Sprintf(`DELETE FROM orders WHERE order_id = %d`, order))

	p, err = engine.Plan(ctx, engine.PlanConfig{CompareConfig: cc})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Summary; s.Change != 1 || s.Stale != stale || s.Create != 0 {
		t.Fatalf("plan after the change: %+v, want 1 change (the renamed profile) and %d stale", s, stale)
	}
	v, err = engine.Verify(ctx, *verify())
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Summary; v.Identical || s.Different != 1 || s.Unexpected != stale || s.Missing != 0 {
		t.Fatalf("verify after the change: identical %v, %+v; want 1 different, %d unexpected", v.Identical, s, stale)
	}

	// Prune lists the stale items, then deletes them.
	orderPK := fmt.Sprintf("ORDER#%d", order)
	pr, err := engine.Prune(ctx, engine.PruneConfig{CompareConfig: cc})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Deleted || pr.Total != stale || len(e.query(t, "", orderPK)) != 1+lines {
		t.Fatalf("prune without Delete: %+v; want %d stale listed, none deleted", pr, stale)
	}
	pr, err = engine.Prune(ctx, engine.PruneConfig{CompareConfig: cc, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Deleted || pr.Total != stale {
		t.Fatalf("prune: %+v; want %d deleted", pr, stale)
	}
	if got := e.query(t, "", orderPK); len(got) != 0 {
		t.Fatalf("partition %s after prune: %d items, want none", orderPK, len(got))
	}

	// Run again: the renamed profile is rewritten; verify is identical.
	if res, err = engine.Run(ctx, run); err != nil || res.Status != engine.StatusComplete {
		t.Fatalf("second run: %v", err)
	}
	if v, err = engine.Verify(ctx, *verify()); err != nil || !v.Identical {
		t.Fatalf("verify after the second run: %v, %+v", err, v)
	}

	// Query: a customer's partition holds the profile and every order.
	wantItems := 1 + e.sqlCount(t, `SELECT count(*) FROM orders WHERE customer_id = $1`, customer)
	if got := e.query(t, "", fmt.Sprintf("CUSTOMER#%d", customer)); len(got) != wantItems {
		t.Errorf("customer %d's partition: %d items, want %d", customer, len(got), wantItems)
	}
	// The sharded index, every shard merged, with the recorded count.
	recorded, err = engine.ReadStateShards(state, e.cfg.Table)
	if err != nil {
		t.Fatal(err)
	}
	pks, err := engine.MappingShardKeys(m, e.cfg.Table, "GSI2", "STATUS#OPEN", state)
	if n, _ := recorded.Count("Order", "GSI2"); err != nil || len(pks) != n {
		t.Fatalf("shard keys: %q, %v; want %d", pks, err, n)
	}
	open := e.sqlCount(t, `SELECT count(*) FROM orders WHERE status = 'OPEN'`)
	if got := e.query(t, "GSI2", pks...); len(got) != open || open == 0 {
		t.Errorf("GSI2 STATUS#OPEN over %d shards: %d items, want %d (the source's OPEN orders)", len(pks), len(got), open)
	}

	// Prove: every access pattern answers as its SQL does.
	pres, err := engine.Prove(ctx, engine.ProveConfig{Config: prove.Config{Mapping: m, Table: e.cfg.Table, Samples: 5},
		Postgres: e.pg, DynamoDB: e.client(t), StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	if !pres.Proven {
		t.Fatalf("prove: %s", pres.Summary())
	}
	if len(pres.Patterns) != len(m.AccessPatterns) {
		t.Errorf("prove asked %d patterns, the mapping has %d", len(pres.Patterns), len(m.AccessPatterns))
	}
}

// TestScenarioSyncCutover: a sync loads and streams; ReadSyncState sees
// its slot and complete load; a cutover with a transaction holding a
// write lock on a mapped table is NO-GO and names it; once writes stop,
// the cutover applies the last changes, verifies with the sync's shard
// counts, and is GO; DropSync removes the slot.
func TestScenarioSyncCutover(t *testing.T) {
	e := newSyncEnv(t, 20)
	ctx := t.Context()
	e.exec(t, `ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL`)
	res, err := engine.Sync(ctx, e.cfg)
	if err != nil || !res.CaughtUp || res.Load == nil {
		t.Fatalf("sync: %v (%+v)", err, res)
	}
	sc := e.cfg.WithDefaults()
	st, err := engine.ReadSyncState(ctx, engine.SyncStateConfig{Postgres: e.pg, Slot: sc.Slot, Publication: sc.Publication, StateFile: sc.StateFile})
	if err != nil {
		t.Fatal(err)
	}
	if st.Slot == nil || st.Slot.Active || st.Load == nil || !st.Load.Complete || len(st.Publication) == 0 {
		t.Fatalf("sync state after a sync: slot %+v, load %+v, publication %v", st.Slot, st.Load, st.Publication)
	}

	// Changes after the sync, and a transaction still open on orders.
	e.exec(t, `INSERT INTO orders VALUES (200001, 1, 'OPEN', '2024-07-01 10:00:00+00', 5.00, NULL);
		UPDATE customers SET name = 'Cut Over' WHERE customer_id = 2`)
	writer, err := pgx.Connect(ctx, e.pg)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE orders SET total = total WHERE order_id = 200001`); err != nil {
		t.Fatal(err)
	}
	cut := engine.CutoverConfig{Sync: e.cfg, Quiet: 500 * time.Millisecond}
	no, err := engine.Cutover(ctx, cut)
	if err != nil {
		t.Fatalf("cutover with an open writer: %v", err)
	}
	if no.Go || len(no.Writers) == 0 || no.Writers[0].Table != "public.orders" && no.Writers[0].Table != "orders" {
		t.Fatalf("cutover with an open writer: go %v, writers %+v, no-go %q", no.Go, no.Writers, no.NoGo)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	ok, err := engine.Cutover(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	if !ok.Go || ok.Verify == nil || !ok.Verify.Identical || len(ok.Writers) != 0 {
		t.Fatalf("cutover after writes stopped: go %v, no-go %q, verify %+v", ok.Go, ok.NoGo, ok.Verify)
	}
	// The new order is in the table, by the key verify compared.
	if got := e.query(t, "", "ORDER#200001"); len(got) != 1 {
		t.Errorf("partition ORDER#200001 after the cutover: %d items, want the OrderSummary", len(got))
	}

	dropped, err := engine.DropSync(ctx, engine.DropSyncConfig{Postgres: e.pg, Slot: sc.Slot, Publication: sc.Publication})
	if err != nil || !dropped.SlotDropped || !dropped.PublicationDropped {
		t.Fatalf("drop sync: %+v, %v", dropped, err)
	}
	if st, err := engine.ReadSyncState(ctx, engine.SyncStateConfig{Postgres: e.pg, Slot: sc.Slot, Publication: sc.Publication}); err != nil || st.Slot != nil || st.Publication != nil {
		t.Fatalf("sync state after the drop: %+v, %v", st, err)
	}
}

// TestScenarioDraft: Draft drafts a mapping of the bookstore that parses
// and passes Validate against the same source; an unknown table is a
// configuration error.
func TestScenarioDraft(t *testing.T) {
	pg := migratetest.PostgresURL(t)
	ctx := t.Context()
	if err := sqlschema.Up(ctx, pg); err != nil {
		t.Fatal(err)
	}
	d, err := engine.Draft(ctx, engine.DraftConfig{Postgres: pg, Name: "draft.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("draft.yaml", d.YAML)
	if err != nil {
		t.Fatalf("the draft does not parse: %v\n%s", err, d.YAML)
	}
	if _, err := engine.Validate(ctx, m, pg); err != nil {
		t.Fatalf("the draft does not validate: %v", err)
	}
	if d.Entities != len(m.Entities) || d.Entities < 6 || d.Table != m.Table {
		t.Errorf("draft of %d entities into %s; the file has %d into %s (the bookstore has 6 tables)", d.Entities, d.Table, len(m.Entities), m.Table)
	}
	_, err = engine.Draft(ctx, engine.DraftConfig{Postgres: pg, ReadConfig: draft.ReadConfig{Tables: []string{"no_such_table"}}})
	if !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("draft of an unknown table: %v, want an ErrConfig naming it", err)
	}
}
