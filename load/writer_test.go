package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/pgdynamo/migrate/contract"
)

func TestWriteChunksOf25(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.Concurrency = 4 }))
	var acks ackLog
	items := acks.wrap(t, b.fake, numbered(1003, 7))

	stats, err := b.writer.Write(context.Background(), feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	calls := b.fake.allCalls()
	full := 0
	for i, c := range calls {
		if len(c) > MaxBatchItems {
			t.Errorf("call %d has %d requests", i, len(c))
		}
		if len(c) == MaxBatchItems {
			full++
		}
	}
	if want := 1003 / 25; full < want-2 {
		t.Errorf("%d full batches of %d calls, want about %d", full, len(calls), want)
	}
	if len(b.fake.stored) != 1003 {
		t.Errorf("stored %d distinct items, want 1003", len(b.fake.stored))
	}
	if stats.Total.Written != 1003 || stats.Entities["thing"].Written != 1003 {
		t.Errorf("stats = %+v", stats)
	}
	if stats.Calls != int64(len(calls)) {
		t.Errorf("stats.Calls = %d, fake saw %d", stats.Calls, len(calls))
	}
	if got := acks.total(); got != 1003 {
		t.Errorf("%d acks, want 1003", got)
	}
	acks.check(t)
}

func TestWriteSplitsAt16MB(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// 300,000 control bytes: 300 KB by DynamoDB's sizing, about 1.8 MB as
	// JSON, so 25 of them would make a 45 MB request.
	blob := strings.Repeat("\x01", 300_000)
	var items []contract.Item
	for i := range 40 {
		it := item(fmt.Sprintf("P#%d", i), "S")
		it.Attrs["blob"] = &types.AttributeValueMemberS{Value: blob}
		items = append(items, it)
	}
	if _, err := b.writer.Write(context.Background(), feed(items...)); err != nil {
		t.Fatal(err)
	}
	calls := b.fake.allCalls()
	if len(calls) < 5 {
		t.Errorf("%d calls for 40 items of 1.8 MB, want at least 5", len(calls))
	}
	for i, c := range calls {
		total := len(`{"RequestItems":{"t":[]}}`)
		for _, r := range c {
			req, _, err := appendPutRequest(nil, r.PutRequest.Item)
			if err != nil {
				t.Fatal(err)
			}
			total += len(req) + 1
		}
		if total > MaxBatchBytes {
			t.Errorf("call %d: %d requests, %d bytes > %d", i, len(c), total, MaxBatchBytes)
		}
	}
	if len(b.fake.stored) != 40 {
		t.Errorf("stored %d, want 40", len(b.fake.stored))
	}
}

func TestWriteRedrivesUnprocessedItems(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.MinWCU = 1e6 }))
	// The first 30 calls return every other request unprocessed.
	b.fake.batchWriteItem = func(_ context.Context, n int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
		if n >= 30 {
			return nil, nil
		}
		var un []types.WriteRequest
		for i, r := range reqs {
			if i%2 == 0 {
				un = append(un, r)
			}
		}
		return un, nil
	}
	var acks ackLog
	items := acks.wrap(t, b.fake, numbered(500, 3))
	stats, err := b.writer.Write(context.Background(), feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.fake.stored) != 500 {
		t.Errorf("stored %d, want 500", len(b.fake.stored))
	}
	for k, n := range b.fake.stored {
		if n != 1 {
			t.Errorf("%s stored %d times", k, n)
		}
	}
	if stats.Total.Written != 500 || stats.Total.Throttled == 0 || stats.Total.Retries == 0 || stats.ThrottledCalls == 0 {
		t.Errorf("stats = %+v", stats.Total)
	}
	if stats.Total.Retries != stats.Total.Throttled {
		t.Errorf("retries %d != throttled items %d: every unprocessed item is re-sent once per return", stats.Total.Retries, stats.Total.Throttled)
	}
	if got := acks.total(); got != 500 {
		t.Errorf("%d acks, want 500", got)
	}
	acks.check(t)
}

