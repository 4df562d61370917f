package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "BatchWriteItem", Err: err}
	}
	status := func(code int, err error) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: err}}
	}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want errClass
	}{
		{"provisioned throughput", nil, op(&types.ProvisionedThroughputExceededException{}), classThrottle},
		{"throttling", nil, op(&types.ThrottlingException{}), classThrottle},
		{"request limit", nil, op(&types.RequestLimitExceeded{}), classThrottle},
		{"throttle after SDK attempts", nil, op(&retry.MaxAttemptsError{Attempt: 3, Err: &types.ThrottlingException{}}), classThrottle},
		{"untyped throttle code", nil, op(&smithy.GenericAPIError{Code: "ThrottlingException"}), classThrottle},
		{"internal server error", nil, op(&types.InternalServerError{}), classTransient},
		{"503", nil, op(status(503, &smithy.GenericAPIError{Code: "ServiceUnavailable", Fault: smithy.FaultServer})), classTransient},
		{"500 without a body", nil, op(status(500, errors.New("boom"))), classTransient},
		{"validation", nil, op(status(400, &smithy.GenericAPIError{Code: "ValidationException", Message: "bad"})), classValidation},
		{"serialization", nil, op(&smithy.GenericAPIError{Code: "SerializationException"}), classValidation},
		{"table missing", nil, op(&types.ResourceNotFoundException{}), classFatal},
		{"access denied", nil, op(status(400, &smithy.GenericAPIError{Code: "AccessDeniedException"})), classFatal},
		{"connection refused", nil, op(&smithyhttp.RequestSendError{Err: &url.Error{Op: "Post", URL: "http://x", Err: dial}}), classUnreachable},
		{"connection reset", nil, op(&smithyhttp.RequestSendError{Err: &url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNRESET}}), classTransient},
		{"EOF", nil, op(&smithyhttp.RequestSendError{Err: fmt.Errorf("read: %w", errors.New("EOF"))}), classTransient},
		{"context canceled", nil, op(&smithy.CanceledError{Err: context.Canceled}), classCanceled},
		{"plain context canceled", nil, context.Canceled, classCanceled},
		{"any error once ctx is done", canceled, op(&types.ThrottlingException{}), classCanceled},
		{"unknown", nil, errors.New("something else"), classFatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if got := classify(ctx, tt.err); got != tt.want {
				t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	if !isThrottle(&types.ThrottlingException{}) || isThrottle(nil) || isThrottle(errors.New("x")) {
		t.Error("isThrottle")
	}
}
