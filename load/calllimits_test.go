package load

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// holdFirst answers like a DynamoDB that holds the first n calls of op
// for hold (longer than the call timeout), then answers with ok.
func holdFirst(op string, n int64, hold time.Duration, ok string) (func(string, []byte) (int, string), *atomic.Int64) {
	var calls atomic.Int64
	return func(got string, _ []byte) (int, string) {
		if got != op {
			return 200, `{}`
		}
		if calls.Add(1) <= n {
			time.Sleep(hold)
		}
		return 200, ok
	}, &calls
}

// A call that gets no answer within the call timeout is sent again, on
// the direct path and through the SDK's stack alike; the batch is written.
func TestWriteRetriesCallsThatTimeOut(t *testing.T) {
	t.Parallel()
	for _, sdk := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "sdk-middleware"}[sdk], func(t *testing.T) {
			t.Parallel()
			// The first call goes through the SDK's stack, the direct ones
			// follow: hold the 2nd and 3rd, which is each path's on the
			// direct run.
			var calls atomic.Int64
			srv := fakeEndpoint(t, func(string, []byte) (int, string) {
				if n := calls.Add(1); n == 2 || n == 3 {
					time.Sleep(time.Second)
				}
				return 200, `{"UnprocessedItems":{}}`
			})
			cc := testClientConfig(srv.URL)
			cc.CallTimeout = 100 * time.Millisecond
			client, err := NewClient(context.Background(), cc)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1, SDKMiddleware: sdk,
				CallTimeout: 100 * time.Millisecond, RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			stats, err := w.Write(context.Background(), feed(numbered(50, 1)...))
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			if stats.Total.Written != 50 || stats.Calls != 4 || stats.Total.Retries != 50 {
				t.Errorf("written %d in %d calls, %d item retries; want 50 in 4 calls (2 batches, the second sent 3 times), 50 item retries", stats.Total.Written, stats.Calls, stats.Total.Retries)
			}
		})
	}
}

// A batch whose calls always time out stops at MaxBatchElapsed, and the
// message counts the calls and says what happened.
func TestWriteCallsAlwaysTimeOut(t *testing.T) {
	t.Parallel()
	srv := fakeEndpoint(t, func(string, []byte) (int, string) {
		time.Sleep(2 * time.Second)
		return 200, `{"UnprocessedItems":{}}`
	})
	cc := testClientConfig(srv.URL)
	cc.CallTimeout = 50 * time.Millisecond
	client, err := NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1,
		CallTimeout: 50 * time.Millisecond, MaxBatchElapsed: 400 * time.Millisecond, RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stats, err := w.Write(context.Background(), feed(numbered(5, 1)...))
	if !errors.Is(err, ErrBatchTimeout) {
		t.Fatalf("err = %v, want ErrBatchTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v, want about 400ms", d)
	}
	var timeout *CallTimeoutError
	if !errors.As(err, &timeout) || stats.Calls < 4 {
		t.Errorf("err = %v after %d calls, want a CallTimeoutError as the last error after several calls", err, stats.Calls)
	}
	for _, want := range []string{"in " + plural(int(stats.Calls), "call"), "no answer within the call timeout (50ms)", "400ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A read (here a Scan page) whose attempts time out is retried by the
// client's retryer within MaxCallElapsed, and completes.
func TestClientRetriesReadsThatTimeOut(t *testing.T) {
	t.Parallel()
	handle, calls := holdFirst("Scan", 2, time.Second, `{"Items":[{"PK":{"S":"a"}}],"Count":1}`)
	cc := testClientConfig(fakeEndpoint(t, handle).URL)
	cc.CallTimeout, cc.MaxBackoff = 100*time.Millisecond, time.Millisecond
	client, err := NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t")})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	// Two held calls, then the answer: at least 3 calls (a loaded
	// machine may let the answering call time out once too).
	if len(out.Items) != 1 || calls.Load() < 3 {
		t.Errorf("%d items after %d calls, want 1 after at least 3", len(out.Items), calls.Load())
	}
}

// A read that keeps timing out fails once MaxCallElapsed has passed, with
// an error that says so, not as a cancellation; a caller's cancellation
// stays one.
func TestClientReadRetryLimit(t *testing.T) {
	t.Parallel()
	handle, calls := holdFirst("Scan", 1<<30, time.Second, `{}`)
	cc := testClientConfig(fakeEndpoint(t, handle).URL)
	cc.CallTimeout, cc.MaxCallElapsed, cc.MaxBackoff = 50*time.Millisecond, 300*time.Millisecond, time.Millisecond
	client, err := NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("t")})
	var limit *RetryLimitError
	if !errors.Is(err, ErrRetryLimit) || !errors.As(err, &limit) {
		t.Fatalf("err = %v, want a RetryLimitError", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %v, want about 300ms", d)
	}
	// Every call the server saw is an attempt. The last attempt gets what
	// was left of MaxCallElapsed: cut that short, it may run out before
	// its request arrives, and only then is it missing at the server.
	var last *CallTimeoutError
	made, cutShort := calls.Load(), errors.As(err, &last) && last.Limit < cc.CallTimeout
	if (int64(limit.Attempts) != made && !(cutShort && int64(limit.Attempts) == made+1)) || limit.Attempts < 4 || !strings.Contains(err.Error(), "no answer within the call timeout") {
		t.Errorf("err = %v; %d attempts reported, %d calls made", err, limit.Attempts, made)
	}
	if classify(context.Background(), err) != classFatal {
		t.Errorf("classify(%v) = %v, want fatal: the client retried already", err, classify(context.Background(), err))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	_, err = client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")})
	if errors.Is(err, ErrRetryLimit) || classify(ctx, err) != classCanceled {
		t.Errorf("scan with a caller's deadline: err = %v, class %v; want canceled", err, classify(ctx, err))
	}
}

// A DynamoDB whose clock is 10 minutes ahead refuses the first call with
// InvalidSignatureException and its Date; the SDK learns the offset, and
// the writer retries the batch (on the SDK's path; the direct path signs
// on its own) and completes.
func TestWriteRetriesClockSkew(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	srv := skewedEndpoint(t, 10*time.Minute, func(string, []byte) (int, string) {
		writes.Add(1)
		return 200, `{"UnprocessedItems":{}}`
	})
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(client, Config{Table: "t", PartitionKey: "PK", SortKey: "SK", Concurrency: 1, SDKMiddleware: true,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := w.Write(context.Background(), feed(numbered(50, 1)...))
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if stats.Total.Written != 50 || writes.Load() != 2 || stats.Calls != 3 {
		t.Errorf("%d written, %d calls, %d accepted; want 50 written in 3 calls (one refused), 2 accepted", stats.Total.Written, stats.Calls, writes.Load())
	}
}
