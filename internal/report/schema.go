package report

import (
	"encoding/json"
	"fmt"
	"time"
)

// Schema names, the value of the "schema" field of each document. The
// version changes only when a field is removed, renamed or changes meaning;
// fields may be added within a version.
const (
	PlanSchema   = "migrate.plan/v1"
	VerifySchema = "migrate.verify/v1"
)

// Plan is what `migrate plan` found: the difference between the items the
// mapping produces from the source now and the target table, and what
// loading them costs.
type Plan struct {
	Schema      string      `json:"schema"`      // PlanSchema
	GeneratedAt time.Time   `json:"generatedAt"` // RFC 3339, UTC
	Mapping     string      `json:"mapping"`     // mapping file as given
	Table       Table       `json:"table"`
	Reads       Reads       `json:"reads"`
	Summary     PlanSummary `json:"summary"`
	// Entities has one row per mapping entity, in mapping order.
	Entities []EntityPlan `json:"entities"`
	// Creates, Changes and Stale list items in table key order (partition
	// key, then sort key, byte-wise), at most MaxDetails each; Summary has
	// the full counts.
	Creates  []ItemRef    `json:"creates"`
	Changes  []ItemChange `json:"changes"`
	Stale    []ItemRef    `json:"stale"`
	Problems []Problem    `json:"problems"` // at most MaxDetails
	// MaxDetails is the cap applied to each list above.
	MaxDetails int      `json:"maxDetails"`
	Capacity   Capacity `json:"capacity"`
	// Keys says which entities' keys are proven unique from the source's
	// unique keys: a run keeps no record of those, and checks the others
	// for duplicates.
	Keys *KeyUniqueness `json:"keys,omitempty"`
}

// KeyUniqueness is the proof of key uniqueness of a mapping, per entity.
type KeyUniqueness struct {
	Proven   bool         `json:"proven"` // for every entity
	Entities []EntityKeys `json:"entities"`
}

// EntityKeys is whether one entity's keys are proven unique, and why (or
// what is missing).
type EntityKeys struct {
	Entity string `json:"entity"`
	Unique bool   `json:"unique"`
	Reason string `json:"reason"`
}

// Table describes the target table and the mapping's key attributes.
type Table struct {
	Name            string `json:"name"`
	Exists          bool   `json:"exists"` // false: every expected item is a create
	PartitionKey    string `json:"partitionKey"`
	SortKey         string `json:"sortKey,omitempty"`
	EntityAttribute string `json:"entityAttribute"` // the attribute naming each item's entity
	// Billing is an existing table's capacity mode, e.g. "on demand" or
	// "provisioned, 100 WCU (GSI1 50 WCU)".
	Billing string `json:"billing,omitempty"`
	// Create is, when the table does not exist, the table `migrate run
	// --create-table` would create; run refuses a missing table without
	// that flag.
	Create *TableCreate `json:"create,omitempty"`
}

// TableCreate describes a table to create.
type TableCreate struct {
	// Keys are the table's key attributes, partition key first.
	Keys []KeyAttribute `json:"keys"`
	// Billing is the billing mode: "PAY_PER_REQUEST" (on demand).
	Billing string        `json:"billing"`
	Indexes []IndexCreate `json:"indexes"`
}

// KeyAttribute is one key attribute: its name, DynamoDB type (S, N or B)
// and role ("partition" or "sort").
type KeyAttribute struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Role string `json:"role"`
}

// IndexCreate is one secondary index of a table to create.
type IndexCreate struct {
	Name string         `json:"name"`
	Kind string         `json:"kind"` // "global" or "local"
	Keys []KeyAttribute `json:"keys"`
	// Projection is ALL, KEYS_ONLY or INCLUDE (with NonKeyAttributes).
	Projection       string   `json:"projection"`
	NonKeyAttributes []string `json:"nonKeyAttributes,omitempty"`
}

