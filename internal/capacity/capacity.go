// Package capacity estimates what loading a set of items into DynamoDB
// costs, from the items themselves: sizes by DynamoDB's rules
// (load.ItemSize), write units for the table and for every index an item
// appears in, by the size of its index entry under the index's projection
// (load.IndexEntrySize), storage with DynamoDB's 100 bytes of overhead per
// item and per index entry, what each index would cost projecting ALL
// (what its projection saves), the on-demand price, the duration at a
// write rate, an item-size histogram, the largest item collections (hot
// partition risk), the number of distinct partition keys per GSI, and how
// many items carry each set of copied (denormalized) attributes, which is
// what a later update of the copied data costs.
//
// Every figure is computed in one pass in memory that does not grow with
// the number of items, with one exception bounded by design: GSI key
// cardinality is counted exactly up to ExactDistinctLimit distinct keys
// per index (64-bit hashes in a set, about 1.5 MB at the limit; a false
// merge of two keys has probability below 10⁻⁹), and beyond that
// estimated with HyperLogLog (2^14 registers, 16 KB, standard error
// 0.81%). Estimate says which, per index.
//
// The largest item collections are exact too, but need the items grouped
// by partition key: feed Partition in key order (the comparison's sorted
// merge provides it).
package capacity

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// Config configures an Estimator. Zero values mean the documented defaults.
type Config struct {
	// Indexes are the table's secondary indexes, with their projections.
	Indexes []load.Index
	// PartitionKey and SortKey name the table's key attributes, which every
	// index entry carries (they size KEYS_ONLY and INCLUDE entries).
	PartitionKey, SortKey string
	// PricePerMillionWCU is the on-demand price of a million write request
	// units in USD. Default 0.625 (us-east-1, standard table class).
	PricePerMillionWCU float64
	// WriteRate is the sustained load rate in items per second used for
	// the duration estimate. Default 1000.
	WriteRate float64
	// TopPartitions is how many of the largest item collections to keep,
	// by item count and by bytes. Default 10.
	TopPartitions int
	// Copies are the copied attribute sets to count (see CopySets).
	Copies []CopySet

	// PricePerGBImport, ImportGBPerHour and ImportOverhead price and time
	// the import path (see importpath.go). Defaults
	// DefaultPricePerGBImport, DefaultImportGBPerHour and
	// DefaultImportOverhead.
	PricePerGBImport float64
	ImportGBPerHour  float64
	ImportOverhead   time.Duration
	// ExportFileSize is the uncompressed size of an export's data files
	// the import path counts files at, against Import from S3's limit.
	// Default DefaultExportFileSize.
	ExportFileSize int64
}

// Defaults.
const (
	DefaultPricePerMillionWCU = 0.625
	DefaultWriteRate          = 1000
	DefaultTopPartitions      = 10
)

// WithDefaults returns c with unset fields defaulted.
func (c Config) WithDefaults() Config {
	c.PricePerMillionWCU = cmp.Or(c.PricePerMillionWCU, DefaultPricePerMillionWCU)
	c.WriteRate = cmp.Or(c.WriteRate, DefaultWriteRate)
	c.TopPartitions = cmp.Or(c.TopPartitions, DefaultTopPartitions)
	c.PricePerGBImport = cmp.Or(c.PricePerGBImport, DefaultPricePerGBImport)
	c.ImportGBPerHour = cmp.Or(c.ImportGBPerHour, DefaultImportGBPerHour)
	c.ImportOverhead = cmp.Or(c.ImportOverhead, DefaultImportOverhead)
	c.ExportFileSize = cmp.Or(c.ExportFileSize, DefaultExportFileSize)
	return c
}

// CopySet is one copy block of a mapping entity (rule 2): the attributes
// it puts on the entity's items, copied from a parent table reached
// through From (nested copies are their own sets, "books > authors").
type CopySet struct {
	Entity     string
	From       string
	Attributes []string
}

