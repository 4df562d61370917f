package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/extsort"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// This file is the comparison Plan, Verify and Prune share: it recomputes
// the expected items from the source snapshot, reads the target table
// (parallel Scan or BatchGetItem, never a write), and hands both sides to a
// visitor one key at a time, in key order, with memory bounded by the sort
// buffers (see package diff for why a sorted merge).

// Values of CompareConfig.Mode.
const (
	CompareScan = "scan" // one parallel Scan of the whole table (finds stale items)
	CompareGet  = "get"  // BatchGetItem of the expected keys only
)

// Values of CompareConfig.Consistency.
const (
	ConsistencyStrong   = "strong"
	ConsistencyEventual = "eventual" // half the read units
)

// Defaults of CompareConfig.
const (
	DefaultSegments     = 4
	DefaultReadCalls    = 8
	DefaultSortMemoryMB = 32
	DefaultMaxDetails   = 20
)

// CompareConfig is what Plan, Verify and Prune share: the source, the
// table, and how to read it. Mapping, Postgres and DynamoDB are required;
// every other zero value means its documented default.
type CompareConfig struct {
	Mapping  *mapping.Mapping
	Postgres string // source database URL; never logged or stored
	DynamoDB DynamoDB
	Table    string // default: the mapping's table

	// Mode is CompareScan (default) or CompareGet; see the CLI's help for
	// what each reads and costs.
	Mode string
	// Segments is the number of parallel Scan segments. Default 4.
	Segments int
	// Concurrency is the number of BatchGetItem calls in flight. Default 8.
	Concurrency int
	// Consistency is ConsistencyStrong or ConsistencyEventual. Default:
	// eventual for Plan, strong for Verify and Prune.
	Consistency string
	// SortMemoryMB is the buffer each side sorts in before runs spill to
	// TempDir. Default 32.
	SortMemoryMB int
	// TempDir holds the sorted runs. Default: the system's.
	TempDir string
	// MaxDetails bounds the items listed per category; counts are always
	// complete. Default 20; negative lists none.
	MaxDetails int

	// Shards are the "count: auto" shard counts, by entity and index, the
	// table was written with: those of the state file of the run or sync
	// that wrote it. A sync keeps the counts of its initial load while the
	// data changes, so counts computed from the source as it is now may
	// differ and every item in another shard would compare different.
	// Settings not given are computed from the source, as a run does.
	Shards map[[2]string]int

	// Logger receives log lines. Default: discard.
	Logger *slog.Logger
}

// withDefaults fills c for a verb whose default consistency is given.
func (c CompareConfig) withDefaults(consistency string) CompareConfig {
	if c.Mapping != nil {
		c.Table = cmp.Or(c.Table, c.Mapping.Table)
	}
	c.Mode = cmp.Or(c.Mode, CompareScan)
	c.Segments = cmp.Or(c.Segments, DefaultSegments)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultReadCalls)
	c.Consistency = cmp.Or(c.Consistency, consistency)
	c.SortMemoryMB = cmp.Or(c.SortMemoryMB, DefaultSortMemoryMB)
	switch {
	case c.MaxDetails == 0:
		c.MaxDetails = DefaultMaxDetails
	case c.MaxDetails < 0:
		c.MaxDetails = 0
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c CompareConfig) validate(verb string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, configErrorf(verb+": "+format, args...)) }
	if c.Mapping == nil {
		bad("a mapping is required")
	}
	if c.Postgres == "" {
		bad("a source database URL is required")
	}
	if c.DynamoDB == nil {
		bad("a DynamoDB client is required")
	}
	field := func(name, format string, args ...any) { errs = append(errs, fieldf(verb, name, format, args...)) }
	if c.Mode != CompareScan && c.Mode != CompareGet {
		field("Mode", "must be %s or %s, not %q", CompareScan, CompareGet, c.Mode)
	}
	if c.Segments < 1 || c.Segments > 1_000_000 {
		field("Segments", "must be between 1 and 1000000")
	}
	if c.Concurrency < 1 {
		field("Concurrency", "must be at least 1")
	}
	if c.Consistency != ConsistencyStrong && c.Consistency != ConsistencyEventual {
		bad("Consistency must be %q or %q, not %q", ConsistencyStrong, ConsistencyEventual, c.Consistency)
	}
	if c.SortMemoryMB < 1 {
		field("SortMemoryMB", "must be at least 1 (MB)")
	}
	// Last, as a command checks them after its other flags.
	errs = append(errs, checkName(verb, "Table", "table", c.Table), CheckPostgres(verb, c.Postgres))
	return errors.Join(errs...)
}

