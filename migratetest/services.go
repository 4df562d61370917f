package migratetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Environment variables read by this package.
const (
	EnvPostgresURL      = "MIGRATE_TEST_PG_URL"
	EnvDynamoDBEndpoint = "MIGRATE_TEST_DYNAMODB_ENDPOINT"
	EnvPostgresImage    = "MIGRATE_TEST_POSTGRES_IMAGE"
	EnvDynamoDBImage    = "MIGRATE_TEST_DYNAMODB_IMAGE"
)

// Images used when the environment names none.
const (
	DefaultPostgresImage = "postgres:16"
	DefaultDynamoDBImage = "amazon/dynamodb-local"
)

const (
	// readyTimeout bounds each wait for a started container to serve. On a
	// shared CI runner at load 30, DynamoDB Local's JVM was not serving
	// after 60 s; idle, both serve within seconds.
	readyTimeout = 3 * time.Minute
	// startTimeout bounds starting one service: both attempts (a failed
	// start is retried once), each creating a container and waiting.
	startTimeout = 5 * time.Minute
	// cleanupTimeout bounds dropping a test database and removing containers.
	cleanupTimeout = 2 * time.Minute

	// Labels on the containers this package starts, so that a later test
	// process can remove those of a process that died before Main cleaned up.
	labelHost = "org.pgdynamo.migratetest.host"
	labelPID  = "org.pgdynamo.migratetest.pid"
)

// A service is one server shared by all tests of the process, set up once.
type service struct {
	once      sync.Once
	addr      string // Postgres server URL or DynamoDB endpoint
	source    string // where addr came from, for the test log
	err       error
	container testcontainers.Container
}

// A starter creates a service's container and waits until it serves.
type starter func(context.Context) (*service, error)

var (
	postgres service
	dynamo   service
	reapOnce sync.Once
)

// Main runs the tests of a package that uses this package, then removes the
// containers the process started, and exits with the tests' exit code. Call
// it from TestMain. Without it the containers are removed when the test
// process exits (by a watchdog process), a little later.
func Main(m *testing.M) { exit(m.Run(), nil) }

// exit runs cleanup, removes the containers and exits with code, or 1 if
// the containers could not be removed.
func exit(code int, cleanup func()) {
	if cleanup != nil {
		cleanup()
	}
	if err := terminate(); err != nil {
		fmt.Fprintf(os.Stderr, "migratetest: removing containers: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func terminate() error {
	var errs []error
	for _, s := range []*service{&postgres, &dynamo} {
		if s.container == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		// Zero stop timeout: a Java PID 1 may never act on SIGTERM.
		errs = append(errs, s.container.Terminate(ctx, testcontainers.StopTimeout(0)))
		cancel()
	}
	return errors.Join(errs...)
}

// PostgresURL returns the URL of a new, empty database that only this test
// uses, on the shared Postgres server. The database is dropped (WITH FORCE,
// so open connections do not block it) when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	s := get(t, &postgres, EnvPostgresURL, startPostgres)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	db, drop, err := newDatabase(ctx, s, databaseName(t))
	if err != nil {
		t.Fatalf("migratetest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("migratetest: %v", err)
		}
	})
	t.Logf("migratetest: Postgres database %s on %s", redact(db), s.source)
	return db
}

// Exec runs sql (one or more statements) on database db, a URL from
// PostgresURL, and fails the test if it fails.
func Exec(t testing.TB, db, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := execAdmin(ctx, db, sql); err != nil {
		t.Fatalf("migratetest: exec %.200s: %v", sql, err)
	}
}