// CopySets lists every copy block of a mapping, nested ones included, in
// mapping order. A copy into a map (and every copy nested in one) is
// counted by the item attribute that holds the map.
func CopySets(m *mapping.Mapping) []CopySet {
	var out []CopySet
	var walk func(entity string, path []string, into string, cs []*mapping.Copy)
	walk = func(entity string, path []string, into string, cs []*mapping.Copy) {
		for _, c := range cs {
			p := append(slices.Clone(path), c.From)
			set := CopySet{Entity: entity, From: strings.Join(p, " > ")}
			in := into
			if in == "" && c.Into != "" {
				in = c.Into
			}
			if in != "" {
				set.Attributes = []string{in}
			} else {
				for _, a := range c.Attributes {
					set.Attributes = append(set.Attributes, a.Name)
				}
			}
			out = append(out, set)
			walk(entity, p, in, c.Copies)
		}
	}
	for _, e := range m.Entities {
		walk(e.Name, nil, "", e.Copies)
	}
	return out
}

// Estimator accumulates items. It is not safe for concurrent use.
type Estimator struct {
	cfg       Config
	items     int64
	bytes     int64
	maxSize   int
	maxKey    string
	maxEntity string
	tableWCU  int64
	totalWCU  int64
	hist      [len(binEdges)]int64
	entities  map[string]*EntityEstimate
	// entityKeys counts each entity's partition key values.
	entityKeys map[string]*distinct
	order      []string
	indexes    []*indexAcc
	copies     []int64
	// importBytes are the items' lines in an export (ImportLineBytes).
	importBytes int64

	top topPartitions
}

type indexAcc struct {
	items, wcu int64
	bytes      int64 // index entries, by the projection
	allWCU     int64 // the same entries projecting ALL
	allBytes   int64
	keys       distinct
}

// New returns an Estimator.
func New(cfg Config) *Estimator {
	cfg = cfg.WithDefaults()
	e := &Estimator{cfg: cfg, entities: map[string]*EntityEstimate{}, entityKeys: map[string]*distinct{}, copies: make([]int64, len(cfg.Copies))}
	for range cfg.Indexes {
		e.indexes = append(e.indexes, &indexAcc{})
	}
	e.top.k = cfg.TopPartitions
	return e
}

// Add counts one item of an entity; key identifies it (kept, as given, for
// the largest item). It returns the item's size and its write units in the
// table and its indexes (load.ItemWriteUnits).
func (e *Estimator) Add(entity, key string, attrs map[string]types.AttributeValue) (size, writeUnits int) {
	size = load.ItemSize(attrs)
	wcu := load.WriteUnits(size)
	total := load.ItemWriteUnits(attrs, e.cfg.Indexes, e.cfg.PartitionKey, e.cfg.SortKey)
	e.items++
	e.bytes += int64(size)
	if size > e.maxSize || e.items == 1 {
		e.maxSize, e.maxKey, e.maxEntity = size, key, entity
	}
	e.tableWCU += int64(wcu)
	e.totalWCU += int64(total)
	e.hist[binOf(size)]++
	e.importBytes += int64(ImportLineBytes(attrs))

	es := e.entities[entity]
	if es == nil {
		es = &EntityEstimate{Entity: entity}
		e.entities[entity] = es
		e.entityKeys[entity] = &distinct{}
		e.order = append(e.order, entity)
	}
	e.entityKeys[entity].add(keyText(attrs[e.cfg.PartitionKey]))
	es.Items++
	es.Bytes += int64(size)
	es.MaxItemBytes = max(es.MaxItemBytes, size)
	es.WriteUnits += int64(total)

	for i, ix := range e.cfg.Indexes {
		entry, ok := load.IndexEntrySize(attrs, size, ix, e.cfg.PartitionKey, e.cfg.SortKey)
		if !ok {
			continue
		}
		acc := e.indexes[i]
		acc.items++
		acc.wcu += int64(load.WriteUnits(entry))
		acc.bytes += int64(entry)
		acc.allWCU += int64(wcu)
		acc.allBytes += int64(size)
		acc.keys.add(keyText(attrs[ix.PartitionKey]))
	}
	for i, cs := range e.cfg.Copies {
		if cs.Entity != entity {
			continue
		}
		for _, a := range cs.Attributes {
			if _, ok := attrs[a]; ok {
				e.copies[i]++
				break
			}
		}
	}
	return size, total
}

// Partition counts one item of size bytes in the item collection pk.
// Calls must come grouped by partition key (all items of one key in a
// row), or collections are split and under-counted.
func (e *Estimator) Partition(pk string, size int) { e.top.add(pk, int64(size)) }

