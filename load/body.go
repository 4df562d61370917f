package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdkSerializerID is the ID of the SDK's middleware that serializes an
// operation's input into the request (dynamodb's serializeRequestMiddleware).
const sdkSerializerID = "OperationSerializer"

// withBody makes one BatchWriteItem call of the SDK send body, the
// writer's own encoding of the input's requests, instead of serializing
// the input again. Everything else of the call stays the SDK's: input
// validation, endpoint resolution, SigV4 signing (the payload
// hash is of body), the HTTP transport and the decoding of the response.
// Clients that are not the SDK's (fakes in tests) ignore the option and
// read the input, which holds the same requests.
func withBody(body []byte) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			if _, err := s.Serialize.Swap(sdkSerializerID, bodySerializer{body}); err != nil {
				return fmt.Errorf("load: replace the SDK's request serializer: %w", err)
			}
			return nil
		})
	}
}

// oneAttempt asks the SDK's retryer for one attempt: the writer retries
// its calls itself (see "Retries" in the package documentation).
func oneAttempt(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }

// bodySerializer does what the SDK's awsJson 1.0 serializer does for
// BatchWriteItem, with a body encoded beforehand.
type bodySerializer struct{ body []byte }

func (bodySerializer) ID() string { return sdkSerializerID }

func (m bodySerializer) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("load: unexpected transport request %T", in.Request)
	}
	req.Method = http.MethodPost
	if req.URL.Path == "" {
		req.URL.Path = "/"
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.BatchWriteItem")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	sreq, err := req.SetStream(bytes.NewReader(m.body))
	if err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("load: set request body: %w", err)
	}
	*req = *sreq
	return next.HandleSerialize(context.WithValue(ctx, bodyKey{}, m.body), in)
}

// bodyKey is the context key under which bodySerializer leaves the body
// for bodyClient.
type bodyKey struct{}

// bodyClient is the HTTP client of NewClient's clients: the SDK's, given
// the writer's request bodies as in-memory readers. The SDK hands net/http
// a wrapped stream, which it copies through a new buffer and after
// flushing the headers separately; an in-memory body goes out with the
// headers in one write (Transport.WriteBufferSize permitting). The bytes
// are the same, so the signature still holds.
type bodyClient struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (c bodyClient) Do(req *http.Request) (*http.Response, error) {
	if body, ok := req.Context().Value(bodyKey{}).([]byte); ok && req.ContentLength == int64(len(body)) {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return c.next.Do(req)
}
