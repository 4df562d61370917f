package engine_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
)

// Delete the items a table holds that the source no longer produces.
func ExamplePrune() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	into := table + "-prune"
	if _, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: into,
		CreateTable: true, StateFile: filepath.Join(stateDir, "prune.state.json")}); err != nil {
		log.Fatal(err)
	}
	// A customer deleted from the source after the run left its item.
	if _, err := dynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(into), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#999999"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"},
		"type": &types.AttributeValueMemberS{Value: "Customer"},
	}}); err != nil {
		log.Fatal(err)
	}
	res, err := engine.Prune(ctx, engine.PruneConfig{
		CompareConfig: engine.CompareConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: into},
		Delete:        true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stale: %d, deleted: %v\n", res.Total, res.Deleted)
	for _, e := range res.Entities {
		fmt.Printf("%s: %d\n", e.Entity, e.Items)
	}
	// Output:
	// stale: 1, deleted: true
	// Customer: 1
}

// Prove that the table answers the mapping's access patterns as the
// source does: each pattern's DynamoDB request against its SQL query, for
// parameters drawn from the source.
func ExampleProve() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	into := table + "-prove"
	if _, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: into,
		CreateTable: true, StateFile: filepath.Join(stateDir, "prove.state.json")}); err != nil {
		log.Fatal(err)
	}
	cfg := engine.ProveConfig{Postgres: pgURL, DynamoDB: dynamoDB}
	cfg.Mapping, cfg.Table, cfg.Samples = m, into, 5
	res, err := engine.Prove(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("proven:", res.Proven)
	for _, p := range res.Patterns {
		fmt.Printf("%-22s %s\n", p.Name, p.Operation)
	}
	// Output:
	// proven: true
	// customerProfile        GetItem
	// customerWithOrders     Query
	// customerOrdersInRange  Query
	// orderWithLines         Query
	// ordersOfBook           Query
	// customerByEmail        Query
	// booksOfAuthor          Query
	// openOrdersInMonth      Query
}

// Export the items as files for DynamoDB's Import from S3 (here a
// directory; s3://bucket/prefix works alike), then load the export into a
// table with Run.
func ExampleExport() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	dir := filepath.Join(stateDir, "export")
	res, err := engine.Export(ctx, engine.ExportConfig{
		Run: engine.RunConfig{Mapping: m, Postgres: pgURL, StateFile: filepath.Join(stateDir, "export.state.json")},
		To:  dir,
	})
	if err != nil {
		log.Fatal(err)
	}
	var items int64
	for _, f := range res.Files {
		items += f.Items
	}
	fmt.Printf("exported %d items in %d file(s), complete: %v\n", items, len(res.Files), res.Complete)

	src, err := engine.OpenExport(ctx, engine.OpenExportConfig{From: dir})
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Export: src, DynamoDB: dynamoDB, Table: table + "-export",
		CreateTable: true, StateFile: filepath.Join(stateDir, "from-export.state.json")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("loaded %d items: %s\n", loaded.Total.ItemsWritten, loaded.Status)
	// Output:
	// exported 405 items in 1 file(s), complete: true
	// loaded 405 items: complete
}