func TestWriteRetriesThrottlingAndServerErrors(t *testing.T) {
	t.Parallel()
	failures := []error{
		&types.ProvisionedThroughputExceededException{Message: aws.String("slow down")},
		&types.ThrottlingException{Message: aws.String("slow down")},
		&types.RequestLimitExceeded{Message: aws.String("account limit")},
		&types.InternalServerError{Message: aws.String("oops")},
		&smithy.GenericAPIError{Code: "ServiceUnavailable", Message: "try later", Fault: smithy.FaultServer},
	}
	b := setup(t, withConfig(func(c *Config) { c.MinWCU = 1e6; c.Concurrency = 1 }))
	b.fake.batchWriteItem = func(_ context.Context, n int, _ []types.WriteRequest) ([]types.WriteRequest, error) {
		if n < len(failures) {
			return nil, failures[n]
		}
		return nil, nil
	}
	b.writer.reached.Store(true)
	var acks ackLog
	items := acks.wrap(t, b.fake, numbered(60, 1))
	stats, err := b.writer.Write(context.Background(), feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.fake.stored) != 60 {
		t.Errorf("stored %d, want 60", len(b.fake.stored))
	}
	if stats.ThrottledCalls != 3 {
		t.Errorf("ThrottledCalls = %d, want 3", stats.ThrottledCalls)
	}
	if stats.Calls != int64(len(failures))+3 {
		t.Errorf("Calls = %d, want %d", stats.Calls, len(failures)+3)
	}
	acks.check(t)
}

func TestWriteValidationErrorNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.MaxItemErrors = -1; c.Concurrency = 1 }))
	bad := "P#00007|S#00000"
	var badSends atomic.Int32
	b.fake.batchWriteItem = func(_ context.Context, _ int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
		for _, r := range reqs {
			if fakeKey(r.PutRequest.Item) == bad {
				badSends.Add(1)
				return nil, &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid: Type mismatch"}
			}
		}
		return nil, nil
	}
	var acks ackLog
	items := acks.wrap(t, b.fake, numbered(100, 1))
	stats, err := b.writer.Write(context.Background(), feed(items...))

	var ie *contract.ItemError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *ItemError", err)
	}
	if ie.Origin.SourceKey != "id=P#00007/S#00000" || !strings.Contains(ie.Reason, "Type mismatch") {
		t.Errorf("item error = %v", ie)
	}
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
		t.Errorf("item error does not unwrap to the API error: %v", err)
	}
	if n := badSends.Load(); n != 2 {
		t.Errorf("bad item sent %d times, want 2 (its batch, then alone)", n)
	}
	if len(b.fake.stored) != 99 || b.fake.stored[bad] != 0 {
		t.Errorf("stored %d items", len(b.fake.stored))
	}
	if stats.ItemErrors != 1 || stats.Total.Written != 99 {
		t.Errorf("stats = %+v", stats)
	}
	if acks.total() != 99 {
		t.Errorf("%d acks, want 99", acks.total())
	}
	acks.check(t)
}

func TestWriteStopsAtFirstItemErrorByDefault(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.batchWriteItem = func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error) {
		return nil, &smithy.GenericAPIError{Code: "ValidationException", Message: "The provided key element does not match the schema"}
	}
	_, err := b.writer.Write(context.Background(), feed(numbered(10, 1)...))
	var ie *contract.ItemError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *ItemError", err)
	}
	if !strings.Contains(err.Error(), "does not match the schema") {
		t.Errorf("err = %v", err)
	}
	if len(b.fake.stored) != 0 {
		t.Errorf("stored %d", len(b.fake.stored))
	}
}

func TestWriteCancelStopsPromptly(t *testing.T) {
	t.Parallel()
	tests := map[string]func(ctx context.Context, n int, reqs []types.WriteRequest) ([]types.WriteRequest, error){
		"blocked call": func(ctx context.Context, n int, _ []types.WriteRequest) ([]types.WriteRequest, error) {
			if n < 2 {
				return nil, nil
			}
			<-ctx.Done()
			return nil, &smithy.CanceledError{Err: ctx.Err()}
		},
		"backoff sleep": func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error) {
			return nil, &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
		},
		// Calls in flight at the cancel finish and acknowledge their
		// items; no batch is sent after it.
		"slow calls": func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error) {
			time.Sleep(300 * time.Millisecond)
			return nil, nil
		},
	}
	for name, answer := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, withConfig(func(c *Config) {
				c.Concurrency = 2
				c.RetryBaseDelay = 10 * time.Second
				c.RetryMaxDelay = time.Minute
				c.MinWCU = 1e6
				c.StopGrace = time.Second // a blocked call is abandoned after it
			}))
			b.fake.batchWriteItem = answer
			var acks ackLog
			items := acks.wrap(t, b.fake, numbered(200, 1))
			ch := make(chan contract.Item) // never closed: Write must stop on ctx alone
			go func() {
				for _, it := range items {
					ch <- it
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := b.writer.Write(ctx, ch)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Write took %v after cancel", d)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if got, stored := acks.total(), len(b.fake.stored); got != stored {
				t.Errorf("%d acks for %d stored items", got, stored)
			}
			if name == "slow calls" {
				// Two calls were in flight at the cancel (Concurrency 2),
				// none started after it.
				if got := len(b.fake.stored); got == 0 || got > 4*MaxBatchItems {
					t.Errorf("%d items stored: want the calls in flight at the cancel, and no later batch", got)
				}
			}
			acks.check(t)
		})
	}
}

