package load

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// DefaultCallTimeout bounds one attempt of a DynamoDB call: sending it,
// waiting for the answer and reading it. DynamoDB answers a BatchWriteItem
// or a 1 MB Scan page in tens of milliseconds, and its own request timeout
// is far below this; a call that has not answered in 10 s is stuck (a lost
// connection, a proxy holding it) and is sent again. An emulator on a busy
// machine can be slower than that: raise it there (--call-timeout).
const DefaultCallTimeout = 10 * time.Second

// ErrRetryLimit is wrapped by the error of a call of a NewClient client
// that kept failing with errors worth retrying until its time limit
// (ClientConfig.MaxCallElapsed) ran out: see RetryLimitError.
var ErrRetryLimit = errors.New("load: call not answered within the retry time limit")

// CallTimeoutError is the error of an attempt that got no complete answer
// within its time limit while the caller's context was still alive. It is
// worth retrying: the SDK's retryer and classify both treat it so.
type CallTimeoutError struct {
	Operation string
	Limit     time.Duration
}

// Error names the operation and the timeout.
func (e *CallTimeoutError) Error() string {
	return fmt.Sprintf("%s: no answer within the call timeout (%v)", e.Operation, e.Limit)
}

// Timeout marks the error as a timeout (net.Error's convention).
func (e *CallTimeoutError) Timeout() bool { return true }

// RetryableError tells the SDK's retryer to retry the call.
func (e *CallTimeoutError) RetryableError() bool { return true }

// RetryLimitError is the error of a call that was still failing, with
// errors worth retrying, when its time limit ran out.
type RetryLimitError struct {
	Operation string
	Attempts  int
	Elapsed   time.Duration
	Err       error // the last attempt's
}

// Error names the operation, the attempts and time spent, and the last error.
func (e *RetryLimitError) Error() string {
	return fmt.Sprintf("%s: gave up after %d attempts in %v: %v", e.Operation, e.Attempts, e.Elapsed.Round(time.Millisecond), e.Err)
}

// Unwrap returns ErrRetryLimit and the last error.
func (e *RetryLimitError) Unwrap() []error { return []error{ErrRetryLimit, e.Err} }

// RetryableError stops the SDK's retryer, whatever the last error was.
func (e *RetryLimitError) RetryableError() bool { return false }

// callLimits bounds every call of a NewClient client: each attempt by
// timeout, and all the attempts of a call (the retryer's backoff
// included) by maxElapsed from the call's start. The SDK's retryer counts
// attempts, not time, and net/http bounds only the wait for headers.
type callLimits struct {
	timeout, maxElapsed time.Duration
	// reached is set once DynamoDB answered a call of the client: until
	// then a failed dial is not retried (the endpoint may well be wrong),
	// as the Writer does.
	reached *atomic.Bool
}

// unreachableError is a dial error before DynamoDB ever answered.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string        { return fmt.Sprintf("%v: %v", ErrUnreachable, e.err) }
func (e *unreachableError) Unwrap() []error      { return []error{ErrUnreachable, e.err} }
func (e *unreachableError) RetryableError() bool { return false }

// callState is one call's: when it started, its attempts and their last error.
type callState struct {
	start    time.Time
	attempts int
	last     error
}

type callStateKey struct{}

// add registers the limits on an operation's stack: the call's start in
// the initialize step, and each attempt's deadline in the finalize step
// right after the retryer, so that signing, sending and decoding the
// answer are all inside it.
func (l callLimits) add(s *middleware.Stack) error {
	start := middleware.InitializeMiddlewareFunc("MigrateCallStart", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		return next.HandleInitialize(context.WithValue(ctx, callStateKey{}, &callState{start: time.Now()}), in)
	})
	if err := s.Initialize.Add(start, middleware.Before); err != nil {
		return fmt.Errorf("load: add the call-start middleware: %w", err)
	}
	attempt := middleware.FinalizeMiddlewareFunc("MigrateCallTimeout", l.attempt)
	if err := s.Finalize.Insert(attempt, "Retry", middleware.After); err != nil {
		return fmt.Errorf("load: add the call-timeout middleware: %w", err)
	}
	return nil
}

func (l callLimits) attempt(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	if st == nil {
		st = &callState{start: time.Now()}
	}
	op := awsmiddleware.GetOperationName(ctx)
	remaining := l.maxElapsed - time.Since(st.start)
	if st.attempts > 0 && remaining <= 0 {
		// The retryer's backoff took the rest of the time.
		return middleware.FinalizeOutput{}, middleware.Metadata{}, &RetryLimitError{Operation: op, Attempts: st.attempts, Elapsed: time.Since(st.start), Err: st.last}
	}
	st.attempts++
	limit := min(l.timeout, max(remaining, time.Millisecond))
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, md, err := next.HandleFinalize(actx, in)
	var answered interface{ HTTPStatusCode() int }
	if err == nil || errors.As(err, &answered) && answered.HTTPStatusCode() > 0 {
		l.reached.Store(true)
	}
	if err == nil {
		return out, md, nil
	}
	if !l.reached.Load() && classify(ctx, err) == classUnreachable {
		return out, md, &unreachableError{err}
	}
	if actx.Err() != nil && ctx.Err() == nil {
		// Smithy reports the attempt's deadline as a CanceledError, which
		// the retryer never retries: the caller did not cancel anything.
		err = &CallTimeoutError{Operation: op, Limit: limit}
	}
	st.last = err
	if elapsed := time.Since(st.start); elapsed >= l.maxElapsed {
		switch classify(ctx, err) {
		case classTransient, classThrottle:
			err = &RetryLimitError{Operation: op, Attempts: st.attempts, Elapsed: elapsed, Err: err}
		}
	}
	return out, md, err
}
