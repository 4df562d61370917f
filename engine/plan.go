package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/capacity"
	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// PlanConfig configures Plan.
type PlanConfig struct {
	CompareConfig
	// PricePerMillionWCU is the on-demand price in USD of a million write
	// request units. Default capacity.DefaultPricePerMillionWCU.
	PricePerMillionWCU float64
	// WriteRate is the items per second assumed for the duration estimate.
	// Default capacity.DefaultWriteRate.
	WriteRate float64
	// PricePerGBImport, ImportGBPerHour and ImportOverhead price and time
	// the import path (Import from S3) the plan compares with writes.
	// Defaults capacity.DefaultPricePerGBImport, DefaultImportGBPerHour and
	// DefaultImportOverhead.
	PricePerGBImport float64
	ImportGBPerHour  float64
	ImportOverhead   time.Duration
	// ExportFileSize is the --file-size of the export the import path
	// counts files for, against Import from S3's 50,000-file limit.
	// Default capacity.DefaultExportFileSize.
	ExportFileSize int64
}

// WithDefaults returns c with every unset field set to its default.
func (c PlanConfig) WithDefaults() PlanConfig {
	c.CompareConfig = c.CompareConfig.withDefaults(ConsistencyEventual)
	if c.PricePerMillionWCU == 0 {
		c.PricePerMillionWCU = capacity.DefaultPricePerMillionWCU
	}
	if c.WriteRate == 0 {
		c.WriteRate = capacity.DefaultWriteRate
	}
	return c
}

// Validate reports every problem with c, each wrapping ErrConfig. Call it
// on WithDefaults().
func (c PlanConfig) Validate() error {
	errs := []error{c.CompareConfig.validate("plan")}
	field := func(name, format string, args ...any) { errs = append(errs, fieldf("plan", name, format, args...)) }
	for _, f := range []struct {
		name string
		v    float64
	}{{"PricePerMillionWCU", c.PricePerMillionWCU}, {"WriteRate", c.WriteRate}, {"PricePerGBImport", c.PricePerGBImport}, {"ImportGBPerHour", c.ImportGBPerHour}} {
		// NaN passes every comparison below.
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			field(f.name, "must be a finite number, not %v", f.v)
		}
	}
	if c.PricePerMillionWCU < 0 {
		field("PricePerMillionWCU", "must not be negative")
	}
	if c.WriteRate <= 0 {
		field("WriteRate", "must be positive")
	}
	if c.PricePerGBImport < 0 {
		field("PricePerGBImport", "must not be negative")
	}
	if c.ImportGBPerHour < 0 {
		field("ImportGBPerHour", "must not be negative")
	}
	if c.ImportOverhead < 0 {
		field("ImportOverhead", "must not be negative")
	}
	if c.ExportFileSize < 0 {
		field("ExportFileSize", "must not be negative")
	}
	return errors.Join(errs...)
}