func TestWriteMaxBatchElapsed(t *testing.T) {
	t.Parallel()
	tests := map[string]func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error){
		"throttled": func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error) {
			return nil, &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
		},
		"always unprocessed": func(_ context.Context, _ int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
			return reqs, nil
		},
	}
	for name, answer := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, withFakeClock(), withConfig(func(c *Config) {
				c.RetryBaseDelay = 50 * time.Millisecond
				c.RetryMaxDelay = 5 * time.Second
			}))
			b.fake.batchWriteItem = answer
			var acks ackLog
			items := acks.wrap(t, b.fake, numbered(10, 1))
			start := b.clock.Now()
			stats, err := b.writer.Write(context.Background(), feed(items...))
			if !errors.Is(err, ErrBatchTimeout) {
				t.Fatalf("err = %v, want ErrBatchTimeout", err)
			}
			for _, want := range []string{"2m0s", "10 items", "things row id=P#0000", fmt.Sprintf("in %d calls", stats.Calls)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			// The library's message names no Go field (a CLI user cannot
			// set one; the CLI adds its flags).
			if strings.Contains(err.Error(), "MaxBatchElapsed") || stats.Calls < 2 {
				t.Errorf("error %q after %d calls", err, stats.Calls)
			}
			if elapsed := b.clock.Now().Sub(start); elapsed < 2*time.Minute {
				t.Errorf("gave up after %v of retrying", elapsed)
			}
			if stats.Total.Throttled == 0 || stats.Total.Written != 0 {
				t.Errorf("stats = %+v", stats.Total)
			}
			if acks.total() != 0 {
				t.Errorf("%d acks, want none", acks.total())
			}
			for _, d := range b.clock.slept {
				if d > 5*time.Second {
					t.Errorf("slept %v, more than RetryMaxDelay", d)
				}
			}
		})
	}
}

// MaxBatchElapsed is wall time since the batch was first sent: waiting for
// the rate limiter counts too (a run with 15s once gave up after 77 s).
func TestWriteMaxBatchElapsedCountsRateWaits(t *testing.T) {
	t.Parallel()
	const limit = 15 * time.Second
	b := setup(t, withFakeClock(), withConfig(func(c *Config) {
		c.MaxBatchElapsed = limit
		c.MaxWCU, c.MinWCU = 25, 1 // a throttled table soon paces the writer at 1 WCU/s: a 25-unit batch waits 25 s
		c.RetryBaseDelay, c.RetryMaxDelay = 50*time.Millisecond, time.Second
	}))
	var mu sync.Mutex
	var first time.Time
	b.fake.batchWriteItem = func(context.Context, int, []types.WriteRequest) ([]types.WriteRequest, error) {
		mu.Lock()
		if first.IsZero() {
			first = b.clock.Now()
		}
		mu.Unlock()
		return nil, &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	}
	_, err := b.writer.Write(context.Background(), feed(numbered(25, 25)...))
	if !errors.Is(err, ErrBatchTimeout) {
		t.Fatalf("err = %v, want ErrBatchTimeout", err)
	}
	mu.Lock()
	elapsed := b.clock.Now().Sub(first)
	mu.Unlock()
	if elapsed > limit {
		t.Errorf("gave up %v after the batch was first sent, more than MaxBatchElapsed %v", elapsed, limit)
	}
	if elapsed < limit-time.Second {
		t.Errorf("gave up after %v, well before MaxBatchElapsed %v", elapsed, limit)
	}
	if !strings.Contains(err.Error(), "write rate") {
		t.Errorf("error does not say the write rate held the batch back: %v", err)
	}
}

