package load

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Index is a secondary index of the target table: global, or local (Local:
// its PartitionKey is the table's).
type Index struct {
	Name         string
	PartitionKey string
	SortKey      string // may be ""
	Local        bool
	// PartitionKeyType and SortKeyType are the key attributes' types;
	// "" means S.
	PartitionKeyType, SortKeyType types.ScalarAttributeType
	// Projection is ALL ("" too), KEYS_ONLY or INCLUDE with
	// NonKeyAttributes. It sets what the index stores and what a write to
	// it costs.
	Projection       types.ProjectionType
	NonKeyAttributes []string
}

// Values of Config.OnDuplicate.
const (
	OnDuplicateFail = "fail" // a duplicate key is a row error naming both origins (default)
	OnDuplicateSkip = "skip" // a confirmed duplicate is skipped and counted; an unconfirmed one is still an error
)

// Config configures a Writer. The zero value of every field but Table and
// PartitionKey means its documented default.
type Config struct {
	Table        string  // target table name; required
	PartitionKey string  // attribute name of the table's partition key; required
	SortKey      string  // attribute name of the table's sort key; may be ""
	Indexes      []Index // secondary indexes: for write-unit accounting, key checks and EnsureTable
	// PartitionKeyType and SortKeyType are the table's key types; "" means S.
	PartitionKeyType, SortKeyType types.ScalarAttributeType

	// Concurrency is the number of BatchWriteItem calls in flight. Default
	// DefaultConcurrency.
	Concurrency int
	// SDKMiddleware sends every call of a client NewClient built through
	// the SDK's whole middleware stack, as the first call always is, instead
	// of repeating that call's request without it (see "Request bodies" in
	// the package documentation). Slower; for diagnosing the direct calls.
	// A client built any other way (your own *dynamodb.Client, with its
	// middleware) always goes through the SDK whole.
	SDKMiddleware bool
	// MaxBatchElapsed is how long a batch may take from when it is first
	// sent: retries, backoff, waiting for the rate limiter and the calls
	// themselves all count. Past it Write fails with an error wrapping
	// ErrBatchTimeout. Default 2m.
	MaxBatchElapsed time.Duration
	// CallTimeout bounds each BatchWriteItem call: a call with no complete
	// answer by then is abandoned and the batch sent again, within
	// MaxBatchElapsed (puts and deletes are idempotent). Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// RetryBaseDelay and RetryMaxDelay shape the backoff between retries of a
	// batch: a full-jitter sleep in [0, min(RetryMaxDelay, RetryBaseDelay·2ⁿ⁻¹)]
	// before the n-th retry. Defaults 50ms and 250ms: the rate limiter, not
	// the backoff, paces the writer when DynamoDB is short of capacity (every
	// re-send waits for it), so the backoff only spaces retries out; a longer
	// ceiling stretches the last unlucky batches of a run (under 30% random
	// faults, a 5s ceiling made the last 1% of the items take longer than
	// the other 99%).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// StopGrace is how long calls in flight may go on once Write's context
	// ends (the first Ctrl-C): no batch is started or retried after it,
	// and a call still out after StopGrace is abandoned, its items left
	// unacknowledged. Default 5s.
	StopGrace time.Duration

	// MaxWCU caps write units per second (table plus indexes, see
	// ItemWriteUnits). 0 means no cap: the writer starts at Capacity, or
	// unlimited when that is unknown, and the rate limiter paces it from
	// what DynamoDB accepts.
	MaxWCU float64
	// Capacity is what the table takes when the write begins (CapacityOf
	// its description): the rate the writer starts at, and for an
	// on-demand table the doubling rule it keeps to. The zero value means
	// unknown. The writer's units include index writes, which the table's
	// capacity does not count, so the start is on the safe side.
	Capacity TableCapacity
	// WarmWCU, when positive, pre-warms the table EnsureTable creates for
	// that many write units per second (CreateTable's WarmThroughput).
	WarmWCU int64
	// MinWCU is the floor below which throttling never pushes the rate.
	// Default 25, at most MaxWCU.
	MinWCU float64

	// OnDuplicate is OnDuplicateFail (default) or OnDuplicateSkip.
	OnDuplicate string
	// RecentKeys is how many recent keys (with origins) are kept to find
	// duplicates and name both origins. Default 65536.
	RecentKeys int
	// UniqueEntities names entities (Origin.Entity) whose items are known
	// to have keys unique within the run, e.g. proven from the source's
	// unique keys (see mapping.ProveUniqueKeys): the writer skips the
	// duplicate check for them.
	UniqueEntities []string
	// MaxItemErrors is the number of row errors Write tolerates before it
	// stops; 0 (default) stops at the first, -1 never stops. Write returns
	// every row error it collected in any case.
	MaxItemErrors int

	// Window is the number of items buffered to interleave partition keys
	// across batches. Default 4096. WindowBytes bounds the same buffer in
	// request bytes. Default 64 MB.
	Window      int
	WindowBytes int
	// Linger is how long the writer waits for more input before it sends a
	// partly filled window (between Linger and twice that); and an item
	// never waits in a window that neither fills nor idles for much more
	// than 10 × Linger. Default 100ms.
	Linger time.Duration

	// Logger receives rate changes (Info), retries (Debug) and give-ups
	// (Error). Default: discard.
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultMaxBatchElapsed = 2 * time.Minute
	DefaultRetryBaseDelay  = 50 * time.Millisecond
	DefaultRetryMaxDelay   = 250 * time.Millisecond
	DefaultStopGrace       = 5 * time.Second
	DefaultMinWCU          = 25
	DefaultRecentKeys      = 1 << 16
	DefaultWindow          = 4096
	DefaultWindowBytes     = 64 << 20
	DefaultLinger          = 100 * time.Millisecond
)

// DefaultConcurrency is 32 calls in flight per processor the Go runtime
// uses (GOMAXPROCS), at least 8 and at most 128: a call to DynamoDB takes
// about 10 ms, during which a processor can encode and check far more
// than one call's 25 items. Measured on 2 processors against an endpoint
// answering after 10 ms (BenchmarkConcurrency, 1M items): 8 calls in
// flight wrote 17,100 items/s, 16 32,700, 32 59,400-60,300, 64
// 87,800-90,400 and 128 104,500, nearing the 135,000 items/s the same
// run reaches without the latency; peak memory stayed at 138-142 MiB.
var DefaultConcurrency = min(128, max(8, 32*runtime.GOMAXPROCS(0)))

// WithDefaults returns c with every unset field set to its default.
func (c Config) WithDefaults() Config {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.MaxBatchElapsed = cmp.Or(c.MaxBatchElapsed, DefaultMaxBatchElapsed)
	c.CallTimeout = cmp.Or(c.CallTimeout, DefaultCallTimeout)
	c.RetryBaseDelay = cmp.Or(c.RetryBaseDelay, DefaultRetryBaseDelay)
	c.RetryMaxDelay = cmp.Or(c.RetryMaxDelay, DefaultRetryMaxDelay)
	c.StopGrace = cmp.Or(c.StopGrace, DefaultStopGrace)
	c.MinWCU = cmp.Or(c.MinWCU, DefaultMinWCU)
	if c.MaxWCU > 0 && c.MinWCU > c.MaxWCU {
		c.MinWCU = c.MaxWCU
	}
	c.OnDuplicate = cmp.Or(c.OnDuplicate, OnDuplicateFail)
	c.RecentKeys = cmp.Or(c.RecentKeys, DefaultRecentKeys)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.WindowBytes = cmp.Or(c.WindowBytes, DefaultWindowBytes)
	c.Linger = cmp.Or(c.Linger, DefaultLinger)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every problem with c at once. Call it on WithDefaults().
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("load: "+format, args...)) }
	if c.Table == "" {
		bad("table name is required")
	}
	if c.PartitionKey == "" {
		bad("partition key attribute name is required")
	}
	if c.SortKey != "" && c.SortKey == c.PartitionKey {
		bad("sort key %q is the same attribute as the partition key", c.SortKey)
	}
	// One attribute has one type, whichever keys it serves.
	attrTypes := map[string]types.ScalarAttributeType{}
	typed := func(name string, t types.ScalarAttributeType) {
		if name == "" {
			return
		}
		if t == "" {
			t = types.ScalarAttributeTypeS
		}
		if prev, ok := attrTypes[name]; ok && prev != t {
			bad("key attribute %q is used as %s and as %s", name, prev, t)
		}
		attrTypes[name] = t
	}
	typed(c.PartitionKey, c.PartitionKeyType)
	typed(c.SortKey, c.SortKeyType)
	for _, ix := range c.Indexes {
		typed(ix.PartitionKey, ix.PartitionKeyType)
		typed(ix.SortKey, ix.SortKeyType)
	}
	names := map[string]bool{}
	for i, ix := range c.Indexes {
		switch {
		case ix.Name == "":
			bad("index %d has no name", i)
		case names[ix.Name]:
			bad("index %q is declared twice", ix.Name)
		}
		names[ix.Name] = true
		if ix.PartitionKey == "" {
			bad("index %q has no partition key", ix.Name)
		}
		if ix.Local && (ix.PartitionKey != c.PartitionKey || ix.SortKey == "" || c.SortKey == "") {
			bad("local index %q must share the table's partition key %q and have a sort key, on a table with a sort key", ix.Name, c.PartitionKey)
		}
		switch ix.Projection {
		case "", types.ProjectionTypeAll, types.ProjectionTypeKeysOnly:
			if len(ix.NonKeyAttributes) > 0 {
				bad("index %q: non-key attributes need projection INCLUDE", ix.Name)
			}
		case types.ProjectionTypeInclude:
			if len(ix.NonKeyAttributes) == 0 {
				bad("index %q: projection INCLUDE needs non-key attributes", ix.Name)
			}
		default:
			bad("index %q: unknown projection %q", ix.Name, ix.Projection)
		}
		if ix.SortKey != "" && ix.SortKey == ix.PartitionKey {
			bad("index %q: sort key %q is the same attribute as its partition key", ix.Name, ix.SortKey)
		}
	}
	if c.Concurrency < 1 {
		bad("concurrency must be at least 1, got %d", c.Concurrency)
	}
	if c.MaxBatchElapsed <= 0 {
		bad("max batch elapsed must be positive, got %v", c.MaxBatchElapsed)
	}
	if c.CallTimeout <= 0 {
		bad("call timeout must be positive, got %v", c.CallTimeout)
	}
	if c.RetryBaseDelay <= 0 || c.RetryMaxDelay < c.RetryBaseDelay {
		bad("retry delays must satisfy 0 < base (%v) <= max (%v)", c.RetryBaseDelay, c.RetryMaxDelay)
	}
	if c.MaxWCU < 0 {
		bad("max WCU must not be negative, got %v", c.MaxWCU)
	}
	if c.Capacity.WCU < 0 || c.Capacity.MaxWCU < 0 {
		bad("the table's capacity must not be negative, got %+v", c.Capacity)
	}
	if c.WarmWCU < 0 {
		bad("warm WCU must not be negative, got %v", c.WarmWCU)
	}
	if c.MinWCU <= 0 {
		bad("min WCU must be positive, got %v", c.MinWCU)
	}
	if c.OnDuplicate != OnDuplicateFail && c.OnDuplicate != OnDuplicateSkip {
		bad("on-duplicate must be %q or %q, got %q", OnDuplicateFail, OnDuplicateSkip, c.OnDuplicate)
	}
	if c.RecentKeys < 1 {
		bad("recent keys must be at least 1, got %d", c.RecentKeys)
	}
	if c.MaxItemErrors < -1 {
		bad("max item errors must be -1 (unlimited) or more, got %d", c.MaxItemErrors)
	}
	if c.Window < MaxBatchItems {
		bad("window must hold at least %d items, got %d", MaxBatchItems, c.Window)
	}
	if c.WindowBytes < MaxBatchBytes {
		bad("window bytes must be at least %d, got %d", MaxBatchBytes, c.WindowBytes)
	}
	if c.Linger <= 0 {
		bad("linger must be positive, got %v", c.Linger)
	}
	return errors.Join(errs...)
}
