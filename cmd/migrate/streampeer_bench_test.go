package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/migratetest"
)

// BenchmarkStreamPeer sets sync against the stream-to-DynamoDB program a
// competent engineer writes by hand (peerDrain, below): pglogrepl in,
// one item per row change, BatchWriteItem out. The workload has no
// fan-out: one table, one entity, each row one item (peerSchema). Each
// round builds a backlog of MIGRATE_BENCH_PEER_TXNS transactions (default
// 10,000: one insert, two updates and one delete each) that both slots
// hold, then drains it with sync and with the peer, in turn (A/B, then
// B/A), into the in-process endpoint that accepts every batch. Reported:
// each side's changes/s and the median of the rounds' ratios sync ÷ peer.
//
//	make bench BENCH=StreamPeer    # MIGRATE_BENCH_ROUNDS pairs (default 3)
func BenchmarkStreamPeer(b *testing.B) {
	ctx := b.Context()
	txns := 10_000
	if s := os.Getenv("MIGRATE_BENCH_PEER_TXNS"); s != "" {
		if _, err := fmt.Sscan(s, &txns); err != nil {
			b.Fatalf("MIGRATE_BENCH_PEER_TXNS: %v", err)
		}
	}
	pg, conn, null, cfg := peerSync(b, "bench_sync", "bench_events")
	// sync's initial load and slot; then the peer's slot, on the same
	// publication, so that both hold every backlog.
	if _, err := engine.Sync(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot('bench_peer', 'pgoutput')"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pg)
		if err == nil {
			_, err = c.Exec(context.Background(), "SELECT pg_drop_replication_slot('bench_peer')")
			c.Close(context.Background())
		}
		if err != nil {
			b.Errorf("drop the peer's slot: %v", err)
		}
	})
	peerClient, err := baselineClient(ctx, null.URL)
	if err != nil {
		b.Fatal(err)
	}
	var ratios, syncRates, peerRates []float64
	round := 0
	for b.Loop() {
		for range benchRounds(b) {
			if _, err := conn.Exec(ctx, "CALL bench_churn($1)", txns); err != nil {
				b.Fatal(err)
			}
			// Past every commit of the backlog (see CurrentLSN).
			target, err := replicate.CurrentLSN(ctx, conn)
			if err != nil {
				b.Fatal(err)
			}
			runSync := func() float64 {
				began := time.Now()
				res, err := engine.Sync(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				rate := float64(res.Final.Changes) / time.Since(began).Seconds()
				b.Logf("sync: %d changes, %d items in %v: %.0f changes/s", res.Final.Changes, res.Final.ItemsPut+res.Final.ItemsDeleted, time.Since(began).Round(time.Millisecond), rate)
				return rate
			}
			runPeer := func() float64 {
				began := time.Now()
				changes, err := peerDrain(ctx, pg, "bench_peer", "bench_events", target, peerClient, "BenchNull")
				if err != nil {
					b.Fatal(err)
				}
				rate := float64(changes) / time.Since(began).Seconds()
				b.Logf("peer: %d changes in %v: %.0f changes/s", changes, time.Since(began).Round(time.Millisecond), rate)
				return rate
			}
			var s, p float64
			if round%2 == 0 {
				s, p = runSync(), runPeer()
			} else {
				p, s = runPeer(), runSync()
			}
			round++
			syncRates, peerRates, ratios = append(syncRates, s), append(peerRates, p), append(ratios, s/p)
			b.Logf("round %d: sync ÷ peer = %.2f", round, s/p)
		}
	}
	b.ReportMetric(median(syncRates), "sync-changes/s")
	b.ReportMetric(median(peerRates), "peer-changes/s")
	b.ReportMetric(median(ratios), "sync/peer")
}

// peerSync prepares a sync of the workload without fan-out into the
// in-process endpoint: the schema, the mapping, and a SyncConfig whose
// slot and publication are dropped at the end.
func peerSync(b *testing.B, slot, publication string) (pg string, conn *pgx.Conn, null *httptest.Server, cfg engine.SyncConfig) {
	ctx := b.Context()
	null = httptest.NewServer(nullWithIndexes(nullDynamoDB(new(atomic.Int64))))
	b.Cleanup(null.Close)
	pg = migratetest.PostgresURL(b)
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, peerSchema); err != nil {
		b.Fatal(err)
	}
	mappingFile := filepath.Join(b.TempDir(), "events.yaml")
	if err := os.WriteFile(mappingFile, []byte(peerMapping), 0o644); err != nil {
		b.Fatal(err)
	}
	m, err := engine.LoadMapping(mappingFile)
	if err != nil {
		b.Fatal(err)
	}
	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: null.URL})
	if err != nil {
		b.Fatal(err)
	}
	cfg = engine.SyncConfig{Mapping: m, Postgres: pg, DynamoDB: client, Table: "BenchNull", UntilCaughtUp: true,
		StateFile: filepath.Join(b.TempDir(), "state.json"), Slot: slot, Publication: publication}
	b.Cleanup(func() {
		if _, err := engine.DropSync(context.Background(), engine.DropSyncConfig{Postgres: pg, Slot: slot, Publication: publication}); err != nil {
			b.Errorf("drop sync: %v", err)
		}
	})
	return pg, conn, null, cfg
}