func TestWriteAckWithheldOnError(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.Concurrency = 3 }))
	b.fake.batchWriteItem = func(_ context.Context, n int, _ []types.WriteRequest) ([]types.WriteRequest, error) {
		if n >= 5 {
			return nil, &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not allowed"}
		}
		return nil, nil
	}
	var acks ackLog
	items := acks.wrap(t, b.fake, numbered(1000, 2))
	_, err := b.writer.Write(context.Background(), feed(items...))
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Fatalf("err = %v", err)
	}
	if acks.total() != len(b.fake.stored) || acks.total() > 5*25 {
		t.Errorf("%d acks, %d stored", acks.total(), len(b.fake.stored))
	}
	acks.check(t)
}

func TestWriteDuplicates(t *testing.T) {
	t.Parallel()
	dup := item("P#00003", "S#00000")
	dup.Origin = contract.Origin{Entity: "other", Table: "others", SourceKey: "other_id=9"}

	t.Run("across batches names both origins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.Window = 25; c.MaxItemErrors = -1 }))
		items := append(numbered(200, 1), dup)
		_, err := b.writer.Write(context.Background(), feed(items...))
		if !errors.Is(err, ErrDuplicateKey) {
			t.Fatalf("err = %v, want ErrDuplicateKey", err)
		}
		for _, want := range []string{"others row other_id=9 (entity other)", "things row id=P#00003/S#00000 (entity thing)", `PK="P#00003" SK="S#00000"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		if n := b.fake.stored[fakeKey(dup.Attrs)]; n != 1 || len(b.fake.stored) != 200 {
			t.Errorf("the first item was written %d times, %d items stored", n, len(b.fake.stored))
		}
	})
	t.Run("within one batch", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.writer.Write(context.Background(), feed(item("A", "1"), item("A", "2"), dup, item("A", "3"), item("P#00003", "S#00000")))
		if !errors.Is(err, ErrDuplicateKey) {
			t.Fatalf("err = %v, want ErrDuplicateKey", err)
		}
	})
	t.Run("numbers equal as numbers", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.SortKey = ""; c.Indexes = nil }))
		a := contract.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberN{Value: "1.50"}}}
		c := contract.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberN{Value: "15e-1"}}}
		_, err := b.writer.Write(context.Background(), feed(a, c))
		if !errors.Is(err, ErrDuplicateKey) {
			t.Fatalf("err = %v, want ErrDuplicateKey", err)
		}
	})
	t.Run("beyond the recent keys it is written", func(t *testing.T) {
		// The writer's memory does not grow with the table: a duplicate of
		// a key older than RecentKeys is the caller's to find (package
		// engine checks every key it could not prove unique, on disk).
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.RecentKeys = 10 }))
		if _, err := b.writer.Write(context.Background(), feed(append(numbered(200, 1), dup)...)); err != nil {
			t.Fatalf("err = %v", err)
		}
		if n := b.fake.stored[fakeKey(dup.Attrs)]; n != 2 {
			t.Errorf("the key was written %d times, want 2", n)
		}
	})
	t.Run("unique entities are not checked", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.UniqueEntities = []string{"thing", "other"}; c.Window = 25 }))
		if _, err := b.writer.Write(context.Background(), feed(append(numbered(200, 1), dup)...)); err != nil {
			t.Fatalf("err = %v", err)
		}
		if n := b.fake.stored[fakeKey(dup.Attrs)]; n != 2 {
			t.Errorf("the key was written %d times, want 2", n)
		}
	})
	t.Run("across Write calls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.writer.Write(context.Background(), feed(numbered(10, 1)...)); err != nil {
			t.Fatal(err)
		}
		_, err := b.writer.Write(context.Background(), feed(dup))
		if !errors.Is(err, ErrDuplicateKey) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("skip", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.OnDuplicate = OnDuplicateSkip }))
		var acked atomic.Bool
		d := dup
		d.Ack = func() { acked.Store(true) }
		stats, err := b.writer.Write(context.Background(), feed(append(numbered(200, 1), d)...))
		if err != nil {
			t.Fatal(err)
		}
		if stats.Duplicates != 1 || stats.Total.Written != 200 || !acked.Load() {
			t.Errorf("stats = %+v, skipped item acked: %v", stats, acked.Load())
		}
	})
}

func TestWriteRowErrors(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	mod := func(f func(map[string]types.AttributeValue)) contract.Item {
		it := item("P", "S")
		f(it.Attrs)
		return it
	}
	tests := []struct {
		name   string
		item   contract.Item
		want   error
		reason string
	}{
		{"oversize item", mod(func(a map[string]types.AttributeValue) { a["blob"] = s(strings.Repeat("x", MaxItemSize)) }), ErrItemTooLarge, "over DynamoDB's 400 KB"},
		{"just fits", mod(func(a map[string]types.AttributeValue) {
			a["blob"] = s(strings.Repeat("x", MaxItemSize-ItemSize(a)-4))
		}), nil, ""},
		{"long partition key", mod(func(a map[string]types.AttributeValue) { a["PK"] = s(strings.Repeat("p", 2049)) }), ErrKeyTooLong, "2049 bytes"},
		{"longest partition key", mod(func(a map[string]types.AttributeValue) { a["PK"] = s(strings.Repeat("p", 2048)) }), nil, ""},
		{"long sort key", mod(func(a map[string]types.AttributeValue) { a["SK"] = s(strings.Repeat("s", 1025)) }), ErrKeyTooLong, "sort key"},
		{"long binary sort key", mod(func(a map[string]types.AttributeValue) {
			a["SK"] = &types.AttributeValueMemberB{Value: make([]byte, 1025)}
		}), ErrKeyTooLong, "sort key"},
		{"empty partition key", mod(func(a map[string]types.AttributeValue) { a["PK"] = s("") }), ErrEmptyKey, `"PK" is empty`},
		{"missing sort key", mod(func(a map[string]types.AttributeValue) { delete(a, "SK") }), ErrInvalidKey, `"SK" is missing`},
		{"non-scalar key", mod(func(a map[string]types.AttributeValue) { a["PK"] = &types.AttributeValueMemberBOOL{Value: true} }), ErrInvalidKey, "not BOOL"},
		{"empty GSI key", mod(func(a map[string]types.AttributeValue) { a["GSI1PK"] = s("") }), ErrEmptyKey, "index GSI1 partition key"},
		{"long GSI sort key", mod(func(a map[string]types.AttributeValue) { a["GSI1SK"] = s(strings.Repeat("g", 1025)) }), ErrKeyTooLong, "index GSI1 sort key"},
		{"no attributes", contract.Item{Origin: contract.Origin{Table: "things"}}, ErrInvalidKey, "no attributes"},
		{"nil attribute", mod(func(a map[string]types.AttributeValue) { a["x"] = nil }), ErrInvalidItem, `"x" has no value`},
		{"typed nil attribute", mod(func(a map[string]types.AttributeValue) { a["x"] = (*types.AttributeValueMemberS)(nil) }), ErrInvalidItem, `"x" has no value`},
		{"nil nested attribute", mod(func(a map[string]types.AttributeValue) {
			a["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberBOOL{}, nil}},
			}}
		}), ErrInvalidItem, `"m.l[1]" has no value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			var acked atomic.Bool
			it := tt.item
			it.Ack = func() { acked.Store(true) }
			stats, err := b.writer.Write(context.Background(), feed(it))
			if tt.want == nil {
				if err != nil || !acked.Load() {
					t.Fatalf("err = %v, acked = %v", err, acked.Load())
				}
				return
			}
			var ie *contract.ItemError
			if !errors.As(err, &ie) || !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want an *ItemError wrapping %v", err, tt.want)
			}
			if !strings.Contains(ie.Reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", ie.Reason, tt.reason)
			}
			if ie.Origin != it.Origin {
				t.Errorf("origin = %v", ie.Origin)
			}
			if len(b.fake.allCalls()) != 0 || acked.Load() || stats.ItemErrors != 1 {
				t.Errorf("a row error was sent or acked: calls %d, acked %v, stats %+v", len(b.fake.allCalls()), acked.Load(), stats)
			}
		})
	}
}

