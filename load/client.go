package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
)

// ErrNoRegion is wrapped by NewClient when neither the configuration nor
// the environment names a region and there is no custom endpoint: a
// caller's setup mistake, found before any call.
var ErrNoRegion = errors.New("load: no AWS region")

// ClientConfig configures NewClient. Zero values mean the documented
// defaults.
type ClientConfig struct {
	// Endpoint overrides the DynamoDB endpoint (e.g. http://localhost:8000).
	// When empty the SDK resolves it, honouring AWS_ENDPOINT_URL_DYNAMODB and
	// AWS_ENDPOINT_URL.
	Endpoint string
	// Region overrides the region from the environment and shared config.
	// When both are empty and Endpoint is set, "us-east-1" is used (local
	// engines accept any region); otherwise a missing region is an error.
	Region string
	// Concurrency is the number of calls expected in flight; the connection
	// pool keeps at least this many idle connections. Default
	// DefaultConcurrency.
	Concurrency int
	// CallTimeout bounds each attempt of a call: sending the request,
	// waiting for the answer (the HTTP transport's response header
	// timeout too) and reading it. An attempt that runs out of it while
	// the caller's context is alive fails with a CallTimeoutError, which
	// is retried like a 5xx. Default DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxCallElapsed bounds all the attempts of one call, the backoff
	// between them included, from the call's start: a call still failing
	// with errors worth retrying (timeouts, dropped connections, 5xx,
	// throttling) then fails with a RetryLimitError. Default
	// DefaultMaxBatchElapsed, the writer's limit for a batch.
	MaxCallElapsed time.Duration
	// MaxAttempts caps the SDK retryer's attempts per call; 0 (default)
	// means as many as MaxCallElapsed allows. (The Writer makes one
	// attempt per call and retries on its own.)
	MaxAttempts int
	// MaxBackoff caps each of the SDK retryer's sleeps. Default 1s.
	MaxBackoff time.Duration
	// DialTimeout bounds establishing a connection. Default 3s.
	DialTimeout time.Duration
	// Credentials, when set, replace the default credential chain.
	Credentials aws.CredentialsProvider
	// Logger receives the SDK's own log lines at debug level. Default: discard.
	Logger *slog.Logger
}

// WithDefaults returns cc with unset fields defaulted.
func (cc ClientConfig) WithDefaults() ClientConfig {
	cc.Concurrency = cmp.Or(cc.Concurrency, DefaultConcurrency)
	cc.CallTimeout = cmp.Or(cc.CallTimeout, DefaultCallTimeout)
	cc.MaxCallElapsed = cmp.Or(cc.MaxCallElapsed, DefaultMaxBatchElapsed)
	cc.MaxAttempts = cmp.Or(cc.MaxAttempts, unlimitedAttempts)
	cc.MaxBackoff = cmp.Or(cc.MaxBackoff, time.Second)
	cc.DialTimeout = cmp.Or(cc.DialTimeout, 3*time.Second)
	return cc
}

// Validate reports every problem with cc at once; before or after
// WithDefaults, as 0 means the default. The endpoint checked is Endpoint
// or, when it is "", the one the SDK would take from the environment
// (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL): a value the user set too.
// The problems with Endpoint, Region, CallTimeout and MaxCallElapsed are
// FieldErrors.
func (cc ClientConfig) Validate() error {
	var errs []error
	field := func(name, env, problem string) {
		errs = append(errs, &FieldError{Verb: "load", Field: name, Env: env, Problem: problem})
	}
	env, endpoint := "", cc.Endpoint
	if endpoint == "" {
		env, endpoint = EnvEndpoint("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL")
	}
	if p := EndpointProblem(endpoint); p != "" {
		field("Endpoint", env, p)
	}
	if p := RegionProblem(cc.Region); p != "" {
		field("Region", "", p)
	}
	if cc.CallTimeout < 0 {
		field("CallTimeout", "", fmt.Sprintf("must be positive (default %v)", DefaultCallTimeout))
	}
	if cc.MaxCallElapsed < 0 {
		field("MaxCallElapsed", "", fmt.Sprintf("must not be negative (0 = the default, %v)", DefaultMaxBatchElapsed))
	}
	if cc.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("load: client concurrency must be at least 1, got %d", cc.Concurrency))
	}
	if cc.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("load: client max attempts must be at least 1, got %d", cc.MaxAttempts))
	}
	if cc.MaxBackoff < 0 || cc.DialTimeout < 0 {
		errs = append(errs, fmt.Errorf("load: client timeouts must be positive"))
	}
	return errors.Join(errs...)
}

