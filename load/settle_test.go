package load

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/pgdynamo/migrate/contract"
)

// Every item settles exactly once, by Ack or by Fail, and Fail carries the
// same error Write reports: an oversize item, a duplicate key and an item
// DynamoDB rejects are each failed as they happen while the rest is written.
func TestWriteSettlesEveryItemOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, withConfig(func(c *Config) { c.MaxItemErrors = -1; c.Concurrency = 2 }))
	rejectKey := "P#00050|S#00000"
	b.fake.batchWriteItem = func(_ context.Context, _ int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
		for _, r := range reqs {
			if fakeKey(r.PutRequest.Item) == rejectKey {
				return nil, &smithy.GenericAPIError{Code: "ValidationException", Message: "bad item"}
			}
		}
		return nil, nil
	}
	items := numbered(200, 1)
	big := item("P#big", "S")
	big.Attrs["blob"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", MaxItemSize)}
	items = append(items, big, item("P#00003", "S#00000")) // the last duplicates item 3

	var mu sync.Mutex
	acks := map[string]int{}
	fails := map[string]*contract.ItemError{}
	for i := range items {
		src := items[i].Origin.SourceKey
		items[i].Ack = func() { mu.Lock(); acks[src]++; mu.Unlock() }
		items[i].Fail = func(e *contract.ItemError) {
			mu.Lock()
			defer mu.Unlock()
			if fails[src] != nil {
				t.Errorf("%s failed twice", src)
			}
			fails[src] = e
		}
	}
	// The duplicate and the original share a SourceKey in this helper;
	// give the duplicate its own.
	items[len(items)-1].Origin.SourceKey = "dup"
	dupFailed := make(chan *contract.ItemError, 1)
	items[len(items)-1].Fail = func(e *contract.ItemError) { dupFailed <- e }

	_, err := b.writer.Write(context.Background(), feed(items...))
	if err == nil {
		t.Fatal("Write reported no item errors")
	}
	if len(fails) != 2 {
		t.Errorf("failed items: %v, want the oversize and the rejected one", fails)
	}
	if e := fails["id=P#big/S"]; e == nil || !errors.Is(e, ErrItemTooLarge) {
		t.Errorf("oversize item: %v", e)
	}
	if e := fails["id=P#00050/S#00000"]; e == nil || !strings.Contains(e.Reason, "bad item") {
		t.Errorf("rejected item: %v", e)
	}
	select {
	case e := <-dupFailed:
		if !errors.Is(e, ErrDuplicateKey) {
			t.Errorf("duplicate: %v", e)
		}
	default:
		t.Error("the duplicate was not failed")
	}
	for src, n := range acks {
		if n != 1 || fails[src] != nil {
			t.Errorf("%s: %d acks, failed %v", src, n, fails[src] != nil)
		}
	}
	if len(acks) != 199 {
		t.Errorf("%d items acked, want 199", len(acks))
	}
}

// A delete sends only the key, is re-driven when unprocessed, and is acked
// like a put.
func TestWriteDeletes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := true
	b.fake.batchWriteItem = func(_ context.Context, _ int, reqs []types.WriteRequest) ([]types.WriteRequest, error) {
		for _, r := range reqs {
			if r.DeleteRequest != nil && len(r.DeleteRequest.Key) != 2 {
				t.Errorf("delete sends %d attributes, want the 2 key attributes", len(r.DeleteRequest.Key))
			}
		}
		if first {
			first = false
			return reqs[:1], nil // one unprocessed on the first call
		}
		return nil, nil
	}
	items := numbered(30, 1)
	var acks sync.WaitGroup
	for i := range items {
		items[i].Delete = i%2 == 0
		acks.Add(1)
		items[i].Ack = acks.Done
	}
	if _, err := b.writer.Write(context.Background(), feed(items...)); err != nil {
		t.Fatal(err)
	}
	acks.Wait()
	if len(b.fake.deleted) != 15 || len(b.fake.stored) != 15 {
		t.Errorf("%d deletes and %d puts acknowledged, want 15 and 15", len(b.fake.deleted), len(b.fake.stored))
	}
	for k := range b.fake.stored {
		for _, d := range b.fake.deleted {
			if k == d {
				t.Errorf("%s both put and deleted", k)
			}
		}
	}
}
