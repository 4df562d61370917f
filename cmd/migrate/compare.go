package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/diff"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/extsort"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/report"
	"github.com/pgdynamo/migrate/tableread"
	"github.com/pgdynamo/migrate/transform"
)

// This file is the comparison engine plan and verify share: it recomputes
// the expected items from the source snapshot, reads the target table
// (parallel Scan or BatchGetItem, never a write), and hands both sides to a
// visitor one key at a time, in key order, with memory bounded by the sort
// buffers (see package diff for why a sorted merge).

// Values of --compare.
const (
	compareScan = "scan"
	compareGet  = "get"
)

// compareFlags are the flags plan and verify share.
type compareFlags struct {
	mapping, pg, table  string
	endpoint, region    string
	compare             string
	segments            int
	concurrency         int
	consistent          bool
	sortMemoryMB        int
	tempDir             string
	maxDetails          int
	format, color, html string
}

// compareReadCostHelp explains what each --compare mode reads; plan and
// verify print it in --help.
const compareReadCostHelp = `Reading the target (never a write: only DescribeTable, Scan, BatchGetItem):

  --compare scan  One parallel Scan of the whole table (--segments at a time).
                  Cost: the table's total size / 4 KB x 0.5 read units
                  (x 1 with --consistent), whatever the mapping produces and
                  whatever the projection: items of other entities are read
                  too. Finds creates, changes, unchanged and stale items.
  --compare get   BatchGetItem of the expected keys, 100 a call
                  (--concurrency calls at a time). Cost: per expected item
                  ceil(item size / 4 KB) x 0.5 read units (x 1 with
                  --consistent); a key that does not exist still costs 0.5.
                  Cannot find stale items (that needs a full read).

Items under 4 KB cost a Scan about size/4 KB of a unit each but a get a whole
half unit: for the 180-byte bookstore items a full scan is ~20x cheaper. Use
get when the mapping's items are a small part of a large table, or with
verify --sample.

Memory does not grow with the table: both sides are sorted by key with an
external merge sort (--sort-memory MB of buffer per side, runs spilled to
--temp-dir; disk about the size of the expected items plus, for scan, of the
table) and compared in one streaming merge.`