// Plan is a dry run: it reads the source in one snapshot, transforms every
// row exactly as Run does, and compares the items with what the table holds
// now, by primary key; it also estimates the load. It never writes to
// DynamoDB: it calls only DescribeTable, Scan and BatchGetItem. A missing
// table makes everything a create.
//
// Problems that would make Run fail (row errors, duplicate keys, items over
// 400 KB) are listed in the plan, not returned as an error.
func Plan(ctx context.Context, cfg PlanConfig) (*PlanResult, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	src, tgt, err := openBoth(ctx, cfg.Validate(), &cfg.CompareConfig)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)

	m := cfg.Mapping
	b := &planBuilder{
		p: &report.Plan{
			Schema:      report.PlanSchema,
			GeneratedAt: time.Now().UTC().Truncate(time.Second),
			Mapping:     m.File,
			Table:       tableInfo(m, tgt),
			MaxDetails:  cfg.MaxDetails,
		},
		est: capacity.New(capacity.Config{
			Indexes:            src.indexes(),
			PartitionKey:       m.PartitionKey,
			SortKey:            m.SortKey,
			PricePerMillionWCU: cfg.PricePerMillionWCU,
			WriteRate:          cfg.WriteRate,
			Copies:             capacity.CopySets(m),
			PricePerGBImport:   cfg.PricePerGBImport,
			ImportGBPerHour:    cfg.ImportGBPerHour,
			ImportOverhead:     cfg.ImportOverhead,
			ExportFileSize:     cfg.ExportFileSize,
		}),
		indexes:  src.indexes(),
		entities: map[string]*report.EntityPlan{},
		owns:     ownedBy(src),
		max:      cfg.MaxDetails,
	}
	for _, e := range m.Entities {
		ep := &report.EntityPlan{Entity: e.Name, Source: e.Schema + "." + e.From}
		b.entities[e.Name] = ep
		b.p.Entities = append(b.p.Entities, *ep)
	}

	c := &comparison{src: src, target: tgt, mode: cfg.Mode, cfg: &cfg.CompareConfig, sample: 1,
		expected: b.expected, rowError: b.problem, visit: b.visit}
	if !tgt.exists {
		c.mode = "none"
		pkType, skType := tableconf.KeyTypes(m)
		b.p.Table.Create = tableCreate(load.CreateTableInput(load.Config{
			Table: tgt.name, PartitionKey: m.PartitionKey, SortKey: m.SortKey, Indexes: src.indexes(),
			PartitionKeyType: pkType, SortKeyType: skType,
		}))
	}
	for _, p := range tgt.tableProblems() {
		b.problem(p)
	}
	b.p.Table.Billing = tgt.billing
	cfg.Logger.Debug("plan: comparing", "table", tgt.name, "exists", tgt.exists, "mode", c.mode)
	if err := c.run(ctx); err != nil {
		return nil, interrupted(ctx, "plan", err)
	}
	b.finish(src)
	b.p.Capacity.Warm = warmLoad(&b.p.Capacity, tgt)
	b.p.Capacity.Snapshot = snapshotHold(src, b.p.Capacity.EstimatedSeconds)
	b.p.Reads = readsInfo(c, start)
	b.p.Keys = keyUniqueness(src.keys)
	return b.p, nil
}

// keyUniqueness is the proof in the report's terms.
func keyUniqueness(p mapping.KeyProof) *report.KeyUniqueness {
	k := &report.KeyUniqueness{Proven: p.Proven()}
	for _, e := range p.Entities {
		k.Entities = append(k.Entities, report.EntityKeys{Entity: e.Entity, Unique: e.Unique, Reason: e.Reason})
	}
	return k
}

// planBuilder accumulates the plan while the comparison runs.
type planBuilder struct {
	p        *PlanResult
	est      *capacity.Estimator
	indexes  []load.Index
	entities map[string]*report.EntityPlan
	owns     func(r diff.Record, key []byte) bool
	max      int
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
	est := b.est.Estimate()
	for _, ee := range est.Entities {
		if ep := b.entities[ee.Entity]; ep != nil {
			ep.PartitionKeys, ep.PartitionKeysMethod = ee.PartitionKeys, "exact"
			if !ee.ExactKeys {
				ep.PartitionKeysMethod = "hyperloglog"
			}
		}
	}
	for i := range b.p.Entities {
		b.p.Entities[i] = *b.entities[b.p.Entities[i].Entity]
	}
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
	ip := est.Import
	c.Import = report.ImportPath{UncompressedBytes: ip.UncompressedBytes, PricePerGB: ip.PricePerGB, EstimatedCostUSD: ip.CostUSD,
		GBPerHour: ip.GBPerHour, OverheadSeconds: ip.Overhead.Seconds(), EstimatedSeconds: ip.Seconds,
		Files: ip.Files, FileSize: ip.FileSize, FileLimit: ip.FileLimit}
	c.Cheaper = est.Cheaper()
	if _, err := load.TableCreationParameters(TableConfig(src.m, "")); err != nil {
		c.Import.Unsupported = strings.TrimPrefix(err.Error(), "load: ")
		c.Cheaper = "write"
	}
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
		c.Indexes = append(c.Indexes, report.IndexKeys{Index: ix.Name, Items: ix.Items, WriteUnits: ix.WriteUnits, DistinctPartitionKeys: ix.DistinctPartitionKeys, Method: method,
			Projection: ix.Projection, StorageBytes: ix.StorageBytes, AllWriteUnits: ix.AllWriteUnits, AllStorageBytes: ix.AllStorageBytes})
	}
	for _, sr := range src.shards {
		if sr.Preset {
			continue // given, not computed: nothing to show of its inputs
		}
		in := sr.Inputs
		c.Shards = append(c.Shards, report.Shards{Entity: sr.Entity, Index: sr.Index, AvgItemBytes: in.AvgItemBytes, SampleItems: in.SampleItems, ItemsPerRCU: in.ItemsPerRCU,
			PartitionMaxReadRate: in.PartitionMaxReadRate, ReadRate: in.ReadRate, Raw: in.Raw, Count: in.Count})
	}
	for _, cp := range est.Copies {
		c.Copies = append(c.Copies, report.CopyCost{Entity: cp.Entity, From: cp.From, Attributes: cp.Attributes, Items: cp.Items})
	}
}

