package load

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	headerTimeout := realHeaderTimeout(t)
	skew := clockSkewError(t)
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
		// A slow answer while the caller's context is alive is not a
		// cancellation, though net/http's error matches DeadlineExceeded.
		{"header timeout, parent alive", nil, op(&smithyhttp.RequestSendError{Err: headerTimeout}), classTransient},
		{"header timeout, parent canceled", canceled, op(&smithyhttp.RequestSendError{Err: headerTimeout}), classCanceled},
		{"call deadline, parent alive", nil, op(&smithy.CanceledError{Err: context.DeadlineExceeded}), classTransient},
		{"call deadline, parent canceled", canceled, op(&smithy.CanceledError{Err: context.DeadlineExceeded}), classCanceled},
		{"call timeout error", nil, op(&CallTimeoutError{Operation: "Scan", Limit: time.Second}), classTransient},
		{"dial timeout", nil, op(&smithyhttp.RequestSendError{Err: &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}}}), classUnreachable},
		{"retry time limit", nil, op(&RetryLimitError{Operation: "Scan", Attempts: 3, Err: &CallTimeoutError{}}), classFatal},
		// The SDK's retryer marks an InvalidSignatureException whose Date
		// shows the clock minutes off; it has learnt the offset.
		{"clock skew", nil, skew, classTransient},
		{"clock skew, parent canceled", canceled, skew, classCanceled},
		{"bad signature without skew", nil, op(status(400, &smithy.GenericAPIError{Code: "InvalidSignatureException", Message: "The request signature we calculated does not match"})), classFatal},
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

// realHeaderTimeout is net/http's error for an answer whose headers did
// not come within Transport.ResponseHeaderTimeout.
func realHeaderTimeout(t *testing.T) error {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 20 * time.Millisecond}}
	_, err := c.Get(srv.URL)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("header timeout: err = %v, want one matching context.DeadlineExceeded", err)
	}
	return err
}

// clockSkewError is what a NewClient client's one-attempt BatchWriteItem
// (the writer's) returns when DynamoDB's clock is 10 minutes ahead: its
// InvalidSignatureException ("Signature expired") with its Date.
func clockSkewError(t *testing.T) error {
	t.Helper()
	srv := skewedEndpoint(t, 10*time.Minute, func(string, []byte) (int, string) { return 200, `{"UnprocessedItems":{}}` })
	client, err := NewClient(context.Background(), testClientConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	in := (&Writer{cfg: Config{Table: "t"}}).input([]*pending{{item: item("A", "B")}})
	_, err = client.BatchWriteItem(context.Background(), in, oneAttempt)
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "InvalidSignatureException" {
		t.Fatalf("skewed endpoint: err = %v, want InvalidSignatureException", err)
	}
	return err
}

// skewedEndpoint is a fakeEndpoint whose clock is ahead by skew: as AWS
// does, it refuses a request signed more than 5 minutes from its time
// with InvalidSignatureException and its own Date.
func skewedEndpoint(t *testing.T, skew time.Duration, handle func(op string, body []byte) (int, string)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		now := time.Now().Add(skew).UTC()
		signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		status, resp := 0, ""
		if d := now.Sub(signed); err != nil || d > 5*time.Minute || d < -5*time.Minute {
			status = 400
			resp = `{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"Signature expired: ` +
				r.Header.Get("X-Amz-Date") + ` is now earlier than ` + now.Add(-5*time.Minute).Format("20060102T150405Z") + `"}`
		} else {
			status, resp = handle(strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), body)
		}
		w.Header().Set("Date", now.Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(resp))), 10))
		w.WriteHeader(status)
		io.WriteString(w, resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}