func TestWriteCollectsRowErrorsUpToLimit(t *testing.T) {
	t.Parallel()
	bad := func(i int) contract.Item {
		it := item(fmt.Sprintf("B#%d", i), "S")
		it.Attrs["PK"] = &types.AttributeValueMemberS{}
		return it
	}
	t.Run("within limit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.MaxItemErrors = 5 }))
		items := append(numbered(50, 1), bad(1), bad(2), bad(3))
		stats, err := b.writer.Write(context.Background(), feed(items...))
		if err == nil || errors.Is(err, ErrTooManyItemErrors) || strings.Count(err.Error(), "is empty") != 3 {
			t.Fatalf("err = %v, want the 3 row errors", err)
		}
		if stats.Total.Written != 50 || stats.ItemErrors != 3 {
			t.Errorf("stats = %+v", stats)
		}
	})
	t.Run("over limit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, withConfig(func(c *Config) { c.MaxItemErrors = 2 }))
		items := append([]contract.Item{bad(1), bad(2), bad(3)}, numbered(50, 1)...)
		_, err := b.writer.Write(context.Background(), feed(items...))
		if !errors.Is(err, ErrTooManyItemErrors) || !errors.Is(err, ErrEmptyKey) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestWriteInterleavesPartitions(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.Concurrency = 1 }))
	// PK-sorted input: 400 partitions of 30 items each, in key order.
	items := numbered(12000, 30)
	if _, err := b.writer.Write(context.Background(), feed(items...)); err != nil {
		t.Fatal(err)
	}
	calls := b.fake.allCalls()
	pks := func(c []types.WriteRequest) map[string]bool {
		m := map[string]bool{}
		for _, r := range c {
			m[r.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value] = true
		}
		return m
	}
	distinct, disjoint := 0, 0
	prev := map[string]bool{}
	for _, c := range calls {
		cur := pks(c)
		distinct += len(cur)
		shared := false
		for pk := range cur {
			shared = shared || prev[pk]
		}
		if !shared {
			disjoint++
		}
		prev = cur
	}
	avg := float64(distinct) / float64(len(calls))
	// Without interleaving a batch would touch 1-2 partitions and the next
	// one the same partition.
	t.Logf("%d calls, %.1f partitions per batch, %d of consecutive batches disjoint", len(calls), avg, disjoint)
	if avg < 20 {
		t.Errorf("batches touch %.1f partitions on average, want at least 20 of 25", avg)
	}
	if frac := float64(disjoint) / float64(len(calls)); frac < 0.8 {
		t.Errorf("only %.0f%% of consecutive batches touch disjoint partitions", 100*frac)
	}
	if len(b.fake.stored) != 12000 {
		t.Errorf("stored %d", len(b.fake.stored))
	}
}

