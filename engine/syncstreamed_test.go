package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
)

// streamedSchema: rows whose items render from the stream (every column of
// a type whose stream text is exact), with a sort key and an entity's
// where clause over non-key columns (old versions decide what goes), and a
// table whose large value the stream leaves out of updates (read back).
const streamedSchema = `
CREATE TABLE events (id bigint PRIMARY KEY, kind text NOT NULL, n int, amount numeric(14,4), ratio double precision,
  r4 real, ok boolean, at timestamptz, day date, doc jsonb, bin bytea, note varchar(40), tag uuid);
ALTER TABLE events REPLICA IDENTITY FULL;
CREATE TABLE blobs (id int PRIMARY KEY, n int NOT NULL, big text);
`

const streamedMapping = `table: %s
keys: { partition: PK, sort: SK }
entityAttribute: type
entities:
  Event:
    from: events
    key: { pk: "EV#{id}", sk: "KIND#{kind}#{n}" }
    attributes: { amount: amount, ratio: ratio, r4: r4, ok: ok, at: at, day: day, doc: doc, bin: bin, note: note, tag: tag }
  Open:
    from: events
    where: kind = 'open'
    key: { pk: "OPEN#{id}", sk: OPEN }
    attributes: { n: n }
  Blob:
    from: blobs
    key: { pk: "BLOB#{id}", sk: BLOB }
    attributes: { n: n, big: big }
`

// TestSyncStreamedRowsConverge churns rows that render from the stream
// (inserts, updates of key and filtered columns, primary key changes,
// several changes of one row in one transaction and across transactions,
// deletes, updates that leave a TOASTed value out of the stream) in three
// rounds, syncs after each and verifies the table against the source.
func TestSyncStreamedRowsConverge(t *testing.T) {
	t.Parallel()
	env := migratetest.New(t)
	env.Exec(t, streamedSchema)
	m, err := mapping.Parse("streamed.yaml", []byte(fmt.Sprintf(streamedMapping, env.Table)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.SyncConfig{Mapping: m, Postgres: env.PostgresURL, DynamoDB: env.DynamoDB, Table: env.Table, CreateTable: true,
		StateFile: filepath.Join(t.TempDir(), "state.json"), UntilCaughtUp: true}
	t.Cleanup(func() {
		c := cfg.WithDefaults()
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: env.PostgresURL, Slot: c.Slot, Publication: c.Publication}); err != nil {
			t.Errorf("drop sync: %v", err)
		}
	})
	r := rand.New(rand.NewPCG(7, 11))
	kinds := []string{"open", "closed", "held"}
	row := func(id int) string {
		return fmt.Sprintf("(%d, '%s', %d, %d.%04d, %g, %g, %v, '2024-%02d-%02d %02d:%02d:%02d.%06d+00', '20%02d-01-%02d', '{\"k\": %d, \"s\": \"x y\"}', '\\x%06x', 'note %d ''q''', '%08x-0000-4000-8000-%012x')",
			id, kinds[r.IntN(3)], r.IntN(5), r.IntN(100000)-50000, r.IntN(10000), r.Float64()*1e6-5e5, float32(r.Float64()), r.IntN(2) == 0,
			1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000), r.IntN(99), 1+r.IntN(28),
			r.IntN(1000), r.IntN(1<<24), r.IntN(100), r.Uint32(), r.Uint64()>>16)
	}
	var seed []string
	for id := 1; id <= 300; id++ {
		seed = append(seed, row(id))
	}
	env.Exec(t, "INSERT INTO events VALUES "+strings.Join(seed, ", ")+
		"; INSERT INTO blobs SELECT i, 0, (SELECT string_agg(md5((i * 1000 + j)::text), '') FROM generate_series(1, 300) j) FROM generate_series(1, 20) i")
	if _, err := engine.Sync(t.Context(), cfg); err != nil {
		t.Fatalf("initial sync: %v", err)
	}
	next := 301
	for round := 1; round <= 3; round++ {
		var txns []string
		for range 60 {
			var stmts []string
			for range 1 + r.IntN(4) {
				id := 1 + r.IntN(next-1)
				switch op := r.IntN(10); {
				case op < 2:
					stmts = append(stmts, "INSERT INTO events VALUES "+row(next))
					next++
				case op < 4: // a sort key column, and the Open filter
					stmts = append(stmts, fmt.Sprintf("UPDATE events SET kind = '%s', n = coalesce(n, 0) + 1 WHERE id = %d", kinds[r.IntN(3)], id))
				case op < 6:
					stmts = append(stmts, fmt.Sprintf("UPDATE events SET amount = amount + 0.0001, ratio = -ratio, at = at + interval '1 second', doc = doc || '{\"t\": %d}' WHERE id = %d", r.IntN(9), id))
				case op < 7: // a primary key change
					stmts = append(stmts, fmt.Sprintf("UPDATE events SET id = %d WHERE id = %d", next, id))
					next++
				case op < 8:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM events WHERE id = %d", id))
				case op < 9: // big stays out of the stream
					stmts = append(stmts, fmt.Sprintf("UPDATE blobs SET n = n + 1 WHERE id = %d", 1+r.IntN(20)))
				default:
					stmts = append(stmts, fmt.Sprintf("UPDATE events SET note = NULL, bin = NULL, tag = NULL WHERE id = %d", id))
				}
			}
			txns = append(txns, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT;")
		}
		env.Exec(t, strings.Join(txns, "\n"))
		res, err := engine.Sync(t.Context(), cfg)
		if err != nil {
			t.Fatalf("round %d: sync: %v", round, err)
		}
		if res.Final.Changes == 0 || res.Final.ItemsDeleted == 0 {
			t.Fatalf("round %d: %d changes, %d deletes: the churn did not reach the stream", round, res.Final.Changes, res.Final.ItemsDeleted)
		}
		v, err := engine.Verify(t.Context(), engine.VerifyConfig{CompareConfig: engine.CompareConfig{
			Mapping: m, Postgres: env.PostgresURL, DynamoDB: env.DynamoDB, Table: env.Table}, StateFile: cfg.StateFile})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Identical {
			t.Fatalf("round %d: the table differs from the source: %+v; missing %v, unexpected %v, different %v", round, v.Summary, v.Missing, v.Unexpected, v.Different)
		}
		t.Logf("round %d: %d changes, %d puts, %d deletes, %d rounds; verify identical", round, res.Final.Changes, res.Final.ItemsPut, res.Final.ItemsDeleted, res.Final.Rounds)
	}
}
