package load

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// endpointCache remembers the endpoints the SDK's rules resolve for its
// parameters. The SDK evaluates its endpoint rules again for every call,
// which costs about as much as signing the call; the answer depends only
// on the parameters (region, endpoint, table names, ...), which are the
// same for every call of a run. The cached endpoints are only read.
type endpointCache struct {
	next dynamodb.EndpointResolverV2
	mu   sync.Mutex
	m    map[string]smithyendpoints.Endpoint
}

// maxCachedEndpoints bounds the cache; parameters beyond it are resolved
// every time.
const maxCachedEndpoints = 64

func newEndpointCache(next dynamodb.EndpointResolverV2) *endpointCache {
	return &endpointCache{next: next, m: map[string]smithyendpoints.Endpoint{}}
}

func (c *endpointCache) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	key := endpointKey(p)
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	e, err := c.next.ResolveEndpoint(ctx, p)
	if err == nil {
		c.mu.Lock()
		if len(c.m) < maxCachedEndpoints {
			c.m[key] = e
		}
		c.mu.Unlock()
	}
	return e, err
}

// endpointKey is every parameter, in one string.
func endpointKey(p dynamodb.EndpointParameters) string {
	var b strings.Builder
	str := func(s *string) {
		if s == nil {
			b.WriteString("\x01")
		} else {
			b.WriteString(strconv.Quote(*s))
		}
		b.WriteByte(',')
	}
	flag := func(v *bool) {
		switch {
		case v == nil:
			b.WriteString("\x01")
		case *v:
			b.WriteString("t")
		default:
			b.WriteString("f")
		}
		b.WriteByte(',')
	}
	str(p.Region)
	flag(p.UseDualStack)
	flag(p.UseFIPS)
	str(p.Endpoint)
	str(p.AccountId)
	str(p.AccountIdEndpointMode)
	str(p.ResourceArn)
	b.WriteString(strconv.Itoa(len(p.ResourceArnList)))
	for _, arn := range p.ResourceArnList {
		b.WriteString(strconv.Quote(arn))
	}
	b.WriteByte(',')
	flag(p.IsSearchOperation)
	return b.String()
}