// newDatabase creates database name on the server of s and returns its URL
// and the function that drops it.
func newDatabase(ctx context.Context, s *service, name string) (string, func() error, error) {
	server, err := url.Parse(s.addr)
	if err != nil || (server.Scheme != "postgres" && server.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("%s must be a postgres:// URL, got %q", EnvPostgresURL, redact(s.addr))
	}
	ident := pgx.Identifier{name}.Sanitize()
	if err := execAdmin(ctx, s.addr, "CREATE DATABASE "+ident); err != nil {
		return "", nil, fmt.Errorf("create database %s on %s: %w", name, s.source, err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := execAdmin(ctx, s.addr, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	db := *server
	db.Path = "/" + name
	db.RawPath = ""
	return db.String(), drop, nil
}

// DynamoDBEndpoint returns the http://host:port endpoint of the shared
// DynamoDB Local. Tests share it: each uses its own tables (see TableName).
func DynamoDBEndpoint(t testing.TB) string {
	t.Helper()
	s := get(t, &dynamo, EnvDynamoDBEndpoint, startDynamoDB)
	t.Logf("migratetest: DynamoDB %s", s.source)
	return s.addr
}

// TableName returns a DynamoDB table name, prefix followed by a random
// suffix, that no other test uses. Characters DynamoDB does not allow in
// prefix are replaced with '_'.
func TableName(t testing.TB, prefix string) string {
	t.Helper()
	prefix = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, prefix)
	if prefix == "" {
		prefix = "test"
	}
	const maxPrefix = 255 - 1 - 12 // DynamoDB allows 255 characters.
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + "-" + randomHex(t, 6)
}

// DynamoDBClient returns a client for endpoint with the static credentials
// and region that DynamoDB Local accepts. It reads no AWS environment or
// configuration files.
func DynamoDBClient(t testing.TB, endpoint string) *dynamodb.Client {
	t.Helper()
	return dynamoDBClient(endpoint)
}

func dynamoDBClient(endpoint string) *dynamodb.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}

// get returns the shared service s, from environment variable env or from
// start, or ends the test: skipped, or failed under CI=true.
func get(t testing.TB, s *service, env string, start func(context.Context) (*service, error)) *service {
	t.Helper()
	if err := s.start(env, start); err != nil {
		// Tried once per process: later tests fail at once with the same
		// error rather than each waiting minutes again.
		unavailable(t, fmt.Errorf("%w (the first test that needed it started it; no test of this process tries again)", err))
	}
	return s
}

// start sets s up once: from environment variable env, or from start.
func (s *service) start(env string, start func(context.Context) (*service, error)) error {
	s.once.Do(func() {
		if v := os.Getenv(env); v != "" {
			s.addr = v
			s.source = fmt.Sprintf("%s (from %s)", redact(v), env)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		started, err := startRetrying(ctx, start, func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, format, args...)
		})
		if err != nil {
			s.err = err
			return
		}
		s.addr, s.source, s.container = started.addr, started.source, started.container
	})
	return s.err
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("integration services unavailable, and CI=%s does not allow skipping: %v", os.Getenv("CI"), err)
	}
	t.Skipf("\n"+
		"!!! SKIPPING integration test: no Docker engine or service image: %v\n"+
		"!!! Run `make test` (it starts a Docker engine and builds the images), or\n"+
		"!!! set %s and %s to running servers. Under CI=true this test fails.",
		err, EnvPostgresURL, EnvDynamoDBEndpoint)
}

// startRetrying starts a service, and once more if that fails while ctx
// leaves time: a container can die or a port be taken on a loaded host
// where a second try works. logf reports the first failure.
func startRetrying(ctx context.Context, start starter, logf func(format string, args ...any)) (*service, error) {
	begin := time.Now()
	s, err := start(ctx)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w; the %v for starting it ran out, no time left for a second try", err, startTimeout)
	}
	logf("migratetest: a service did not start after %v, trying once more: %v\n", time.Since(begin).Round(time.Millisecond), err)
	s, err2 := start(ctx)
	if err2 == nil {
		return s, nil
	}
	return nil, fmt.Errorf("did not start in two tries within %v: first: %v; second: %w", time.Since(begin).Round(10*time.Millisecond), err, err2)
}