func (o *compareFlags) register(f *pflag.FlagSet, defaultCompare string, consistent bool) {
	f.StringVar(&o.mapping, "mapping", "", "mapping file (YAML)")
	f.StringVar(&o.pg, "pg", "", "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	f.StringVar(&o.table, "table", "", "target DynamoDB table (default: the mapping's table)")
	f.StringVar(&o.endpoint, "endpoint", "", "DynamoDB endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_DYNAMODB)")
	f.StringVar(&o.region, "region", "", "AWS region (default: AWS configuration, e.g. $AWS_REGION)")
	f.StringVar(&o.compare, "compare", defaultCompare, "how to read the target: scan or get (read costs below)")
	f.IntVar(&o.segments, "segments", 4, "parallel Scan segments (--compare scan)")
	f.IntVar(&o.concurrency, "concurrency", 8, "BatchGetItem calls in flight (--compare get)")
	f.BoolVar(&o.consistent, "consistent", consistent, "strongly consistent reads (twice the read units)")
	f.IntVar(&o.sortMemoryMB, "sort-memory", 32, "MB of items each side buffers before sorted runs spill to --temp-dir")
	f.StringVar(&o.tempDir, "temp-dir", "", "directory for sorted runs (default $TMPDIR or /tmp)")
	f.IntVar(&o.maxDetails, "max-details", 20, "list at most this many items per category (counts are always complete)")
	f.StringVar(&o.format, "format", "text", "report format on stdout: text, markdown or json")
	f.StringVar(&o.color, "color", "auto", "colour in text reports: auto (on a terminal, unless NO_COLOR is set), always, never")
}

func (o *compareFlags) validate(cmd string) error {
	switch {
	case o.mapping == "":
		return usagef("%s: --mapping is required", cmd)
	case o.pg == "":
		return usagef("%s: --pg is required (or set MIGRATE_PG_URL or DATABASE_URL)", cmd)
	case o.compare != compareScan && o.compare != compareGet:
		return usagef("%s: --compare must be scan or get, not %q", cmd, o.compare)
	case o.segments < 1 || o.segments > 1_000_000:
		return usagef("%s: --segments must be between 1 and 1000000", cmd)
	case o.concurrency < 1:
		return usagef("%s: --concurrency must be at least 1", cmd)
	case o.sortMemoryMB < 1:
		return usagef("%s: --sort-memory must be at least 1 (MB)", cmd)
	case o.maxDetails < 0:
		return usagef("%s: --max-details must not be negative", cmd)
	case o.format != "text" && o.format != "markdown" && o.format != "json":
		return usagef("%s: --format must be text, markdown or json, not %q", cmd, o.format)
	case o.color != "auto" && o.color != "always" && o.color != "never":
		return usagef("%s: --color must be auto, always or never, not %q", cmd, o.color)
	}
	return nil
}

// wantColor decides --color auto: a terminal, NO_COLOR unset, TERM not dumb.
func wantColor(w io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// target is the table being compared with.
type target struct {
	name   string
	client *dynamodb.Client
	exists bool
	pk, sk string // the mapping's key attributes, checked against the table's
}

// openTarget creates the client and describes the table. A missing table is
// not an error: everything is then a create.
func openTarget(ctx context.Context, o *compareFlags, src *source) (*target, error) {
	t := &target{name: cmp.Or(o.table, src.m.Table), pk: src.m.PartitionKey, sk: src.m.SortKey}
	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: o.endpoint, Region: o.region, Concurrency: max(o.concurrency, o.segments)})
	if err != nil {
		return nil, err
	}
	t.client = client
	desc, err := tableread.Describe(ctx, client, t.name)
	if err != nil {
		return nil, err
	}
	if desc == nil {
		return t, nil
	}
	t.exists = true
	if pk, sk := tableread.KeyNames(desc); pk != t.pk || sk != t.sk {
		return nil, fmt.Errorf("table %s has key (%s, %s) but the mapping says (%s, %s): nothing to compare", t.name, pk, sk, t.pk, t.sk)
	}
	return t, nil
}

// openBoth opens the source snapshot and describes the target: the start
// of every command that compares them. Close the source when done.
func openBoth(ctx context.Context, o *compareFlags) (*source, *target, error) {
	src, err := openSource(ctx, o.mapping, o.pg)
	if err != nil {
		return nil, nil, err
	}
	tgt, err := openTarget(ctx, o, src)
	if err != nil {
		src.close(ctx)
		return nil, nil, err
	}
	return src, tgt, nil
}

// comparison is one pass of the engine. The hooks are called from one
// goroutine at a time.
type comparison struct {
	src    *source
	target *target
	mode   string // compareScan, compareGet, or "none" without a table
	opts   *compareFlags
	sample float64 // fraction of keys compared (InSample); 1 = all

	// expected is called for each expected item in the sample, in source
	// order, with its encoded key (nil when the item has no valid key:
	// it is then also reported through rowError).
	expected func(it transform.Item, key []byte)
	// rowError is called for each row error, and for items without a key.
	rowError func(p report.Problem)
	// visit is called for each key in key order.
	visit func(p diff.Pair) error

	reads tableread.Stats
}

func (c *comparison) sortConfig() extsort.Config {
	return extsort.Config{Dir: c.opts.tempDir, MemoryBytes: c.opts.sortMemoryMB << 20}
}

// run reads both sides and calls visit for every key.
func (c *comparison) run(ctx context.Context, logger *slog.Logger) error {
	exp, err := extsort.New(c.sortConfig())
	if err != nil {
		return err
	}
	defer exp.Close()
	var tgt *extsort.Sorter
	if c.mode == compareScan {
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
	logger.Info("read both sides", "expected", es.Records, "expected_runs", es.Runs, "scanned", c.reads.Items, "seconds", time.Since(start).Round(time.Millisecond).Seconds())

	expIt, err := exp.Sort()
	if err != nil {
		return err
	}
	if c.mode != compareGet {
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
	var buf []byte
	return c.src.walk(ctx, nil, func(_ *transform.Source, _ extract.Row, items []transform.Item, errs []*transform.RowError) error {
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
			c.expected(it, key)
			buf = diff.AppendRecord(buf[:0], diff.Record{Entity: it.Entity, Origin: it.Table + " " + it.SourceKey, Attrs: it.Attrs})
			if err := s.Add(key, buf); err != nil {
				return err
			}
		}
		return nil
	})
}

func rowErrorMessage(re *transform.RowError) string {
	if re.Column != "" {
		return "column " + re.Column + ": " + re.Err.Error()
	}
	return re.Err.Error()
}

// scanTarget reads the whole table into the sorter.
func (c *comparison) scanTarget(ctx context.Context, s *extsort.Sorter) error {
	entityAttr := c.src.m.EntityAttribute
	var buf []byte
	st, err := tableread.Scan(ctx, c.target.client, tableread.ScanConfig{Table: c.target.name, Segments: c.opts.segments, Consistent: c.opts.consistent},
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
	window := c.opts.concurrency * tableread.MaxGetKeys
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
			found[i], stats[i], err = tableread.Get(gctx, c.target.client, tableread.GetConfig{Table: c.target.name, Consistent: c.opts.consistent}, keys)
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

// ownedBy returns the test for "this entity attribute value names an entity
// of the mapping".
func ownedBy(src *source) func(string) bool {
	names := map[string]bool{}
	for _, e := range src.m.Entities {
		names[e.Name] = true
	}
	return func(e string) bool { return names[e] }
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

// writeReport renders to stdout in the chosen format.
func writeReport(w io.Writer, format string, text, markdown, json func(io.Writer) error) error {
	switch format {
	case "markdown":
		return markdown(w)
	case "json":
		return json(w)
	}
	return text(w)
}

// tableInfo is the report's description of the target.
func tableInfo(src *source, t *target) report.Table {
	return report.Table{Name: t.name, Exists: t.exists, PartitionKey: t.pk, SortKey: t.sk, EntityAttribute: src.m.EntityAttribute}
}

func readsInfo(c *comparison, start time.Time) report.Reads {
	return report.Reads{
		Mode:         c.mode,
		Consistent:   c.opts.consistent && c.mode != "none",
		StaleChecked: c.mode != compareGet,
		Calls:        c.reads.Calls,
		ItemsRead:    c.reads.Items,
		ReadUnits:    c.reads.ReadUnits,
		Seconds:      time.Since(start).Seconds(),
	}
}
