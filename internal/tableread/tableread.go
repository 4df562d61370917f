// Package tableread reads a DynamoDB table for comparison with what a
// mapping produces. It can only read: its consumer interfaces hold
// DescribeTable, Scan and BatchGetItem and nothing else, so no code path
// here can write.
//
// Read cost (DynamoDB bills reads in 4 KB units, eventually consistent
// reads at half a unit, strongly consistent at one):
//
//   - [Scan] reads the whole table once, whatever the projection: about
//     table size / 4 KB × 0.5 read units (× 1 consistent). Scan pages are
//     rounded up to 4 KB each, not each item.
//   - [Get] reads given keys with BatchGetItem, 100 keys a call: each item
//     costs ceil(item size / 4 KB) × 0.5 read units (× 1 consistent), and a
//     key that does not exist still costs 0.5 (1).
//
// Both ask DynamoDB for the consumed capacity and report it in [Stats].
package tableread

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// Describer is the call Describe makes.
type Describer interface {
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Scanner is the call Scan makes.
type Scanner interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Getter is the call Get makes.
type Getter interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

var (
	_ Describer = (*dynamodb.Client)(nil)
	_ Scanner   = (*dynamodb.Client)(nil)
	_ Getter    = (*dynamodb.Client)(nil)
)

// MaxGetKeys is the most keys one BatchGetItem call takes.
const MaxGetKeys = 100

// Stats counts the reads made.
type Stats struct {
	Calls     int64   // requests sent, retries included
	Items     int64   // items returned
	ReadUnits float64 // consumed capacity DynamoDB reported (0 if it reports none)
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Calls += o.Calls
	s.Items += o.Items
	s.ReadUnits += o.ReadUnits
}

// Describe returns the table's description, or nil (and no error) when the
// table does not exist.
func Describe(ctx context.Context, c Describer, table string) (*types.TableDescription, error) {
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	return out.Table, nil
}

// KeyNames returns the attribute names of a table's partition and sort key
// ("" when it has none).
func KeyNames(t *types.TableDescription) (pk, sk string) {
	return KeySchemaNames(t.KeySchema)
}

// KeySchemaNames returns the partition and sort key attribute names of a
// table's or an index's key schema ("" when it has no sort key).
func KeySchemaNames(ks []types.KeySchemaElement) (pk, sk string) {
	for _, k := range ks {
		switch k.KeyType {
		case types.KeyTypeHash:
			pk = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			sk = aws.ToString(k.AttributeName)
		}
	}
	return pk, sk
}

// ScanConfig configures Scan.
type ScanConfig struct {
	Table string
	// Segments is the number of parallel scan segments. Default 4.
	Segments int
	// Consistent asks for strongly consistent reads (twice the read units).
	Consistent bool
	// Limit caps the items of one page (0: DynamoDB's 1 MB pages).
	Limit int32
}

// Scan reads every item of the table with a parallel Scan and calls visit
// for each, from one goroutine at a time, in no particular order. It stops
// at visit's first error.
func Scan(ctx context.Context, c Scanner, cfg ScanConfig, visit func(map[string]types.AttributeValue) error) (Stats, error) {
	segments := max(cfg.Segments, 1)
	if cfg.Segments == 0 {
		segments = 4
	}
	g, gctx := errgroup.WithContext(ctx)
	pages := make(chan []map[string]types.AttributeValue, segments)
	var mu sync.Mutex
	var st Stats
	for seg := range segments {
		g.Go(func() error {
			in := &dynamodb.ScanInput{
				TableName:              &cfg.Table,
				ConsistentRead:         aws.Bool(cfg.Consistent),
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			}
			if segments > 1 {
				in.Segment, in.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(segments))
			}
			if cfg.Limit > 0 {
				in.Limit = aws.Int32(cfg.Limit)
			}
			p := dynamodb.NewScanPaginator(c, in)
			for p.HasMorePages() {
				out, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("scan %s segment %d: %w", cfg.Table, seg, err)
				}
				mu.Lock()
				st.Calls++
				st.Items += int64(len(out.Items))
				st.ReadUnits += consumed(out.ConsumedCapacity)
				mu.Unlock()
				select {
				case pages <- out.Items:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	var visitErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for page := range pages {
			if visitErr != nil {
				continue // drain so that senders finish
			}
			for _, it := range page {
				if err := visit(it); err != nil {
					visitErr = err
					break
				}
			}
		}
	}()
	err := g.Wait()
	close(pages)
	<-done
	if visitErr != nil {
		return st, visitErr
	}
	return st, err
}

func consumed(cc *types.ConsumedCapacity) float64 {
	if cc == nil || cc.CapacityUnits == nil {
		return 0
	}
	return *cc.CapacityUnits
}

// GetConfig configures Get.
type GetConfig struct {
	Table string
	// Consistent asks for strongly consistent reads (twice the read units).
	Consistent bool
	// MaxAttempts bounds the calls made for one chunk while DynamoDB keeps
	// returning UnprocessedKeys. Default 12.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the full-jitter backoff between those
	// calls. Defaults 50ms and 5s.
	BaseDelay, MaxDelay time.Duration
}

// ErrUnprocessed is returned by Get when keys were still unprocessed after
// MaxAttempts calls.
var ErrUnprocessed = errors.New("tableread: keys still unprocessed after retries")

// Get fetches the items with the given keys (at most MaxGetKeys, no
// duplicates), re-requesting UnprocessedKeys with jittered backoff. Keys
// that do not exist are simply absent from the result, which is in no
// particular order.
func Get(ctx context.Context, c Getter, cfg GetConfig, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, Stats, error) {
	var st Stats
	if len(keys) == 0 {
		return nil, st, nil
	}
	if len(keys) > MaxGetKeys {
		return nil, st, fmt.Errorf("tableread: %d keys in one BatchGetItem, at most %d", len(keys), MaxGetKeys)
	}
	attempts := cfg.MaxAttempts
	if attempts == 0 {
		attempts = 12
	}
	base, maxDelay := cfg.BaseDelay, cfg.MaxDelay
	if base == 0 {
		base = 50 * time.Millisecond
	}
	if maxDelay == 0 {
		maxDelay = 5 * time.Second
	}
	var items []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{cfg.Table: {Keys: keys, ConsistentRead: aws.Bool(cfg.Consistent)}}
	for attempt := 1; ; attempt++ {
		out, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			return nil, st, fmt.Errorf("batch get from %s: %w", cfg.Table, err)
		}
		st.Calls++
		for _, cc := range out.ConsumedCapacity {
			st.ReadUnits += consumed(&cc)
		}
		got := out.Responses[cfg.Table]
		st.Items += int64(len(got))
		items = append(items, got...)
		left, ok := out.UnprocessedKeys[cfg.Table]
		if !ok || len(left.Keys) == 0 {
			return items, st, nil
		}
		if attempt >= attempts {
			return nil, st, fmt.Errorf("%w: %d keys of %s after %d calls", ErrUnprocessed, len(left.Keys), cfg.Table, attempt)
		}
		req = map[string]types.KeysAndAttributes{cfg.Table: left}
		d := min(maxDelay, base<<min(attempt-1, 20))
		t := time.NewTimer(rand.N(d + 1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, st, ctx.Err()
		}
	}
}