// keyText identifies a partition key value as DynamoDB does: one text
// for one key (ddbvalue.AppendKeyPart, numbers canonical).
func keyText(av types.AttributeValue) string {
	b, ok := ddbvalue.AppendKeyPart(nil, av)
	if !ok {
		return "?"
	}
	return string(b)
}

// Estimate is the result.
type Estimate struct {
	Items         int64
	Bytes         int64
	AvgItemBytes  float64
	MaxItemBytes  int
	MaxItemKey    string
	MaxItemEntity string

	TableWriteUnits int64 // ceil(size/1 KB) per item
	WriteUnits      int64 // table plus every index an item appears in
	// StorageBytes is what the table and its indexes store: every item and
	// every index entry, each with load.IndexOverheadBytes.
	StorageBytes    int64
	CostUSD         float64
	Seconds         float64 // Items / WriteRate
	PricePerMillion float64
	WriteRate       float64

	Histogram  []Bin
	Entities   []EntityEstimate // in the order entities were first seen
	Indexes    []IndexEstimate  // in Config.Indexes order
	TopByItems []Partition
	TopByBytes []Partition
	Copies     []CopyCount // in Config.Copies order

	// Import is the same load by Import from S3.
	Import ImportEstimate
}

// EntityEstimate is one entity's share.
type EntityEstimate struct {
	Entity       string
	Items, Bytes int64
	MaxItemBytes int
	WriteUnits   int64
	// PartitionKeys counts the partition key values of its items, exact
	// (ExactKeys) up to ExactDistinctLimit values, else a HyperLogLog
	// estimate, as for an index.
	PartitionKeys int64
	ExactKeys     bool
}

// IndexEstimate is one index's share: the items that carry its key
// attributes, the write units and storage their entries cost in it under
// its projection, the same projecting ALL (the difference is what the
// projection saves), and its distinct partition keys (exact or
// HyperLogLog).
type IndexEstimate struct {
	Name                  string
	Projection            string // ALL, KEYS_ONLY or INCLUDE
	Items                 int64
	WriteUnits            int64
	StorageBytes          int64
	AllWriteUnits         int64
	AllStorageBytes       int64
	DistinctPartitionKeys int64
	Exact                 bool
}

// Bin is a histogram bin of item sizes: Min <= size < Max bytes.
type Bin struct {
	Min, Max int
	Items    int64
}

// Partition is one item collection.
type Partition struct {
	Key          string
	Items, Bytes int64
}

// CopyCount is how many items carry at least one attribute of a copy set.
type CopyCount struct {
	CopySet
	Items int64
}

// binEdges are the histogram's lower bounds: powers of two from 128 bytes
// to 256 KB (the 1 KB write-unit boundary is one of them), after a first
// bin of 0..127; the last bin ends at the 400 KB item limit.
var binEdges = [...]int{0, 128, 256, 512, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10}

func binOf(size int) int {
	i, found := slices.BinarySearch(binEdges[:], size)
	if !found {
		i--
	}
	return i
}