// waitError says which wait for a container ran out or failed, and after
// how long.
type waitError struct {
	container string // "dynamodb container (image ...)"
	wait      string // what was waited for
	timeout   time.Duration
	elapsed   time.Duration
	why       string // which deadline ran out; "" when the wait failed by itself
	err       error
}

func (e *waitError) Error() string {
	why := e.why
	if why == "" {
		why = "it failed"
	}
	return fmt.Sprintf("%s: not ready: waited %v (of %v) for %s, and %s: %v",
		e.container, e.elapsed.Round(time.Millisecond), e.timeout, e.wait, why, e.err)
}

func (e *waitError) Unwrap() error { return e.err }

// waitFor runs ready within timeout and, when it fails, says which wait
// it was and whose deadline ran out: its own timeout, or the start's.
func waitFor(ctx context.Context, container, what string, timeout time.Duration, ready func(context.Context) error) error {
	parent := ctx
	// begin comes before the deadline is set, so that a wait that ran out
	// never reports less than its timeout.
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := ready(ctx)
	if err == nil {
		return nil
	}
	e := &waitError{container: container, wait: what, timeout: timeout, elapsed: time.Since(begin), err: err}
	switch {
	case parent.Err() != nil:
		e.why = fmt.Sprintf("the %v for starting the service ran out first", startTimeout)
	case ctx.Err() != nil:
		e.why = fmt.Sprintf("its %v timeout ran out", timeout)
	}
	return e
}

// namedWait is a testcontainers wait strategy that reports, when it fails,
// which container and which wait (see waitFor). The inner strategy's own
// timeout must be longer than timeout, so that this one's runs out first.
type namedWait struct {
	inner     wait.Strategy
	container string
	what      string
	timeout   time.Duration
}

func (w namedWait) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	return waitFor(ctx, w.container, w.what, w.timeout, func(ctx context.Context) error {
		return w.inner.WaitUntilReady(ctx, target)
	})
}

func (w namedWait) String() string { return w.what }

// innerTimeout is the inner strategies' own timeout: namedWait's comes first.
const innerTimeout = readyTimeout + time.Minute