func (c CompareConfig) consistent() bool { return c.Consistency == ConsistencyStrong }

// table is the table being compared with.
type table struct {
	name   string
	client DynamoDB
	exists bool
	pk, sk string // the mapping's key attributes, checked against the table's
	// problems are the ways the existing table cannot serve the mapping
	// (an index missing or keyed otherwise, a projection short of what
	// the mapping needs, a key of another type): run refuses the table,
	// plan and verify list them as problems, prune refuses it.
	problems []load.TableProblem
	billing  string // the table's capacity mode, for reports
	// capacity is what the table takes at once (zero when it is missing).
	capacity load.TableCapacity
}

// openTable describes the table. A missing table is not an error:
// everything is then a create.
func openTable(ctx context.Context, c *CompareConfig) (*table, error) {
	t := &table{name: c.Table, client: c.DynamoDB, pk: c.Mapping.PartitionKey, sk: c.Mapping.SortKey}
	desc, err := tableread.Describe(ctx, c.DynamoDB, t.name)
	if err != nil {
		return nil, err
	}
	if desc == nil {
		return t, nil
	}
	t.exists = true
	check := load.InspectTable(TableConfig(c.Mapping, t.name).WithDefaults(), desc)
	t.problems, t.billing = check.Problems, check.BillingSummary()
	t.capacity = load.CapacityOf(desc)
	if pk, sk := tableread.KeyNames(desc); pk != t.pk || sk != t.sk {
		return nil, kinded(ErrTable, fmt.Errorf("table %s has key (%s, %s) but the mapping says (%s, %s): nothing to compare: %w", t.name, pk, sk, t.pk, t.sk, check.Err()))
	}
	return t, nil
}

// tableProblems are the table's problems as report problems.
func (t *table) tableProblems() []report.Problem {
	var out []report.Problem
	for _, p := range t.problems {
		out = append(out, report.Problem{Kind: "table-mismatch", Message: "table " + t.name + ": " + p.Msg})
	}
	return out
}

// openBoth validates the configuration, opens the source snapshot and
// describes the table: the start of every verb that compares them. Close
// the source when done.
func openBoth(ctx context.Context, valid error, c *CompareConfig) (*source, *table, error) {
	if valid != nil {
		return nil, nil, valid
	}
	src, err := openSource(ctx, c.Mapping, c.Postgres)
	if err != nil {
		return nil, nil, err
	}
	src.logOverrides(c.Logger)
	tgt, err := openTable(ctx, c)
	if err != nil {
		src.close(ctx)
		return nil, nil, err
	}
	if err := src.computeShards(ctx, c.Shards); err != nil {
		src.close(ctx)
		return nil, nil, err
	}
	return src, tgt, nil
}

// comparison is one pass of the engine. The hooks are called from one
// goroutine at a time.
type comparison struct {
	src    *source
	target *table
	mode   string // CompareScan, CompareGet, or "none" without a table
	cfg    *CompareConfig
	sample float64 // fraction of keys compared (InSample); 1 = all

	// expected is called for each expected item in the sample, in source
	// order, with its encoded key.
	expected func(it transform.Item, key []byte)
	// rowError is called for each row error, and for items without a key.
	rowError func(p report.Problem)
	// visit is called for each key in key order.
	visit func(p diff.Pair) error

	reads tableread.Stats
}

func (c *comparison) sortConfig() extsort.Config {
	return extsort.Config{Dir: c.cfg.TempDir, MemoryBytes: c.cfg.SortMemoryMB << 20}
}