// Reads says how the target table was read and what it cost.
type Reads struct {
	// Mode is "scan" (one parallel Scan of the whole table), "get"
	// (BatchGetItem of the expected keys) or "none" (no table to read).
	Mode       string `json:"mode"`
	Consistent bool   `json:"consistent"` // strongly consistent reads
	// StaleChecked is false in get mode: finding items the mapping no longer
	// produces needs a full read of the table.
	StaleChecked bool    `json:"staleChecked"`
	Calls        int64   `json:"calls"`     // Scan or BatchGetItem requests
	ItemsRead    int64   `json:"itemsRead"` // items DynamoDB returned
	ReadUnits    float64 `json:"readUnits"` // consumed read capacity DynamoDB reported
	Seconds      float64 `json:"seconds"`   // wall time of the whole command
}

// PlanSummary counts every expected and target item by outcome.
type PlanSummary struct {
	Expected  int64 `json:"expected"`  // items the mapping produces
	Create    int64 `json:"create"`    // expected, not in the table
	Change    int64 `json:"change"`    // in both, different
	Unchanged int64 `json:"unchanged"` // in both, equal
	Stale     int64 `json:"stale"`     // in the table only, of an entity this mapping owns
	Foreign   int64 `json:"foreign"`   // in the table only, of other entities: not compared
	Problems  int64 `json:"problems"`  // row errors, duplicate keys, items the loader would reject
}

// EntityPlan is one entity's share of the plan.
type EntityPlan struct {
	Entity       string `json:"entity"`
	Source       string `json:"source"` // schema.table
	Expected     int64  `json:"expected"`
	Create       int64  `json:"create"`
	Change       int64  `json:"change"`
	Unchanged    int64  `json:"unchanged"`
	Stale        int64  `json:"stale"` // by the entity attribute of the stale items
	Bytes        int64  `json:"bytes"` // total size of the expected items
	MaxItemBytes int64  `json:"maxItemBytes"`
	WriteUnits   int64  `json:"writeUnits"` // table plus GSIs
	// PartitionKeys counts the table partition key values of the expected
	// items (their item collections): exact ("exact") up to 65,536 values,
	// else a HyperLogLog estimate ("hyperloglog"). Absent in documents of
	// versions that did not count them.
	PartitionKeys       int64  `json:"partitionKeys,omitempty"`
	PartitionKeysMethod string `json:"partitionKeysMethod,omitempty"`
}

// Key is an item's primary key as text: strings as themselves, numbers in
// canonical form, binary in base64.
type Key struct {
	PK string `json:"pk"`
	SK string `json:"sk,omitempty"`
}

// String renders the key as "PK | SK".
func (k Key) String() string {
	if k.SK == "" {
		return k.PK
	}
	return k.PK + " | " + k.SK
}

// ItemRef names one item.
type ItemRef struct {
	Key    Key    `json:"key"`
	Entity string `json:"entity"` // expected entity, or the target item's entity attribute
	// Origin is the source row of an expected item, e.g.
	// "public.customers customer_id=42"; empty for items only in the table.
	Origin string `json:"origin,omitempty"`
}

// ItemChange is an item that differs, with what differs.
type ItemChange struct {
	ItemRef
	Attributes []AttributeChange `json:"attributes"`
}