func startPostgres(ctx context.Context) (*service, error) {
	image := imageFromEnv(EnvPostgresImage, DefaultPostgresImage)
	c, err := startContainer(ctx, testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{"5432/tcp"},
		// Logical replication (migrate sync), with room for the slots of
		// tests running at once. The official image's entrypoint passes
		// these options to the server; the local image runs this command.
		Cmd: []string{"postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=40", "-c", "max_wal_senders=40"},
		// The official image needs a password; the local one trusts any.
		Env: map[string]string{"POSTGRES_PASSWORD": "postgres"},
		WaitingFor: namedWait{
			inner:     wait.ForListeningPort("5432/tcp").WithStartupTimeout(innerTimeout),
			container: "postgres container (image " + image + ")",
			what:      "port 5432/tcp to listen (wait.ForListeningPort)",
			timeout:   readyTimeout,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("postgres container from image %s (%s): %w", image, EnvPostgresImage, err)
	}
	hostPort, err := c.PortEndpoint(ctx, "5432/tcp", "")
	if err == nil {
		addr := "postgres://postgres:postgres@" + hostPort + "/postgres?sslmode=disable"
		// The official image restarts once after initdb: the port can be open
		// before the server takes connections.
		err = waitFor(ctx, "postgres container (image "+image+") at "+hostPort, "SELECT 1 to succeed on a new connection", readyTimeout,
			func(ctx context.Context) error {
				return retry(ctx, func(ctx context.Context) error { return execAdmin(ctx, addr, "SELECT 1") })
			})
		if err == nil {
			return &service{addr: addr, container: c, source: describe(c, image, hostPort)}, nil
		}
	}
	return nil, errors.Join(fmt.Errorf("postgres container from image %s: %w", image, err), removeContainer(c))
}

func startDynamoDB(ctx context.Context) (*service, error) {
	image := imageFromEnv(EnvDynamoDBImage, DefaultDynamoDBImage)
	c, err := startContainer(ctx, testcontainers.ContainerRequest{
		Image:        image,
		ExposedPorts: []string{"8000/tcp"},
		// The official image's default command, plus -sharedDb: one database
		// whatever the credentials and region of a client.
		Cmd: []string{"-jar", "DynamoDBLocal.jar", "-inMemory", "-sharedDb"},
		Env: map[string]string{"DDB_LOCAL_TELEMETRY": "0"},
		// Any HTTP answer (400 for an unsigned request) means it serves.
		WaitingFor: namedWait{
			inner: wait.ForHTTP("/").WithPort("8000/tcp").WithMethod("POST").
				WithStatusCodeMatcher(func(int) bool { return true }).
				WithStartupTimeout(innerTimeout),
			container: "dynamodb container (image " + image + ")",
			what:      "an HTTP answer to POST / on port 8000/tcp (wait.ForHTTP)",
			timeout:   readyTimeout,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb container from image %s (%s): %w", image, EnvDynamoDBImage, err)
	}
	hostPort, err := c.PortEndpoint(ctx, "8000/tcp", "")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("dynamodb container from image %s: %w", image, err), removeContainer(c))
	}
	return &service{addr: "http://" + hostPort, container: c, source: describe(c, image, hostPort)}, nil
}

// startContainer starts req, labelled with this process, after removing
// containers left by test processes of this host that died.
func startContainer(ctx context.Context, req testcontainers.ContainerRequest) (c testcontainers.Container, err error) {
	// testcontainers panics when it finds no Docker host at all.
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("no Docker engine: %v", r)
		}
	}()
	reapOnce.Do(func() { reapOrphans(ctx) })
	host, _ := os.Hostname()
	req.Labels = map[string]string{labelHost: host, labelPID: strconv.Itoa(os.Getpid())}
	c, err = testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req,
		Started:          true,
	})
	if err != nil {
		return nil, errors.Join(err, removeContainer(c))
	}
	watch(c.GetContainerID())
	return c, nil
}

// reapOrphans removes the containers of test processes of this host that no
// longer run: Main never ran for them (killed, or timed out), and there is no
// reaper container (TESTCONTAINERS_RYUK_DISABLED) to do it. Best effort.
func reapOrphans(ctx context.Context) {
	if runtime.GOOS == "windows" {
		return // no signal 0 to tell whether a process lives
	}
	host, err := os.Hostname()
	if err != nil {
		return
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", labelHost+"="+host),
	})
	if err != nil {
		return
	}
	for _, c := range list.Items {
		pid, err := strconv.Atoi(c.Labels[labelPID])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

func removeContainer(c testcontainers.Container) error {
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	return c.Terminate(ctx, testcontainers.StopTimeout(0))
}

func describe(c testcontainers.Container, image, hostPort string) string {
	id := c.GetContainerID()
	if len(id) > 12 {
		id = id[:12]
	}
	return fmt.Sprintf("container %s (image %s) at %s, started by this test process", id, image, hostPort)
}

func imageFromEnv(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// execAdmin runs sql on a new connection to the server at addr.
func execAdmin(ctx context.Context, addr, sql string) error {
	conn, err := pgx.Connect(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// retry calls f until it succeeds or ctx ends, and then returns f's last
// error.
func retry(ctx context.Context, f func(context.Context) error) error {
	for {
		// A loaded host can take seconds to accept and authenticate.
		attempt, cancelAttempt := context.WithTimeout(ctx, 15*time.Second)
		err := f(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// databaseName is "t_", the test's name reduced to [a-z0-9_], and a random
// suffix, within Postgres' 63-byte identifier limit.
func databaseName(t testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if b.Len() >= 40 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "t_" + b.String() + "_" + randomHex(t, 6)
}

func randomHex(t testing.TB, n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatalf("migratetest: random: %v", err)
	}
	return hex.EncodeToString(buf)
}

// redact hides the password of a URL for logs and messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