func TestWriteFlushesWhenProducerWaitsForAcks(t *testing.T) {
	t.Parallel()
	b := setup(t) // Window 4096, far more than the producer ever has in flight
	items := numbered(100, 1)
	ch := make(chan contract.Item)
	done := make(chan struct{})
	go func() {
		defer close(ch)
		for i := 0; i < len(items); i += 10 {
			acked := make(chan struct{}, 10)
			for _, it := range items[i : i+10] {
				it.Ack = func() { acked <- struct{}{} }
				select {
				case ch <- it:
				case <-done:
					return
				}
			}
			for range 10 {
				select {
				case <-acked:
				case <-done:
					return
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stats, err := b.writer.Write(ctx, ch)
	close(done)
	if err != nil || stats.Total.Written != 100 {
		t.Fatalf("err = %v, written %d", err, stats.Total.Written)
	}
}

// A producer that trickles items, never idle for Linger, still sees its
// items written long before the window fills (here: before it is done).
func TestWriteFlushesStaleWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.Linger = 50 * time.Millisecond }))
	var firstAck atomic.Int64
	items := numbered(150, 1)
	ch := make(chan contract.Item)
	var producerDone time.Time
	go func() {
		defer close(ch)
		for _, it := range items {
			it.Ack = func() { firstAck.CompareAndSwap(0, time.Now().UnixNano()) }
			ch <- it
			time.Sleep(10 * time.Millisecond)
		}
		producerDone = time.Now()
	}()
	if _, err := b.writer.Write(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	if first := time.Unix(0, firstAck.Load()); !first.Before(producerDone) {
		t.Errorf("first item acknowledged at %v, after the producer sent its last item at %v", first, producerDone)
	}
}

func TestWriteRespectsMaxWCU(t *testing.T) {
	t.Parallel()
	b := setup(t, withFakeClock(), withConfig(func(c *Config) { c.MaxWCU = 100; c.Concurrency = 1 }))
	items := numbered(1000, 1)
	for i := range items {
		if i%2 == 0 { // in GSI1: 2 units each
			items[i].Attrs["GSI1PK"] = &types.AttributeValueMemberS{Value: "G"}
			items[i].Attrs["GSI1SK"] = &types.AttributeValueMemberS{Value: fmt.Sprint(i)}
		}
	}
	start := b.clock.Now()
	stats, err := b.writer.Write(context.Background(), feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	if stats.Total.WCU != 1500 {
		t.Errorf("WCU = %d, want 1500", stats.Total.WCU)
	}
	// 1500 units at 100/s with a 100-unit burst: at least 14 s.
	if elapsed := b.clock.Now().Sub(start); elapsed < 14*time.Second || elapsed > 16*time.Second {
		t.Errorf("writing 1500 WCU at 100 WCU/s took %v", elapsed)
	}
}

func TestWriteConcurrentWriteRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ch := make(chan contract.Item)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.writer.Write(ctx, ch)
	}()
	for !b.writer.running.Load() {
		time.Sleep(time.Millisecond)
	}
	if _, err := b.writer.Write(context.Background(), feed()); err == nil {
		t.Error("second concurrent Write was accepted")
	}
	cancel()
	<-done
}