// tableCreate describes a CreateTable request for the plan.
func tableCreate(in *dynamodb.CreateTableInput) *report.TableCreate {
	attrTypes := map[string]string{}
	for _, d := range in.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	keys := func(ks []types.KeySchemaElement) []report.KeyAttribute {
		var out []report.KeyAttribute
		for _, k := range ks {
			role := "partition"
			if k.KeyType == types.KeyTypeRange {
				role = "sort"
			}
			name := aws.ToString(k.AttributeName)
			out = append(out, report.KeyAttribute{Name: name, Type: attrTypes[name], Role: role})
		}
		return out
	}
	tc := &report.TableCreate{Keys: keys(in.KeySchema), Billing: string(in.BillingMode), Indexes: []report.IndexCreate{}}
	proj := func(p *types.Projection) (string, []string) {
		if p == nil {
			return string(types.ProjectionTypeAll), nil
		}
		return string(p.ProjectionType), p.NonKeyAttributes
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		pt, nk := proj(ix.Projection)
		tc.Indexes = append(tc.Indexes, report.IndexCreate{Name: aws.ToString(ix.IndexName), Kind: "global", Keys: keys(ix.KeySchema), Projection: pt, NonKeyAttributes: nk})
	}
	for _, ix := range in.LocalSecondaryIndexes {
		pt, nk := proj(ix.Projection)
		tc.Indexes = append(tc.Indexes, report.IndexCreate{Name: aws.ToString(ix.IndexName), Kind: "local", Keys: keys(ix.KeySchema), Projection: pt, NonKeyAttributes: nk})
	}
	return tc
}

// snapshotHold is the plan's account of the source's snapshot: what a run
// holds it (the writes' duration, since the writer paces reading), what
// this plan held it, and the settings it overrides.
func snapshotHold(src *source, runSeconds float64) *report.SnapshotHold {
	h := &report.SnapshotHold{RunSeconds: runSeconds, PlanSeconds: src.heldFor().Seconds()}
	for _, o := range src.overrides {
		h.Overrides = append(h.Overrides, report.Setting{Name: o.Name, Value: o.Value, Source: o.Source})
	}
	return h
}

// warmLoad is the load's duration at what the target table takes at once:
// a missing table is assumed created by run --create-table, on demand and
// not pre-warmed. Nil when the table's capacity is unknown.
func warmLoad(c *report.Capacity, tgt *table) *report.WarmLoad {
	tc, newTable := tgt.capacity, !tgt.exists
	switch {
	case newTable:
		tc = load.TableCapacity{WCU: load.OnDemandInitialWCU, OnDemand: true}
	case tc.OnDemand && tc.WCU == 0:
		// An on-demand table that describes no warm throughput (an
		// emulator; AWS describes it for every table): what AWS gives a
		// new one. The writer starts unlimited there instead.
		tc.WCU = load.OnDemandInitialWCU
	}
	var hot int64
	for _, p := range append(slices.Clone(c.TopPartitionsByItems), c.TopPartitionsByBytes...) {
		hot = max(hot, capacity.CollectionWriteUnits(capacity.Partition{Key: p.PK, Items: p.Items, Bytes: p.Bytes}))
	}
	w := capacity.WarmLoad(c.WriteUnits.Total, hot, tc)
	if w.Table.WCU <= 0 {
		return nil
	}
	billing := "provisioned"
	if tc.OnDemand {
		billing = "onDemand"
	}
	return &report.WarmLoad{Billing: billing, NewTable: newTable, WriteUnitsPerSecond: tc.WCU, MaxWriteUnitsPerSecond: tc.MaxWCU,
		HotPartitionSeconds: w.HotSeconds, EstimatedSeconds: w.Seconds}
}
