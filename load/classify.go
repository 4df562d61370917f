package load

import (
	"context"
	"errors"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// errClass says what the writer does about a failed call.
type errClass int

const (
	classFatal       errClass = iota // stop the run
	classCanceled                    // the context ended: stop, never retry
	classThrottle                    // back off, slow down, retry
	classTransient                   // back off, retry (5xx, connection errors)
	classUnreachable                 // dial failed: fatal until DynamoDB has answered once, then transient
	classValidation                  // the request is invalid: attribute it to items, never retry
)

func (c errClass) String() string {
	return [...]string{"fatal", "canceled", "throttled", "transient", "unreachable", "validation"}[c]
}

// classify sorts a DynamoDB call's error by behaviour, with errors.As on the
// SDK's and smithy's types (and, for connection errors, the SDK's own
// retryable-connection check). ctx is the caller's context, the parent of
// the call's: only its end is a cancellation.
func classify(ctx context.Context, err error) errClass {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return classCanceled
	}
	// ctx is alive, so a deadline that passed was the call's own: its
	// timeout, or net/http's "timeout awaiting response headers", which
	// satisfies errors.Is(err, context.DeadlineExceeded) too. Smithy wraps
	// the first in a CanceledError. A slow answer is retried like a 5xx.
	if errors.Is(err, ErrRetryLimit) || errors.Is(err, ErrUnreachable) {
		return classFatal // the client has retried all it may already
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return classUnreachable // a dial that timed out too
	}
	if isTimeout(err) {
		return classTransient
	}
	var canceled interface{ CanceledError() bool }
	if errors.As(err, &canceled) && canceled.CanceledError() {
		return classCanceled
	}

	var (
		pte *types.ProvisionedThroughputExceededException
		te  *types.ThrottlingException
		rle *types.RequestLimitExceeded
		ise *types.InternalServerError
		rnf *types.ResourceNotFoundException
	)
	switch {
	case errors.As(err, &pte), errors.As(err, &te), errors.As(err, &rle):
		return classThrottle
	case errors.As(err, &ise):
		return classTransient
	case errors.As(err, &rnf):
		return classFatal
	}

	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ValidationException", "SerializationException":
			return classValidation
		case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded":
			return classThrottle // the same codes when the SDK could not map them to a type
		case "ServiceUnavailable", "ServiceUnavailableException", "InternalFailure", "InternalServerError":
			return classTransient
		}
		if api.ErrorFault() == smithy.FaultServer {
			return classTransient
		}
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() >= 500 {
		return classTransient
	}
	// The SDK marks what it knows to be worth retrying, such as an
	// InvalidSignatureException whose Date header shows the local clock off
	// by minutes ("Probable clock skew error"): its retryer has learnt the
	// offset, and the next call is signed with it.
	var marked interface{ RetryableError() bool }
	if errors.As(err, &marked) && marked.RetryableError() {
		return classTransient
	}
	if (retry.RetryableConnectionError{}).IsErrorRetryable(err) == aws.TrueTernary {
		return classTransient
	}
	// Anything else (access denied, bad credentials, an unknown 4xx, a
	// malformed endpoint) is not something retrying fixes.
	return classFatal
}

// isTimeout says whether err is a call's timeout: a deadline, or an error
// that says it timed out (net/http's, or the client's per-attempt limit,
// CallTimeoutError).
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// isThrottle says whether an SDK attempt error was throttling.
func isThrottle(err error) bool {
	return err != nil && classify(context.Background(), err) == classThrottle
}