// unlimitedAttempts stands for "no cap on attempts" in the SDK's retryer,
// whose 0 means its default of 3: MaxCallElapsed ends the retries.
const unlimitedAttempts = 1 << 20

// NewClient builds a DynamoDB client for bulk writing and reading: the
// default config chain (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, profiles,
// the credential chain), the standard retryer bounded by time
// (MaxCallElapsed) rather than attempts, with each attempt bounded by
// CallTimeout and no client-side retry quota (ratelimit.None: sustained
// throttling must not fail a healthy run, the Writer paces itself), a
// connection pool sized for the concurrency, and short dial timeouts so
// that an unreachable endpoint fails in seconds.
// A Writer sends the BatchWriteItem calls of a client NewClient built, and
// of no other, without the SDK's per-call middleware (see "Request bodies"
// in the package documentation).
func NewClient(ctx context.Context, cc ClientConfig) (*dynamodb.Client, error) {
	cc = cc.WithDefaults()
	if err := cc.Validate(); err != nil {
		return nil, err
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) {
			d.Timeout = cc.DialTimeout
		}).
		WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = max(t.MaxIdleConns, 2*cc.Concurrency)
			t.MaxIdleConnsPerHost = 2 * cc.Concurrency
			// A backstop: the SDK's calls have a deadline per attempt
			// (callLimits) and the writer's direct calls their own, which
			// end first and say which limit ran out.
			t.ResponseHeaderTimeout = cc.CallTimeout + time.Second
			t.TLSHandshakeTimeout = cc.DialTimeout + 2*time.Second
			// A request of 25 bookstore-sized items, headers included,
			// goes out in one write (see bodyClient).
			t.WriteBufferSize = 64 << 10
		})
	// The SDK logs to stderr by default; its warnings (a response without
	// a checksum header from a local engine, the IMDS fallback) are noise
	// for a user, so they go to the caller's logger at debug level.
	logger := cc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sdkLog := logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		logger.Debug("aws sdk: "+fmt.Sprintf(format, v...), "class", string(c))
	})
	opts := []func(*config.LoadOptions) error{
		config.WithLogger(sdkLog),
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cc.MaxAttempts
				o.MaxBackoff = cc.MaxBackoff
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	if cc.Region != "" {
		opts = append(opts, config.WithRegion(cc.Region))
	}
	if cc.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(cc.Credentials))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load: AWS configuration: %w", err)
	}
	// Wrapped once the configuration is resolved: resolving a custom CA
	// bundle needs the SDK's own client type.
	awsCfg.HTTPClient = bodyClient{awsCfg.HTTPClient}
	if awsCfg.Region == "" {
		if cc.Endpoint == "" {
			return nil, fmt.Errorf("%w: set AWS_REGION or ClientConfig.Region", ErrNoRegion)
		}
		awsCfg.Region = "us-east-1"
	}
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cc.Endpoint != "" {
			o.BaseEndpoint = aws.String(cc.Endpoint)
		}
		o.EndpointResolverV2 = newEndpointCache(o.EndpointResolverV2)
		o.APIOptions = append(o.APIOptions, callLimits{timeout: cc.CallTimeout, maxElapsed: cc.MaxCallElapsed, reached: new(atomic.Bool)}.add)
	})
	markOwn(client)
	return client, nil
}

// ownClients holds the clients NewClient built, weakly: the Writer sends
// calls without the SDK's per-call middleware (direct.go) only on those. A
// client made any other way, even from one of these Options, may carry
// middleware of its maker's that must run on every call.
var ownClients sync.Map // weak.Pointer[dynamodb.Client] → struct{}

func markOwn(c *dynamodb.Client) {
	wp := weak.Make(c)
	ownClients.Store(wp, struct{}{})
	runtime.AddCleanup(c, func(wp weak.Pointer[dynamodb.Client]) { ownClients.Delete(wp) }, wp)
}

// ownClient says whether NewClient built c.
func ownClient(c *dynamodb.Client) bool {
	_, ok := ownClients.Load(weak.Make(c))
	return ok
}