// peerSchema is the workload without fan-out: a table of events, and a
// procedure committing txns transactions of per x four changes each.
const peerSchema = `
CREATE TABLE IF NOT EXISTS bench_events (id bigint PRIMARY KEY, kind text NOT NULL, payload text NOT NULL, n int NOT NULL DEFAULT 0);
INSERT INTO bench_events SELECT i, 'seed', md5(i::text), 0 FROM generate_series(1, 10000) i ON CONFLICT DO NOTHING;
CREATE SEQUENCE IF NOT EXISTS bench_events_id START 1000001;
CREATE OR REPLACE PROCEDURE bench_churn(txns int, per int DEFAULT 1) LANGUAGE plpgsql AS $$
DECLARE new_id bigint; a bigint; b bigint;
BEGIN
  FOR i IN 1..txns LOOP
    FOR j IN 1..per LOOP
      new_id := nextval('bench_events_id');
      -- Drawn first: random() in the WHERE clause would be evaluated per
      -- row, a sequential scan.
      a := 1 + (random() * 9999)::int;
      b := 1 + (random() * 9999)::int;
      INSERT INTO bench_events VALUES (new_id, 'new', md5(new_id::text), 0);
      UPDATE bench_events SET n = n + 1, payload = md5(random()::text) WHERE bench_events.id = a;
      UPDATE bench_events SET n = n + 1, kind = 'changed' WHERE bench_events.id = b;
      DELETE FROM bench_events WHERE bench_events.id = new_id - 500;
    END LOOP;
    COMMIT;
  END LOOP;
END $$;
`

// peerMapping is the events as one entity, each row one item.
const peerMapping = `table: BenchNull
keys: { partition: PK, sort: SK }
entityAttribute: type
entities:
  Event:
    from: bench_events
    key: { pk: "EVENT#{id}", sk: "EVENT" }
    attributes: { id: id, kind: kind, payload: payload, n: n }
`

// peerDrain is the hand-written peer: it streams the slot from its
// confirmed position until target, turns each row change into one put or
// delete (every column a string attribute), and writes them with 8
// goroutines, 25 items a BatchWriteItem call; a key always goes to the
// same goroutine, so its writes stay in order, and a key written twice
// in one batch is written once, as its last version. It confirms target
// once every write is acknowledged, and returns the changes it applied.
func peerDrain(ctx context.Context, pg, slot, publication string, target pglogrepl.LSN, client *dynamodb.Client, table string) (int64, error) {
	cfg, err := pgconn.ParseConfig(pg)
	if err != nil {
		return 0, err
	}
	cfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	if err := pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + publication + "'"},
	}); err != nil {
		return 0, err
	}
	const workers = 8
	queues := make([]chan types.WriteRequest, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan types.WriteRequest, 1000)
		wg.Go(func() { errs <- peerWriter(ctx, client, table, queues[i]) })
	}
	relations := map[uint32]*pglogrepl.RelationMessage{}
	var changes int64
	inTxn := false
	send := func(rel *pglogrepl.RelationMessage, tuple *pglogrepl.TupleData, del bool) {
		item := map[string]types.AttributeValue{}
		var id string
		for i, c := range tuple.Columns {
			if c.DataType == pglogrepl.TupleDataTypeText {
				item[rel.Columns[i].Name] = &types.AttributeValueMemberS{Value: string(c.Data)}
				if rel.Columns[i].Name == "id" {
					id = string(c.Data)
				}
			}
		}
		key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "EVENT#" + id}, "SK": &types.AttributeValueMemberS{Value: "EVENT"}}
		h := fnv.New32a()
		h.Write([]byte(id))
		q := queues[h.Sum32()%workers]
		if del {
			q <- types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key}}
			return
		}
		item["PK"], item["SK"], item["type"] = key["PK"], key["SK"], &types.AttributeValueMemberS{Value: "Event"}
		q <- types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	var recvErr error
	for done := false; !done; {
		raw, err := conn.ReceiveMessage(ctx)
		if err != nil {
			recvErr = err
			break
		}
		cd, ok := raw.(*pgproto3.CopyData)
		if !ok || len(cd.Data) == 0 {
			if e, ok := raw.(*pgproto3.ErrorResponse); ok {
				recvErr = pgconn.ErrorResponseToPgError(e)
				break
			}
			continue
		}
		switch cd.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(cd.Data[1:])
			if err != nil {
				recvErr = err
				break
			}
			// A drain lasts seconds, well under wal_sender_timeout: the
			// one status update is the last.
			done = !inTxn && ka.ServerWALEnd >= target
		case pglogrepl.XLogDataByteID:
			xld, err := pglogrepl.ParseXLogData(cd.Data[1:])
			if err != nil {
				recvErr = err
				break
			}
			msg, err := pglogrepl.Parse(xld.WALData)
			if err != nil {
				recvErr = err
				break
			}
			switch m := msg.(type) {
			case *pglogrepl.RelationMessage:
				relations[m.RelationID] = m
			case *pglogrepl.BeginMessage:
				inTxn = true
			case *pglogrepl.CommitMessage:
				inTxn = false
				done = m.TransactionEndLSN >= target
			case *pglogrepl.InsertMessage:
				changes++
				send(relations[m.RelationID], m.Tuple, false)
			case *pglogrepl.UpdateMessage:
				changes++
				send(relations[m.RelationID], m.NewTuple, false)
			case *pglogrepl.DeleteMessage:
				changes++
				send(relations[m.RelationID], m.OldTuple, true)
			}
		}
		if recvErr != nil {
			break
		}
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		recvErr = errors.Join(recvErr, err)
	}
	if recvErr != nil {
		return changes, recvErr
	}
	// Every write is acknowledged: the slot may move on.
	return changes, pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: target})
}

