package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/capacity"
	"github.com/pgdynamo/migrate/diff"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/report"
	"github.com/pgdynamo/migrate/transform"
)

func init() { register(newPlanCmd) }

type planOpts struct {
	compareFlags
	price     float64
	writeRate float64
}

func (o *planOpts) validate() error {
	if err := o.compareFlags.validate("plan"); err != nil {
		return err
	}
	if o.price < 0 {
		return usagef("plan: --price-per-million-wcu must not be negative")
	}
	if o.writeRate <= 0 {
		return usagef("plan: --write-rate must be positive")
	}
	return nil
}

func newPlanCmd(g *globals) *cobra.Command {
	var o planOpts
	cmd := &cobra.Command{
		Use:   "plan --mapping FILE --pg URL [--table T] [--endpoint URL] [--format text|markdown|json] [--html FILE] [--compare scan|get]",
		Short: "Dry run: what run would create, change and leave stale in the table, and what it costs; writes nothing",
		Long: `plan reads the source in one snapshot and transforms every row exactly as run
does, then compares the items with what the target table holds now, by
primary key:

  create     expected, not in the table
  change     in both, different (attribute by attribute: added, removed,
             changed old -> new, into nested maps)
  unchanged  in both, equal (numbers by value, sets in any order)
  stale      in the table only, and its entity attribute names an entity of
             this mapping: the mapping no longer produces it (run does not
             delete it); other items in the table are "foreign", counted and
             left alone

A missing table makes everything a create. plan never writes to DynamoDB:
it calls DescribeTable, Scan and BatchGetItem only.

It also estimates the load: item count, average and maximum item size,
write units (ceil(size / 1 KB) per item in the table, and again in each GSI
the item appears in), the on-demand cost at --price-per-million-wcu, the
duration at --write-rate, the largest item collections (hot partitions),
the distinct partition keys of each GSI, the "count: auto" shard counts with
their inputs, and how many items carry each copied attribute set (what a
later update of the copied data rewrites).

The report goes to stdout as --format text (colour on a terminal), markdown
(for pull requests) or json (schema migrate.plan/v1, documented in package
report); --html FILE also writes a self-contained page with charts.

` + compareReadCostHelp + `

Exit codes: 0 the plan was made; 1 it could not be made, or it found
problems that would make run fail (row errors, duplicate keys, items over
400 KB); 2 usage or mapping errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.pg = pgURL(o.pg)
			if err := o.validate(); err != nil {
				return err
			}
			return runPlan(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(f, compareScan, false)
	f.StringVar(&o.html, "html", "", "also write the report as one self-contained HTML file")
	f.Float64Var(&o.price, "price-per-million-wcu", capacity.DefaultPricePerMillionWCU, "on-demand price in USD of a million write request units")
	f.Float64Var(&o.writeRate, "write-rate", capacity.DefaultWriteRate, "items per second assumed for the duration estimate")
	return cmd
}

// planBuilder accumulates the plan while the comparison runs.
type planBuilder struct {
	p        *report.Plan
	est      *capacity.Estimator
	indexes  []load.Index
	entities map[string]*report.EntityPlan
	owns     func(string) bool
	max      int
	pkName   string
	skName   string
}

func runPlan(ctx context.Context, g *globals, o *planOpts) error {
	start := time.Now()
	src, tgt, err := openBoth(ctx, &o.compareFlags)
	if err != nil {
		return err
	}
	defer src.close(ctx)

	b := &planBuilder{
		p: &report.Plan{
			Schema:      report.PlanSchema,
			GeneratedAt: time.Now().UTC().Truncate(time.Second),
			Mapping:     o.mapping,
			Table:       tableInfo(src, tgt),
			MaxDetails:  o.maxDetails,
		},
		est: capacity.New(capacity.Config{
			Indexes:            src.indexes(),
			PricePerMillionWCU: o.price,
			WriteRate:          o.writeRate,
			Copies:             capacity.CopySets(src.m),
		}),
		indexes:  src.indexes(),
		entities: map[string]*report.EntityPlan{},
		owns:     ownedBy(src),
		max:      o.maxDetails,
		pkName:   src.m.PartitionKey,
		skName:   src.m.SortKey,
	}
	for _, e := range src.m.Entities {
		ep := &report.EntityPlan{Entity: e.Name, Source: e.Schema + "." + e.From}
		b.entities[e.Name] = ep
		b.p.Entities = append(b.p.Entities, *ep)
	}

	c := &comparison{src: src, target: tgt, mode: o.compare, opts: &o.compareFlags, sample: 1,
		expected: b.expected, rowError: b.problem, visit: b.visit}
	if !tgt.exists {
		c.mode = "none"
	}
	g.logger.Info("plan: comparing", "table", tgt.name, "exists", tgt.exists, "mode", c.mode)
	if err := c.run(ctx, g.logger); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return interruptedError{fmt.Errorf("plan interrupted: %w", err)}
		}
		return err
	}
	b.finish(src)
	b.p.Reads = readsInfo(c, start)

	p := b.p
	err = writeReport(g.stdout, o.format,
		func(w io.Writer) error {
			return report.Text(w, p, report.TextOptions{Color: wantColor(g.stdout, o.color)})
		},
		func(w io.Writer) error { return report.Markdown(w, p) },
		func(w io.Writer) error { return report.JSON(w, p) })
	if err != nil {
		return fmt.Errorf("plan: write report: %w", err)
	}
	if o.html != "" {
		if err := writeHTML(o.html, p); err != nil {
			return err
		}
		g.logger.Info("plan: wrote HTML report", "file", o.html)
	}
	if p.Summary.Problems > 0 {
		return fmt.Errorf("plan: %s: migrate run would fail", plural(int(p.Summary.Problems), "problem"))
	}
	return nil
}

func writeHTML(path string, p *report.Plan) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if err := report.HTML(f, p); err != nil {
		f.Close()
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plan: write %s: %w", path, err)
	}
	return nil
}

func (b *planBuilder) entity(name string) *report.EntityPlan {
	ep := b.entities[name]
	if ep == nil { // a stale item of an entity the mapping no longer has cannot be owned; keep it anyway
		ep = &report.EntityPlan{Entity: name}
		b.entities[name] = ep
	}
	return ep
}

func (b *planBuilder) problem(p report.Problem) {
	b.p.Summary.Problems++
	if len(b.p.Problems) < b.max {
		b.p.Problems = append(b.p.Problems, p)
	}
}

// expected sees every expected item once, in source order.
func (b *planBuilder) expected(it transform.Item, key []byte) {
	// The estimator keeps the largest item's key as given: the encoded
	// key, decoded once at the end.
	size, wcu := b.est.Add(it.Entity, string(key), it.Attrs)
	ep := b.entity(it.Entity)
	ep.Expected++
	ep.Bytes += int64(size)
	ep.MaxItemBytes = max(ep.MaxItemBytes, int64(size))
	ep.WriteUnits += int64(wcu)
	b.p.Summary.Expected++
	origin := it.Table + " " + it.SourceKey
	if size > load.MaxItemSize {
		k := reportKey(key)
		b.problem(report.Problem{Kind: "item-too-large", Entity: it.Entity, Origin: origin, Key: &k,
			Message: fmt.Sprintf("item is %d bytes, over DynamoDB's %d", size, load.MaxItemSize)})
	}
	for _, kc := range []struct {
		attr string
		max  int
	}{{b.pkName, load.MaxPartitionKeyBytes}, {b.skName, load.MaxSortKeyBytes}} {
		if kc.attr == "" {
			continue
		}
		if n := keyBytes(it.Attrs[kc.attr]); n > kc.max {
			k := reportKey(key)
			b.problem(report.Problem{Kind: "key-too-long", Entity: it.Entity, Origin: origin, Key: &k,
				Message: fmt.Sprintf("%s is %d bytes, over DynamoDB's %d", kc.attr, n, kc.max)})
		}
	}
}

func keyBytes(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	}
	return 0
}

// visit sees every key in key order.
func (b *planBuilder) visit(pr diff.Pair) error {
	var k report.Key
	decoded := false
	key := func() report.Key {
		if !decoded {
			k, decoded = reportKey(pr.Key), true
		}
		return k
	}
	for i, r := range pr.Expected {
		b.est.Partition(key().PK, load.ItemSize(r.Attrs))
		if i > 0 {
			kk := key()
			b.problem(report.Problem{Kind: "duplicate-key", Entity: r.Entity, Origin: r.Origin, Key: &kk,
				Message: fmt.Sprintf("same primary key as %s (%s)", pr.Expected[0].Origin, pr.Expected[0].Entity)})
		}
	}
	kind, changes := diff.Classify(pr, b.owns)
	s := &b.p.Summary
	switch kind {
	case diff.KindCreate, diff.KindChange, diff.KindUnchanged:
		exp := pr.Expected[0]
		ep := b.entity(exp.Entity)
		ref := report.ItemRef{Key: key(), Entity: exp.Entity, Origin: exp.Origin}
		switch kind {
		case diff.KindCreate:
			s.Create++
			ep.Create++
			b.p.Capacity.WriteUnits.CreatesAndChanges += int64(load.ItemWriteUnits(exp.Attrs, b.indexes))
			if len(b.p.Creates) < b.max {
				b.p.Creates = append(b.p.Creates, ref)
			}
		case diff.KindChange:
			s.Change++
			ep.Change++
			b.p.Capacity.WriteUnits.CreatesAndChanges += int64(load.ItemWriteUnits(exp.Attrs, b.indexes))
			if len(b.p.Changes) < b.max {
				b.p.Changes = append(b.p.Changes, report.ItemChange{ItemRef: ref, Attributes: attributeChanges(changes)})
			}
		default:
			s.Unchanged++
			ep.Unchanged++
		}
	case diff.KindStale:
		t := pr.Target[0]
		s.Stale++
		b.entity(t.Entity).Stale++
		if len(b.p.Stale) < b.max {
			b.p.Stale = append(b.p.Stale, report.ItemRef{Key: key(), Entity: t.Entity})
		}
	case diff.KindForeign:
		s.Foreign++
	}
	return nil
}

// finish copies the accumulators into the report.
func (b *planBuilder) finish(src *source) {
	for i := range b.p.Entities {
		b.p.Entities[i] = *b.entities[b.p.Entities[i].Entity]
	}
	est := b.est.Estimate()
	c := &b.p.Capacity
	c.Items = est.Items
	c.Bytes = est.Bytes
	c.AvgItemBytes = est.AvgItemBytes
	c.MaxItemBytes = int64(est.MaxItemBytes)
	if est.Items > 0 {
		c.MaxItem = &report.ItemRef{Entity: est.MaxItemEntity, Key: reportKey([]byte(est.MaxItemKey))}
	}
	c.WriteUnits.Table = est.TableWriteUnits
	c.WriteUnits.Total = est.WriteUnits
	c.WriteUnits.Indexes = est.WriteUnits - est.TableWriteUnits
	c.PricePerMillionWriteUnits = est.PricePerMillion
	c.EstimatedCostUSD = est.CostUSD
	c.WriteRate = est.WriteRate
	c.EstimatedSeconds = est.Seconds
	for _, bin := range est.Histogram {
		c.SizeHistogram = append(c.SizeHistogram, report.SizeBin{MinBytes: bin.Min, MaxBytes: bin.Max, Items: bin.Items})
	}
	for _, p := range est.TopByItems {
		c.TopPartitionsByItems = append(c.TopPartitionsByItems, report.Partition{PK: p.Key, Items: p.Items, Bytes: p.Bytes})
	}
	for _, p := range est.TopByBytes {
		c.TopPartitionsByBytes = append(c.TopPartitionsByBytes, report.Partition{PK: p.Key, Items: p.Items, Bytes: p.Bytes})
	}
	for _, ix := range est.Indexes {
		method := "exact"
		if !ix.Exact {
			method = "hyperloglog"
		}
		c.Indexes = append(c.Indexes, report.IndexKeys{Index: ix.Name, Items: ix.Items, WriteUnits: ix.WriteUnits, DistinctPartitionKeys: ix.DistinctPartitionKeys, Method: method})
	}
	for _, sr := range src.shards {
		in := sr.Inputs
		c.Shards = append(c.Shards, report.Shards{Entity: sr.Entity, Index: sr.Index, AvgItemBytes: in.AvgItemBytes, ItemsPerRCU: in.ItemsPerRCU,
			PartitionMaxReadRate: in.PartitionMaxReadRate, ReadRate: in.ReadRate, Raw: in.Raw, Count: in.Count})
	}
	for _, cp := range est.Copies {
		c.Copies = append(c.Copies, report.CopyCost{Entity: cp.Entity, From: cp.From, Attributes: cp.Attributes, Items: cp.Items})
	}
}
