package replicate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/internal/replicate"
)

// The replication connection holds the slot's exported snapshot, idle in
// its transaction, while the initial load reads: a database with a short
// idle_in_transaction_session_timeout must not end it (Connect turns the
// timeout off for that session).
func TestSlotSnapshotSurvivesIdleTimeout(t *testing.T) {
	t.Parallel()
	url, conn := setup(t)
	ctx := t.Context()
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" SET idle_in_transaction_session_timeout = '1s'"); err != nil {
		t.Fatal(err)
	}
	repl, err := replicate.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	slot, err := replicate.CreateSlot(ctx, repl, "slot_idle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		repl.Close(context.Background())
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := replicate.DropSlot(context.Background(), conn, "slot_idle")
			if err == nil || time.Now().After(deadline) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	time.Sleep(2500 * time.Millisecond)

	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(context.Background())
	tx, err := reader.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+slot.Snapshot+"'"); err != nil {
		t.Fatalf("join the slot's snapshot after 2.5 s idle: %v", err)
	}
}
