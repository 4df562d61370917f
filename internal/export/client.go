package export

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
)

// ErrNoRegion is wrapped by NewS3Client when neither the configuration nor
// the environment names a region and there is no custom endpoint.
var ErrNoRegion = errors.New("export: no AWS region for S3")

// S3ClientConfig configures NewS3Client.
type S3ClientConfig struct {
	// Endpoint overrides the S3 endpoint (an S3-compatible store, a test
	// server). When empty the SDK resolves it, honouring
	// AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL.
	Endpoint string
	// Region overrides the region of the environment and shared config.
	// With neither, and an Endpoint, "us-east-1" is used.
	Region string
	// PathStyle addresses buckets as endpoint/bucket/key instead of
	// bucket.endpoint/key, as most S3-compatible stores want.
	PathStyle bool
	// Logger receives the SDK's own log lines at debug level.
	Logger *slog.Logger
}

// NewS3Client builds an S3 client from the standard AWS configuration
// chain (environment, shared config and credentials, instance roles) and
// cc's overrides.
func NewS3Client(ctx context.Context, cc S3ClientConfig) (*s3.Client, error) {
	logger := cc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := []func(*config.LoadOptions) error{
		config.WithLogger(logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			logger.Debug("aws sdk: "+fmt.Sprintf(format, v...), "class", string(c))
		})),
	}
	if cc.Region != "" {
		opts = append(opts, config.WithRegion(cc.Region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("export: AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		if cc.Endpoint == "" {
			return nil, fmt.Errorf("%w: set AWS_REGION or S3ClientConfig.Region", ErrNoRegion)
		}
		awsCfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cc.Endpoint != "" {
			o.BaseEndpoint = aws.String(cc.Endpoint)
		}
		o.UsePathStyle = cc.PathStyle
	}), nil
}
