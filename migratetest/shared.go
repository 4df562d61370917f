package migratetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Services are the Postgres server and DynamoDB Local of the test process,
// for code that has no testing.TB: examples, benchmarks' set-up, TestMain.
type Services struct {
	pg, ddb *service
}

// Start returns the shared services, from the environment or from
// containers it starts (see the package documentation).
func Start(ctx context.Context) (*Services, error) {
	errPG := postgres.start(EnvPostgresURL, startPostgres)
	errDDB := dynamo.start(EnvDynamoDBEndpoint, startDynamoDB)
	if err := errors.Join(errPG, errDDB); err != nil {
		return nil, err
	}
	return &Services{pg: &postgres, ddb: &dynamo}, nil
}

// NewDatabase creates a new, empty database named name on the Postgres
// server and returns its URL and the function that drops it.
func (s *Services) NewDatabase(ctx context.Context, name string) (url string, drop func() error, err error) {
	return newDatabase(ctx, s.pg, name)
}

// DynamoDBEndpoint is the http://host:port endpoint of DynamoDB Local.
func (s *Services) DynamoDBEndpoint() string { return s.ddb.addr }

// DynamoDBClient returns a client of DynamoDB Local with the static
// credentials and region it accepts.
func (s *Services) DynamoDBClient() *dynamodb.Client { return dynamoDBClient(s.ddb.addr) }

// MainWithExamples is Main for a package whose examples use the services:
// it starts them before any test runs and calls setup (e.g. to load the
// examples' sample data), runs the tests and examples, then calls the
// cleanup setup returned. When the services cannot be had the examples are
// skipped with a loud reason, or, under CI=true, the test process fails.
func MainWithExamples(m *testing.M, setup func(context.Context, *Services) (cleanup func(), err error)) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		pattern := strings.SplitN(f.Value.String(), "/", 2)[0]
		if re, err := regexp.Compile(pattern); err == nil && !re.MatchString("Example") && !strings.Contains(pattern, "Example") {
			// -run names no example: their services are not needed, and
			// an example it matches by chance (-run Config matches
			// ExampleRunConfig_target) is left out rather than run
			// without them. Name Example in -run to run examples.
			skipExamples()
			Main(m)
			return
		}
	}
	// The setup's own time, after the services' (Start bounds those).
	svc, err := Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	cleanup := func() {}
	if err == nil && setup != nil {
		var c func()
		if c, err = setup(ctx, svc); c != nil {
			cleanup = c
		}
	}
	cancel()
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			fmt.Fprintf(os.Stderr, "migratetest: the examples' services are unavailable, and CI=%s does not allow skipping: %v\n", os.Getenv("CI"), err)
			_ = terminate()
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING the examples: their services are unavailable: %v\n!!! Run `make test`, or set %s and %s.\n\n", err, EnvPostgresURL, EnvDynamoDBEndpoint)
		skipExamples()
	}
	exit(m.Run(), cleanup)
}

// skipExamples adds the examples to -test.skip.
func skipExamples() {
	skip := "^Example"
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		skip = f.Value.String() + "|" + skip
	}
	_ = flag.Set("test.skip", skip)
}