// Keep a table in step with the source: an initial load, then the
// source's changes through a logical replication slot. With UntilCaughtUp
// Sync returns once every change so far is applied; without it, it
// streams until ctx ends.
func ExampleSync() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	// Deletes must carry the columns the items' keys are built from; Sync
	// refuses to start, and says so, until they do.
	if _, err := conn.Exec(ctx, `ALTER TABLE addresses REPLICA IDENTITY FULL; ALTER TABLE orders REPLICA IDENTITY FULL`); err != nil {
		log.Fatal(err)
	}
	cfg := engine.SyncConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: table + "-sync",
		CreateTable: true, UntilCaughtUp: true, StateFile: filepath.Join(stateDir, "sync.state.json")}
	res, err := engine.Sync(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("initial load: %d items, caught up: %v\n", res.Load.Total.ItemsWritten, res.CaughtUp)

	// A change in the source reaches the table at the next sync.
	if _, err := conn.Exec(ctx, `INSERT INTO authors (author_id, name) VALUES (9999, 'Ursula K. Le Guin')`); err != nil {
		log.Fatal(err)
	}
	if res, err = engine.Sync(ctx, cfg); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after the insert: %d put, %d deleted\n", res.Final.ItemsPut, res.Final.ItemsDeleted)
	if _, err := conn.Exec(ctx, `DELETE FROM authors WHERE author_id = 9999`); err != nil {
		log.Fatal(err)
	}
	if res, err = engine.Sync(ctx, cfg); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after the delete: %d put, %d deleted\n", res.Final.ItemsPut, res.Final.ItemsDeleted)

	// The slot holds WAL back on the server until it is dropped.
	if _, err := engine.DropSync(ctx, engine.DropSyncConfig{Postgres: pgURL, Slot: res.Slot.Slot, Publication: res.Slot.Publication}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// initial load: 405 items, caught up: true
	// after the insert: 1 put, 0 deleted
	// after the delete: 0 put, 1 deleted
}

// counter is a Target that counts the items of each entity instead of
// storing them: a target acknowledges each item it stored (Ack), and the
// engine checkpoints on those acknowledgements.
type counter struct {
	mu       sync.Mutex
	byEntity map[string]int
}

func (c *counter) Open(context.Context) (contract.TargetInfo, error) {
	c.byEntity = map[string]int{}
	return contract.TargetInfo{Kind: "counter", Name: "items by entity"}, nil
}

func (c *counter) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	var st contract.Stats
	for it := range items {
		c.mu.Lock()
		c.byEntity[it.Origin.Entity]++
		c.mu.Unlock()
		it.Ack()
		st.Total.Written++
	}
	return st, nil
}

// Send a run's items to a Target of your own instead of a DynamoDB table.
func ExampleRunConfig_target() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	c := &counter{}
	res, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pgURL, Target: c,
		StateFile: filepath.Join(stateDir, "counter.state.json")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("target:", res.Target.Kind, res.Status)
	for _, e := range []string{"Customer", "Order", "OrderSummary", "OrderLine", "Author", "Book"} {
		fmt.Printf("%-12s %d\n", e, c.byEntity[e])
	}
	// Output:
	// target: counter complete
	// Customer     20
	// Order        70
	// OrderSummary 70
	// OrderLine    232
	// Author       3
	// Book         10
}

// watcher is an Observer that notes the entities a run will read and its
// final counts; embedding NopObserver leaves Interrupted as a no-op.
type watcher struct {
	contract.NopObserver
	entities []string
	final    contract.Progress
}

func (w *watcher) Started(s contract.RunStart) {
	for _, e := range s.Entities {
		w.entities = append(w.entities, e.Entity)
	}
}

func (w *watcher) Progress(p contract.Progress) {
	if p.Done {
		w.final = p
	}
}

// Follow a run's progress with an Observer: Started once, Progress every
// RunConfig.ProgressEvery and once more at the end (Done).
func ExampleRunConfig_observer() {
	ctx := context.Background()
	m, err := engine.LoadMapping("../testdata/bookstore.yaml")
	if err != nil {
		log.Fatal(err)
	}
	w := &watcher{}
	if _, err := engine.Run(ctx, engine.RunConfig{Mapping: m, Postgres: pgURL, DynamoDB: dynamoDB, Table: table + "-observed",
		CreateTable: true, Observer: w, StateFile: filepath.Join(stateDir, "observed.state.json")}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("entities:", w.entities)
	var rows, items int64
	for _, e := range w.final.Entities {
		rows, items = rows+e.RowsRead, items+e.ItemsWritten
	}
	fmt.Printf("done: %d rows read, %d items written, %v\n", rows, items, slices.Contains(w.entities, "Book"))
	// Output:
	// entities: [Customer Order OrderSummary OrderLine Author Book]
	// done: 405 rows read, 405 items written, true
}
