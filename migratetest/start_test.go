package migratetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go/wait"
)

// A failed start is tried once more, and only once; with no time left, not
// at all. The error names both tries.
func TestStartRetrying(t *testing.T) {
	t.Parallel()
	ok := &service{addr: "http://127.0.0.1:1"}
	cases := []struct {
		name    string
		results []error // of each call, in order
		expired bool    // ctx ends during the first call
		calls   int
		want    string // in the error; "" for success
	}{
		{name: "first works", results: []error{nil}, calls: 1},
		{name: "second works", results: []error{errors.New("port is already allocated"), nil}, calls: 2},
		{name: "both fail", results: []error{errors.New("container exited (1)"), errors.New("port is already allocated")}, calls: 2,
			want: "first: container exited (1); second: port is already allocated"},
		{name: "no time left", results: []error{errors.New("wait until ready: deadline"), nil}, expired: true, calls: 1,
			want: "wait until ready: deadline; the 5m0s for starting it ran out, no time left for a second try"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			calls := 0
			start := func(context.Context) (*service, error) {
				err := tc.results[calls]
				calls++
				if tc.expired {
					cancel()
				}
				if err != nil {
					return nil, err
				}
				return ok, nil
			}
			var logged []string
			s, err := startRetrying(ctx, start, func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) })
			if calls != tc.calls {
				t.Errorf("%d starts, want %d", calls, tc.calls)
			}
			if tc.want == "" {
				if err != nil || s != ok {
					t.Fatalf("startRetrying = %v, %v; want the service", s, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
			if retried := len(logged) > 0; retried != (tc.calls == 2) {
				t.Errorf("logged %q", logged)
			}
		})
	}
}

// blockingWait is a wait strategy that never sees its container ready.
type blockingWait struct{}

func (blockingWait) WaitUntilReady(ctx context.Context, _ wait.StrategyTarget) error {
	<-ctx.Done()
	return ctx.Err()
}

// A wait that runs out names the container, the wait, how long it waited
// and whose deadline ran out.
func TestWaitErrorNamesTheWait(t *testing.T) {
	t.Parallel()
	const container = "dynamodb container (image pgdynamo/dynamodb-local:3.3.1)"
	t.Run("own timeout", func(t *testing.T) {
		t.Parallel()
		w := namedWait{inner: blockingWait{}, container: container, what: "an HTTP answer to POST / on port 8000/tcp (wait.ForHTTP)", timeout: 50 * time.Millisecond}
		err := w.WaitUntilReady(t.Context(), nil)
		var we *waitError
		if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v (%T); want a *waitError wrapping the deadline", err, err)
		}
		for _, want := range []string{
			container + ": not ready: waited ",
			" (of 50ms) for an HTTP answer to POST / on port 8000/tcp (wait.ForHTTP), and its 50ms timeout ran out: context deadline exceeded",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if we.elapsed < 50*time.Millisecond {
			t.Errorf("waited %v, less than the timeout", we.elapsed)
		}
	})
	t.Run("start's deadline first", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		err := waitFor(ctx, "postgres container (image pgdynamo/postgres:15) at localhost:5432", "SELECT 1 to succeed on a new connection", time.Hour,
			func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		want := "postgres container (image pgdynamo/postgres:15) at localhost:5432: not ready: waited "
		want2 := " (of 1h0m0s) for SELECT 1 to succeed on a new connection, and the 5m0s for starting the service ran out first"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), want2) {
			t.Errorf("error %v; want %q ... %q", err, want, want2)
		}
	})
	t.Run("failed by itself", func(t *testing.T) {
		t.Parallel()
		err := waitFor(t.Context(), container, "port 8000/tcp to listen", time.Hour, func(context.Context) error {
			return errors.New("container exited with code 1")
		})
		if err == nil || !strings.HasSuffix(err.Error(), "for port 8000/tcp to listen, and it failed: container exited with code 1") {
			t.Errorf("error %v", err)
		}
	})
}
