package load

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// endpointKey must see every parameter: two calls that could resolve to
// different endpoints must not share a cache entry.
func TestEndpointKeyCoversEveryParameter(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[dynamodb.EndpointParameters]()
	if typ.NumField() != 9 {
		t.Fatalf("dynamodb.EndpointParameters has %d fields, endpointKey knows 9: add the new ones to it", typ.NumField())
	}
	base := dynamodb.EndpointParameters{Region: aws.String("us-east-1")}
	variants := []dynamodb.EndpointParameters{
		{}, base,
		{Region: aws.String("eu-west-1")},
		{Region: aws.String("us-east-1"), UseDualStack: aws.Bool(true)},
		{Region: aws.String("us-east-1"), UseDualStack: aws.Bool(false)},
		{Region: aws.String("us-east-1"), UseFIPS: aws.Bool(true)},
		{Region: aws.String("us-east-1"), Endpoint: aws.String("http://localhost:8000")},
		{Region: aws.String("us-east-1"), AccountId: aws.String("123")},
		{Region: aws.String("us-east-1"), AccountIdEndpointMode: aws.String("required")},
		{Region: aws.String("us-east-1"), ResourceArn: aws.String("arn:x")},
		{Region: aws.String("us-east-1"), ResourceArnList: []string{"a", "b"}},
		{Region: aws.String("us-east-1"), ResourceArnList: []string{"a,b"}},
		{Region: aws.String("us-east-1"), IsSearchOperation: aws.Bool(true)},
	}
	seen := map[string]int{}
	for i, p := range variants {
		k := endpointKey(p)
		if j, dup := seen[k]; dup {
			t.Errorf("parameters %d and %d share the key %q", j, i, k)
		}
		seen[k] = i
	}
	if endpointKey(base) != endpointKey(dynamodb.EndpointParameters{Region: aws.String("us-east-1")}) {
		t.Error("equal parameters, different keys")
	}
}

type countingResolver struct{ calls int }

func (r *countingResolver) ResolveEndpoint(context.Context, dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	r.calls++
	return smithyendpoints.Endpoint{}, nil
}

func TestEndpointCacheResolvesOnce(t *testing.T) {
	t.Parallel()
	next := &countingResolver{}
	c := newEndpointCache(next)
	p := dynamodb.EndpointParameters{Region: aws.String("us-east-1"), ResourceArnList: []string{"t"}}
	for range 3 {
		if _, err := c.ResolveEndpoint(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	p.ResourceArnList = []string{"u"}
	if _, err := c.ResolveEndpoint(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if next.calls != 2 {
		t.Errorf("%d resolutions for two sets of parameters", next.calls)
	}
}