// AttributeChange is one attribute-level difference from the table's item
// (old) to the expected one (new).
type AttributeChange struct {
	// Path is the attribute, with map keys and list indexes for nested
	// values: "name", "addresses.home.city", "lines[2]", `meta["a.b"]`.
	Path string `json:"path"`
	Op   string `json:"op"` // "added", "removed" or "changed"
	// Old and New are DynamoDB JSON values with type tags ({"S": "x"},
	// {"N": "1.5"}, {"M": {...}}); Old is absent for added, New for removed.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// Problem is something that would make `migrate run` fail.
type Problem struct {
	// Kind is "row-error" (a source row cannot become an item),
	// "duplicate-key" (two items with one primary key), "item-too-large"
	// (over 400 KB), "key-too-long" (a key over DynamoDB's limit), another
	// refusal of the loader ("empty-key", "invalid-key", "invalid-item", as
	// in reject files) or "table-mismatch" (the existing table cannot serve
	// the mapping: an index or key it lacks or has otherwise).
	Kind    string `json:"kind"`
	Entity  string `json:"entity,omitempty"`
	Origin  string `json:"origin,omitempty"`
	Key     *Key   `json:"key,omitempty"`
	Message string `json:"message"`
}

// Capacity estimates loading every expected item, as `migrate run` does.
type Capacity struct {
	Items        int64    `json:"items"`
	Bytes        int64    `json:"bytes"`
	AvgItemBytes float64  `json:"avgItemBytes"`
	MaxItemBytes int64    `json:"maxItemBytes"`
	MaxItem      *ItemRef `json:"maxItem,omitempty"`

	WriteUnits WriteUnits `json:"writeUnits"`
	// PricePerMillionWriteUnits is the on-demand price used, in USD.
	PricePerMillionWriteUnits float64 `json:"pricePerMillionWriteUnits"`
	EstimatedCostUSD          float64 `json:"estimatedCostUSD"` // WriteUnits.Total at that price
	// WriteRate is the load rate assumed, in items per second, and
	// EstimatedSeconds the load's duration at that rate.
	WriteRate        float64 `json:"writeRate"`
	EstimatedSeconds float64 `json:"estimatedSeconds"`
	// Warm is the load's duration at what the target table takes at once
	// (absent when that is unknown). Added within v1.
	Warm *WarmLoad `json:"warm,omitempty"`

	// SizeHistogram counts items by size, from the first bin to the last
	// non-empty one.
	SizeHistogram []SizeBin `json:"sizeHistogram"`
	// The largest item collections (items sharing a partition key), exact.
	TopPartitionsByItems []Partition `json:"topPartitionsByItems"`
	TopPartitionsByBytes []Partition `json:"topPartitionsByBytes"`
	Indexes              []IndexKeys `json:"indexes"` // one per GSI of the mapping
	Shards               []Shards    `json:"shards"`  // one per "count: auto" shard setting
	Copies               []CopyCost  `json:"copies"`  // one per copy block, nested ones included

	// Import is the same load by DynamoDB's Import from S3 instead of
	// writes (migrate export, then migrate import; a new table only).
	// Added within v1.
	Import ImportPath `json:"import"`
	// Cheaper names the path that costs less for these items: "write"
	// (migrate run, EstimatedCostUSD) or "import" (Import.EstimatedCostUSD).
	// Added within v1.
	Cheaper string `json:"cheaper"`
	// Snapshot is how long the source's snapshot is held, during which
	// VACUUM keeps every row version it may see. Present when the plan
	// read the source. Added within v1.
	Snapshot *SnapshotHold `json:"snapshot,omitempty"`
}

// SnapshotHold is how long the source's snapshot is held.
type SnapshotHold struct {
	// RunSeconds is what migrate run holds it, expected: reading is paced
	// by the writer, so about EstimatedSeconds.
	RunSeconds float64 `json:"runSeconds"`
	// PlanSeconds is what this plan held it: one pass over the source at
	// its own pace (while the table was read too), about what migrate
	// export holds it.
	PlanSeconds float64 `json:"planSeconds"`
	// Overrides are the source's timeouts the snapshot's transaction
	// turns off for itself.
	Overrides []Setting `json:"overrides,omitempty"`
}

// Setting is a source session setting a snapshot overrides.
type Setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`  // the user's value, as SHOW prints it
	Source string `json:"source"` // where it was set, as pg_settings says
}

// ImportPath estimates loading the expected items with Import from S3,
// which consumes no write capacity and is billed per GB of uncompressed
// source data, for the table and the indexes it creates.
type ImportPath struct {
	// UncompressedBytes is the size of the items as migrate export writes
	// them (one {"Item":...} line each, before compression): what the
	// import bills.
	UncompressedBytes int64 `json:"uncompressedBytes"`
	// PricePerGB is the price used, in USD per GB (2^30 bytes).
	PricePerGB       float64 `json:"pricePerGB"`
	EstimatedCostUSD float64 `json:"estimatedCostUSD"`
	// GBPerHour is the assumed import rate and OverheadSeconds the assumed
	// fixed time of an import (AWS publishes neither); EstimatedSeconds is
	// OverheadSeconds plus UncompressedBytes at GBPerHour.
	GBPerHour        float64 `json:"gbPerHour"`
	OverheadSeconds  float64 `json:"overheadSeconds"`
	EstimatedSeconds float64 `json:"estimatedSeconds"`
	// Unsupported, when set, says why Import from S3 cannot create this
	// table (it creates no local secondary indexes); Cheaper is then
	// "write" whatever the figures.
	Unsupported string `json:"unsupported,omitempty"`
	// Files is how many data files of FileSize uncompressed bytes (plan
	// --file-size, by default export's) the export needs, at least; FileLimit, when set,
	// says that is more than the 50,000 one Import from S3 takes and what
	// --file-size fits. Added within v1.
	Files     int64  `json:"files,omitempty"`
	FileSize  int64  `json:"fileSize,omitempty"`
	FileLimit string `json:"fileLimit,omitempty"`
}

// WriteUnits are write capacity units: ceil(item size / 1 KB) per item, in
// the table and again in every GSI the item appears in.
type WriteUnits struct {
	Table   int64 `json:"table"`
	Indexes int64 `json:"indexes"`
	Total   int64 `json:"total"`
	// CreatesAndChanges is the part spent on items that differ from the
	// table; `migrate run` rewrites every item, so it pays Total.
	CreatesAndChanges int64 `json:"createsAndChanges"`
}

// SizeBin is a histogram bin: MinBytes <= size < MaxBytes.
type SizeBin struct {
	MinBytes int   `json:"minBytes"`
	MaxBytes int   `json:"maxBytes"`
	Items    int64 `json:"items"`
}

// Partition is one item collection.
type Partition struct {
	PK    string `json:"pk"`
	Items int64  `json:"items"`
	Bytes int64  `json:"bytes"`
}

// IndexKeys describes one GSI.
type IndexKeys struct {
	Index      string `json:"index"`
	Items      int64  `json:"items"`      // items carrying the index's key attributes
	WriteUnits int64  `json:"writeUnits"` // their write units in the index
	// DistinctPartitionKeys counts the index's partition key values: exact
	// ("exact") up to 65,536 values, else a HyperLogLog estimate
	// ("hyperloglog", standard error 0.81%).
	DistinctPartitionKeys int64  `json:"distinctPartitionKeys"`
	Method                string `json:"method"`
	// Projection is the index's projection (ALL, KEYS_ONLY, INCLUDE);
	// StorageBytes what its entries store (each with 100 bytes of
	// overhead); AllWriteUnits and AllStorageBytes the same entries
	// projecting ALL, so that the difference is what the projection saves.
	// Absent in documents of versions without projections.
	Projection      string `json:"projection,omitempty"`
	StorageBytes    int64  `json:"storageBytes,omitempty"`
	AllWriteUnits   int64  `json:"allWriteUnits,omitempty"`
	AllStorageBytes int64  `json:"allStorageBytes,omitempty"`
}

// Saving says what a projection other than ALL saves, or "" for ALL (and
// for documents without projections).
func (ix IndexKeys) Saving() string {
	if ix.Projection == "" || ix.Projection == "ALL" {
		return ""
	}
	return fmt.Sprintf("projection %s saves %s write units and %s of storage over ALL",
		ix.Projection, count(ix.AllWriteUnits-ix.WriteUnits), size(float64(ix.AllStorageBytes-ix.StorageBytes)))
}

// Shards is one computed "count: auto" shard count with its inputs
// (docs/modeling.md rule 7).
type Shards struct {
	Entity               string  `json:"entity"`
	Index                string  `json:"index"`
	AvgItemBytes         float64 `json:"avgItemBytes"`
	SampleItems          int     `json:"sampleItems,omitempty"` // items the average was measured on
	ItemsPerRCU          int     `json:"itemsPerRCU"`
	PartitionMaxReadRate int64   `json:"partitionMaxReadRate"` // items/s one partition serves
	ReadRate             int64   `json:"readRate"`             // declared peak items/s
	Raw                  int     `json:"raw"`                  // ReadRate / PartitionMaxReadRate, rounded up
	Count                int     `json:"count"`                // Raw padded for headroom
}

// CopyCost is one copy block (rule 2): how many items carry at least one of
// its attributes, i.e. how many items an update of the copied data touches.
type CopyCost struct {
	Entity     string   `json:"entity"`
	From       string   `json:"from"` // "authors", or "books > authors" for a nested copy
	Attributes []string `json:"attributes"`
	Items      int64    `json:"items"`
}

// Verify is what `migrate verify` found.
type Verify struct {
	Schema      string    `json:"schema"` // VerifySchema
	GeneratedAt time.Time `json:"generatedAt"`
	Mapping     string    `json:"mapping"`
	Table       Table     `json:"table"`
	Reads       Reads     `json:"reads"`
	// Sample is the fraction of keys checked (1 = all), chosen by a hash of
	// the key, so the same keys are checked on every run.
	Sample    float64        `json:"sample"`
	Identical bool           `json:"identical"`
	Summary   VerifySummary  `json:"summary"`
	Entities  []EntityVerify `json:"entities"`
	// Missing, Different and Unexpected list items in table key order, at
	// most MaxDetails each.
	Missing    []ItemRef    `json:"missing"`
	Different  []ItemChange `json:"different"`
	Unexpected []ItemRef    `json:"unexpected"`
	Problems   []Problem    `json:"problems"`
	MaxDetails int          `json:"maxDetails"`
}

// VerifySummary counts items by outcome, within the sample.
type VerifySummary struct {
	Expected   int64 `json:"expected"`   // items the mapping produces
	Actual     int64 `json:"actual"`     // items of the mapping's entities in the table
	Matching   int64 `json:"matching"`   // equal on both sides
	Missing    int64 `json:"missing"`    // expected, not in the table
	Different  int64 `json:"different"`  // in both, different
	Unexpected int64 `json:"unexpected"` // in the table, of an entity of the mapping, not expected
	Foreign    int64 `json:"foreign"`    // in the table, of other entities: ignored
	Problems   int64 `json:"problems"`
}

// EntityVerify compares one entity's items by count and content hash: the
// sum modulo 2^256 of the SHA-256 of each item's canonical JSON, which does
// not depend on order. Actual counts the table's items whose entity
// attribute names the entity.
type EntityVerify struct {
	Entity       string `json:"entity"`
	Expected     int64  `json:"expected"`
	Actual       int64  `json:"actual"`
	ExpectedHash string `json:"expectedHash"` // 64 hex digits
	ActualHash   string `json:"actualHash"`
	Match        bool   `json:"match"`
}

// WarmLoad is the load's duration at what the target table takes at once:
// a provisioned table's write capacity; an on-demand table's warm
// throughput (a new table's 4,000 write units/s when the table is still
// to be created or reports none), doubled every 30 minutes at most (DynamoDB
// takes twice the previous peak within 30 minutes, not more), up to its
// maximum; and no less than the largest item collection takes at 1,000
// write units/s per partition.
type WarmLoad struct {
	// Billing is "provisioned" or "onDemand".
	Billing string `json:"billing"`
	// NewTable says the table does not exist yet: a new on-demand table
	// (migrate run --create-table, without --warm-wcu) is assumed.
	NewTable bool `json:"newTable"`
	// WriteUnitsPerSecond is what the table takes at once.
	WriteUnitsPerSecond float64 `json:"writeUnitsPerSecond"`
	// MaxWriteUnitsPerSecond is an on-demand table's maximum, 0 for none.
	MaxWriteUnitsPerSecond float64 `json:"maxWriteUnitsPerSecond"`
	// HotPartitionSeconds is how long the largest item collection takes
	// alone at 1,000 write units/s.
	HotPartitionSeconds float64 `json:"hotPartitionSeconds"`
	EstimatedSeconds    float64 `json:"estimatedSeconds"`
}