// run reads both sides and calls visit for every key.
func (c *comparison) run(ctx context.Context) error {
	exp, err := extsort.New(c.sortConfig())
	if err != nil {
		return err
	}
	defer exp.Close()
	var tgt *extsort.Sorter
	if c.mode == CompareScan {
		if tgt, err = extsort.New(c.sortConfig()); err != nil {
			return err
		}
		defer tgt.Close()
	}

	// Both sides at once: the source walk and the table scan are independent.
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.readExpected(gctx, exp) })
	if tgt != nil {
		g.Go(func() error { return c.scanTarget(gctx, tgt) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	es := exp.Stats()
	c.cfg.Logger.Debug("read both sides", "expected", es.Records, "expected_runs", es.Runs, "scanned", c.reads.Items, "seconds", time.Since(start).Round(time.Millisecond).Seconds())

	expIt, err := exp.Sort()
	if err != nil {
		return err
	}
	if c.mode != CompareGet {
		var tgtIt diff.Sorted
		if tgt != nil {
			it, err := tgt.Sort()
			if err != nil {
				return err
			}
			tgtIt = it
		}
		return diff.Join(expIt, tgtIt, c.visit)
	}
	return c.getJoin(ctx, expIt)
}

// readExpected walks the source and feeds the expected items to the sorter.
func (c *comparison) readExpected(ctx context.Context, s *extsort.Sorter) error {
	pk, sk := c.src.m.PartitionKey, c.src.m.SortKey
	checker, err := writeChecker(c.src.m, c.target.name)
	if err != nil {
		return err
	}
	var buf []byte
	return c.src.walk(ctx, func(_ *transform.Source, _ extract.Row, items []transform.Item, errs []*transform.RowError) error {
		for _, re := range errs {
			c.rowError(report.Problem{Kind: "row-error", Entity: re.Entity, Origin: re.Table + " " + re.Key, Message: rowErrorMessage(re)})
		}
		for _, it := range items {
			key, err := diff.KeyOf(it.Attrs, pk, sk)
			if err != nil {
				c.rowError(report.Problem{Kind: "row-error", Entity: it.Entity, Origin: it.Table + " " + it.SourceKey, Message: err.Error()})
				continue
			}
			if !diff.InSample(key, c.sample) {
				continue
			}
			// An item run would refuse is a problem, for plan and verify
			// alike, and not an item the table should hold.
			if ie, _ := checker.Check(contract.Item{Attrs: it.Attrs, Origin: contract.Origin{Entity: it.Entity}}); ie != nil {
				k := reportKey(key)
				c.rowError(report.Problem{Kind: rejectKind(ie.Err), Entity: it.Entity, Origin: it.Table + " " + it.SourceKey, Key: &k, Message: ie.Reason})
				continue
			}
			c.expected(it, key)
			buf = diff.AppendRecord(buf[:0], diff.Record{Entity: it.Entity, Origin: it.Table + " " + it.SourceKey, Attrs: it.Attrs})
			if err := s.Add(key, buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeChecker checks each expected item as run's loader does
// (load.Checker: the Writer's rules and messages), so that plan and verify
// report an item run would refuse as a problem, not as a create or a
// missing item. Its duplicate check is off (every entity counts as
// unique): the comparison finds duplicates when it joins the keys.
func writeChecker(m *mapping.Mapping, table string) (*load.Checker, error) {
	cfg := TableConfig(m, table)
	for _, e := range m.Entities {
		cfg.UniqueEntities = append(cfg.UniqueEntities, e.Name)
	}
	return load.NewChecker(cfg)
}

// rowErrorMessage is what is wrong with the row, each problem with its
// column once (a row with several problems carries them in Err already).
func rowErrorMessage(re *transform.RowError) string {
	return re.Reason()
}

// scanTarget reads the whole table into the sorter.
func (c *comparison) scanTarget(ctx context.Context, s *extsort.Sorter) error {
	entityAttr := c.src.m.EntityAttribute
	var buf []byte
	st, err := tableread.Scan(ctx, c.target.client, tableread.ScanConfig{Table: c.target.name, Segments: c.cfg.Segments, Consistent: c.cfg.consistent()},
		func(item map[string]types.AttributeValue) error {
			key, err := diff.KeyOf(item, c.target.pk, c.target.sk)
			if err != nil {
				return fmt.Errorf("scan %s: item without key: %w", c.target.name, err)
			}
			if !diff.InSample(key, c.sample) {
				return nil
			}
			buf = diff.AppendRecord(buf[:0], diff.Record{Entity: entityOf(item, entityAttr), Attrs: item})
			return s.Add(key, buf)
		})
	c.reads.Add(st)
	return err
}

func entityOf(item map[string]types.AttributeValue, attr string) string {
	if v, ok := item[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// getJoin walks the sorted expected items and fetches their keys from the
// table with BatchGetItem, a window of concurrency × 100 keys at a time,
// then visits the window's pairs in key order.
func (c *comparison) getJoin(ctx context.Context, exp extsort.Iterator) error {
	window := c.cfg.Concurrency * tableread.MaxGetKeys
	var pairs []diff.Pair
	flush := func() error {
		if err := c.fetch(ctx, pairs); err != nil {
			return err
		}
		for _, p := range pairs {
			if err := c.visit(p); err != nil {
				return err
			}
		}
		pairs = pairs[:0]
		return nil
	}
	err := diff.Join(exp, nil, func(p diff.Pair) error {
		pairs = append(pairs, p)
		if len(pairs) >= window {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// fetch fills in the Target side of pairs from the table.
func (c *comparison) fetch(ctx context.Context, pairs []diff.Pair) error {
	entityAttr := c.src.m.EntityAttribute
	found := make([][]map[string]types.AttributeValue, (len(pairs)+tableread.MaxGetKeys-1)/tableread.MaxGetKeys)
	stats := make([]tableread.Stats, len(found))
	g, gctx := errgroup.WithContext(ctx)
	for i := range found {
		chunk := pairs[i*tableread.MaxGetKeys : min(len(pairs), (i+1)*tableread.MaxGetKeys)]
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for j, p := range chunk {
			a := p.Expected[0].Attrs
			keys[j] = map[string]types.AttributeValue{c.target.pk: a[c.target.pk]}
			if c.target.sk != "" {
				keys[j][c.target.sk] = a[c.target.sk]
			}
		}
		g.Go(func() error {
			var err error
			found[i], stats[i], err = tableread.Get(gctx, c.target.client, tableread.GetConfig{Table: c.target.name, Consistent: c.cfg.consistent()}, keys)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	byKey := make(map[string]map[string]types.AttributeValue, len(pairs))
	for i, items := range found {
		c.reads.Add(stats[i])
		for _, it := range items {
			k, err := diff.KeyOf(it, c.target.pk, c.target.sk)
			if err != nil {
				return fmt.Errorf("batch get from %s: item without key: %w", c.target.name, err)
			}
			byKey[string(k)] = it
		}
	}
	for i := range pairs {
		if it, ok := byKey[string(pairs[i].Key)]; ok {
			pairs[i].Target = []diff.Record{{Entity: entityOf(it, entityAttr), Attrs: it}}
		}
	}
	return nil
}

// ownedBy returns the test for "this target item is the mapping's": its
// entity attribute names one of the mapping's entities and every key it
// carries (the table's, and the entity's index keys it has) is one that
// entity's templates render from values of the columns' types, shard
// numbers below the counts (transform.Owner). Only such items are stale
// when nothing expects them, so prune never deletes an item another
// application wrote, whatever its entity attribute says. Call it after
// computeShards.
func ownedBy(src *source) func(r diff.Record, key []byte) bool {
	o := src.plan.Owner()
	return func(r diff.Record, _ []byte) bool {
		return o.Owns(r.Entity, func(name string) (string, bool) {
			switch v := r.Attrs[name].(type) {
			case *types.AttributeValueMemberS:
				return v.Value, true
			case *types.AttributeValueMemberN:
				return v.Value, true
			case *types.AttributeValueMemberB:
				if len(v.Value) == 0 {
					return "", true
				}
				return "B", true // any binary value will do
			}
			return "", false
		})
	}
}

// reportKey turns an encoded key into the report's form.
func reportKey(key []byte) report.Key {
	k, err := diff.DecodeKey(key)
	if err != nil {
		return report.Key{PK: fmt.Sprintf("%q", key)}
	}
	return report.Key{PK: k.PK, SK: k.SK}
}

// attributeChanges turns diff changes into the report's form.
func attributeChanges(cs []diff.Change) []report.AttributeChange {
	out := make([]report.AttributeChange, len(cs))
	for i, c := range cs {
		out[i] = report.AttributeChange{Path: c.Path, Op: string(c.Op), Old: dynamoJSON(c.Old), New: dynamoJSON(c.New)}
	}
	return out
}

func dynamoJSON(av types.AttributeValue) []byte {
	if av == nil {
		return nil
	}
	b, err := transform.MarshalItem(map[string]types.AttributeValue{"v": av})
	if err != nil {
		return nil
	}
	return b[len(`{"v":`) : len(b)-1]
}

// tableInfo is the report's description of the target.
func tableInfo(m *mapping.Mapping, t *table) report.Table {
	return report.Table{Name: t.name, Exists: t.exists, PartitionKey: t.pk, SortKey: t.sk, EntityAttribute: m.EntityAttribute}
}

func readsInfo(c *comparison, start time.Time) report.Reads {
	return report.Reads{
		Mode:         c.mode,
		Consistent:   c.cfg.consistent() && c.mode != "none",
		StaleChecked: c.mode != CompareGet,
		Calls:        c.reads.Calls,
		ItemsRead:    c.reads.Items,
		ReadUnits:    c.reads.ReadUnits,
		Seconds:      time.Since(start).Seconds(),
	}
}

// interrupted turns an error that only follows from ctx having ended into
// one wrapping ErrInterrupted.
func interrupted(ctx context.Context, verb string, err error) error {
	if isInterrupt(ctx, err) {
		return kinded(ErrInterrupted, fmt.Errorf("%s interrupted: %w", verb, err))
	}
	return err
}