func TestWriteStatsPerEntity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var items []contract.Item
	for i := range 30 {
		it := item(fmt.Sprintf("C#%d", i), "PROFILE")
		it.Origin.Entity = "customer"
		items = append(items, it)
	}
	for i := range 20 {
		it := item(fmt.Sprintf("O#%d", i), "ORDER")
		it.Origin.Entity = "order"
		it.Attrs["big"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", 1500)} // 2 WCU
		items = append(items, it)
	}
	stats, err := b.writer.Write(context.Background(), feed(items...))
	if err != nil {
		t.Fatal(err)
	}
	if c, o := stats.Entities["customer"], stats.Entities["order"]; c.Written != 30 || c.WCU != 30 || o.Written != 20 || o.WCU != 40 {
		t.Errorf("entities = %+v", stats.Entities)
	}
	if stats.Total.Written != 50 || stats.Total.WCU != 70 {
		t.Errorf("total = %+v", stats.Total)
	}
}

func TestNewWriterValidates(t *testing.T) {
	t.Parallel()
	_, err := NewWriter(newFake(), Config{SortKey: "SK", OnDuplicate: "ignore", Concurrency: -1, Indexes: []Index{{Name: "G"}}})
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"table name is required", "partition key attribute name is required", `on-duplicate must be "fail" or "skip"`, "concurrency must be at least 1", `index "G" has no partition key`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := NewWriter(nil, testConfig()); err == nil {
		t.Error("nil client accepted")
	}
	w, err := NewWriter(newFake(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if w.cfg.Concurrency != DefaultConcurrency || DefaultConcurrency < 8 || DefaultConcurrency > 128 || w.cfg.MaxBatchElapsed != 2*time.Minute || w.cfg.OnDuplicate != OnDuplicateFail {
		t.Errorf("defaults not applied: %+v", w.cfg)
	}
}

// Stats reads the counts of a Write while it runs (progress reports), and
// keeps the last Write's once it returned.
func TestWriterStatsWhileWriting(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.MinWCU = 1e6; c.Concurrency = 1 }))
	if s := b.writer.Stats(); s.Calls != 0 || s.Total.Written != 0 {
		t.Errorf("Stats before any Write: %+v", s)
	}
	release := make(chan struct{})
	seen := make(chan contract.Stats, 1)
	b.fake.batchWriteItem = func(_ context.Context, n int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
		if n == 3 {
			// One call at a time: three calls' items are acknowledged;
			// read the counts while the fourth is in flight.
			seen <- b.writer.Stats()
			<-release
		}
		return nil, nil
	}
	done := make(chan contract.Stats, 1)
	go func() {
		st, err := b.writer.Write(context.Background(), feed(numbered(100, 1)...))
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	mid := <-seen
	close(release)
	final := <-done
	if mid.Calls != 3 || mid.Total.Written != 75 {
		t.Errorf("Stats while writing: %d calls, %d written", mid.Calls, mid.Total.Written)
	}
	if after := b.writer.Stats(); after.Total.Written != final.Total.Written || final.Total.Written != 100 {
		t.Errorf("Stats after Write: %d written, Write returned %d", after.Total.Written, final.Total.Written)
	}
}