// Estimate returns the figures so far (and ends the current collection).
func (e *Estimator) Estimate() Estimate {
	e.top.flush()
	est := Estimate{
		Items:           e.items,
		Bytes:           e.bytes,
		MaxItemBytes:    e.maxSize,
		MaxItemKey:      e.maxKey,
		MaxItemEntity:   e.maxEntity,
		TableWriteUnits: e.tableWCU,
		WriteUnits:      e.totalWCU,
		PricePerMillion: e.cfg.PricePerMillionWCU,
		WriteRate:       e.cfg.WriteRate,
		CostUSD:         float64(e.totalWCU) / 1e6 * e.cfg.PricePerMillionWCU,
		Seconds:         float64(e.items) / e.cfg.WriteRate,
		Import:          e.importEstimate(),
	}
	if e.items > 0 {
		est.AvgItemBytes = float64(e.bytes) / float64(e.items)
	}
	last := -1
	for i, n := range e.hist {
		if n > 0 {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		hi := load.MaxItemSize + 1
		if i+1 < len(binEdges) {
			hi = binEdges[i+1]
		}
		est.Histogram = append(est.Histogram, Bin{Min: binEdges[i], Max: hi, Items: e.hist[i]})
	}
	for _, name := range e.order {
		es := *e.entities[name]
		es.PartitionKeys, es.ExactKeys = e.entityKeys[name].count()
		est.Entities = append(est.Entities, es)
	}
	est.StorageBytes = e.bytes + e.items*load.IndexOverheadBytes
	for i, ix := range e.cfg.Indexes {
		acc := e.indexes[i]
		n, exact := acc.keys.count()
		proj := string(ix.Projection)
		if proj == "" {
			proj = "ALL"
		}
		ie := IndexEstimate{
			Name: ix.Name, Projection: proj, Items: acc.items,
			WriteUnits: acc.wcu, StorageBytes: acc.bytes + acc.items*load.IndexOverheadBytes,
			AllWriteUnits: acc.allWCU, AllStorageBytes: acc.allBytes + acc.items*load.IndexOverheadBytes,
			DistinctPartitionKeys: n, Exact: exact,
		}
		est.StorageBytes += ie.StorageBytes
		est.Indexes = append(est.Indexes, ie)
	}
	est.TopByItems = e.top.byItems.sorted()
	est.TopByBytes = e.top.byBytes.sorted()
	for i, cs := range e.cfg.Copies {
		est.Copies = append(est.Copies, CopyCount{CopySet: cs, Items: e.copies[i]})
	}
	return est
}

// WriteUnitsPerSecond is the write rate in units per second that loading
// at WriteRate items per second implies.
func (est Estimate) WriteUnitsPerSecond() float64 {
	if est.Seconds <= 0 {
		return 0
	}
	return math.Round(float64(est.WriteUnits) / est.Seconds)
}

// topPartitions keeps the k largest collections by items and by bytes.
type topPartitions struct {
	k       int
	cur     Partition
	active  bool
	byItems partitionHeap
	byBytes partitionHeap
}

func (t *topPartitions) add(pk string, size int64) {
	if t.active && pk != t.cur.Key {
		t.flush()
	}
	if !t.active {
		t.cur, t.active = Partition{Key: pk}, true
	}
	t.cur.Items++
	t.cur.Bytes += size
}

func (t *topPartitions) flush() {
	if !t.active {
		return
	}
	t.byItems.offer(t.cur, t.k, func(p Partition) int64 { return p.Items })
	t.byBytes.offer(t.cur, t.k, func(p Partition) int64 { return p.Bytes })
	t.active = false
}

// partitionHeap is a min-heap on a measure: the root is the smallest kept.
type partitionHeap struct {
	ps      []Partition
	measure func(Partition) int64
}

// less orders by measure, then by key descending, so that among equal
// measures the smallest key is kept: the result does not depend on order.
func (h *partitionHeap) less(a, b Partition) bool {
	if ma, mb := h.measure(a), h.measure(b); ma != mb {
		return ma < mb
	}
	return a.Key > b.Key
}

func (h *partitionHeap) Len() int           { return len(h.ps) }
func (h *partitionHeap) Less(i, j int) bool { return h.less(h.ps[i], h.ps[j]) }
func (h *partitionHeap) Swap(i, j int)      { h.ps[i], h.ps[j] = h.ps[j], h.ps[i] }
func (h *partitionHeap) Push(x any)         { h.ps = append(h.ps, x.(Partition)) }
func (h *partitionHeap) Pop() any {
	x := h.ps[len(h.ps)-1]
	h.ps = h.ps[:len(h.ps)-1]
	return x
}

func (h *partitionHeap) offer(p Partition, k int, measure func(Partition) int64) {
	h.measure = measure
	if len(h.ps) < k {
		heap.Push(h, p)
		return
	}
	if k > 0 && h.less(h.ps[0], p) {
		h.ps[0] = p
		heap.Fix(h, 0)
	}
}

// sorted returns the kept partitions, largest first.
func (h *partitionHeap) sorted() []Partition {
	out := slices.Clone(h.ps)
	slices.SortFunc(out, func(a, b Partition) int {
		if h.less(a, b) {
			return 1
		}
		if h.less(b, a) {
			return -1
		}
		return 0
	})
	return out
}