// peerWriter writes the requests of one queue, 25 distinct keys a call,
// re-sending UnprocessedItems; it drains the queue on an error.
func peerWriter(ctx context.Context, client *dynamodb.Client, table string, q <-chan types.WriteRequest) error {
	var firstErr error
	batch := make([]types.WriteRequest, 0, 25)
	at := map[string]int{} // key → index in batch
	flush := func() {
		reqs := map[string][]types.WriteRequest{table: batch}
		for len(reqs) > 0 && firstErr == nil {
			out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: reqs})
			if err != nil {
				firstErr = err
				break
			}
			reqs = out.UnprocessedItems
		}
		batch = batch[:0]
		clear(at)
	}
	for r := range q {
		var pk types.AttributeValue
		if r.PutRequest != nil {
			pk = r.PutRequest.Item["PK"]
		} else {
			pk = r.DeleteRequest.Key["PK"]
		}
		k := pk.(*types.AttributeValueMemberS).Value
		if i, ok := at[k]; ok {
			batch[i] = r // the later version of the key wins
			continue
		}
		at[k] = len(batch)
		batch = append(batch, r)
		if len(batch) == 25 {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	return firstErr
}

// BenchmarkStreamSteady runs sync on the workload without fan-out
// (peerSchema) while a generator commits MIGRATE_BENCH_STEADY_RATE row
// changes a second (default 5,000: transactions of 40 changes, paced
// every 10 ms) for 20 s, into the in-process endpoint. Reported: the
// changes/s generated and applied, and the commit-to-acknowledged lag of
// the rounds (SyncStatus.LastLatency, sampled every 250 ms after the
// first second). The test server commits asynchronously: a commit
// reaches the stream only once the WAL writer flushed it (up to 200 ms).
//
//	make bench BENCH=StreamSteady
func BenchmarkStreamSteady(b *testing.B) {
	ctx := b.Context()
	rate := 5000.0
	if s := os.Getenv("MIGRATE_BENCH_STEADY_RATE"); s != "" {
		if _, err := fmt.Sscan(s, &rate); err != nil {
			b.Fatalf("MIGRATE_BENCH_STEADY_RATE: %v", err)
		}
	}
	_, conn, _, cfg := peerSync(b, "bench_steady", "bench_steady")
	if _, err := engine.Sync(ctx, cfg); err != nil { // the initial load
		b.Fatal(err)
	}
	const span = 20 * time.Second
	const per = 10 // four changes each, in one transaction
	var latencies []float64
	var generated, applied int64
	var elapsed time.Duration
	for b.Loop() {
		sampler := &lagSampler{}
		cfg.UntilCaughtUp, cfg.Observer, cfg.StatusEvery = false, sampler, 250*time.Millisecond
		stop := backgroundSync(b, ctx, cfg)
		began := time.Now()
		tick := time.NewTicker(10 * time.Millisecond)
		txns := 0
		for time.Since(began) < span {
			<-tick.C
			if n := int(time.Since(began).Seconds()*rate/(4*per)) - txns; n > 0 {
				if _, err := conn.Exec(ctx, "CALL bench_churn($1, $2)", n, per); err != nil {
					b.Fatal(err)
				}
				txns += n
			}
		}
		tick.Stop()
		gen := time.Since(began)
		final := stop()
		generated += int64(4 * per * txns)
		applied += final.Final.Changes
		elapsed += gen
		sampler.mu.Lock()
		for _, s := range sampler.samples[min(4, len(sampler.samples)):] {
			latencies = append(latencies, s.LastLatency)
		}
		sampler.mu.Unlock()
		b.Logf("generated %d changes in %v (%.0f/s); sync applied %d changes, %d items, %d rounds", 4*per*txns, gen.Round(time.Millisecond),
			float64(4*per*txns)/gen.Seconds(), final.Final.Changes, final.Final.ItemsPut+final.Final.ItemsDeleted, final.Final.Rounds)
	}
	if len(latencies) == 0 {
		b.Fatal("no status samples")
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(generated)/elapsed.Seconds(), "generated-changes/s")
	b.ReportMetric(float64(applied)/elapsed.Seconds(), "applied-changes/s")
	b.ReportMetric(latencies[len(latencies)/2], "lag-p50-s")
	b.ReportMetric(latencies[len(latencies)*95/100], "lag-p95-s")
	b.ReportMetric(latencies[len(latencies)-1], "lag-max-s")
}
