package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/migratetest"
)

// skewProxy stands in front of DynamoDB Local with a clock ahead of the
// local one, and checks each request's X-Amz-Date against it as DynamoDB
// does: more than 5 minutes off, and the answer is HTTP 400,
// InvalidSignatureException, "Signature expired", with the proxy's Date
// (on every answer, as AWS's carry its own). After stepAfter
// BatchWriteItem calls its clock jumps further ahead, as a host's does
// after a sleep, so that the writer's own calls meet expired signatures
// (the SDK has learnt the first offset from DescribeTable by then).
type skewProxy struct {
	ahead, step time.Duration
	stepAfter   int64
	writes      atomic.Int64 // BatchWriteItem calls received
	expired     atomic.Int64 // requests refused as expired
	expiredBWI  atomic.Int64 // of those, BatchWriteItem calls
}

func startSkewProxy(t *testing.T, endpoint string, p *skewProxy) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	clock := func(r *http.Request) time.Time {
		if d, ok := r.Context().Value(skewKey{}).(time.Duration); ok {
			return time.Now().Add(d).UTC()
		}
		return time.Now().Add(p.ahead).UTC()
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Header.Set("Date", clock(resp.Request).Format(http.TimeFormat))
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem"
		ahead := p.ahead
		if write && p.writes.Add(1) > p.stepAfter {
			ahead += p.step
		}
		r = r.WithContext(context.WithValue(r.Context(), skewKey{}, ahead))
		now := clock(r)
		const stamp = "20060102T150405Z"
		at, err := time.Parse(stamp, r.Header.Get("X-Amz-Date"))
		if err == nil && now.Sub(at).Abs() <= 5*time.Minute {
			rp.ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		p.expired.Add(1)
		if write {
			p.expiredBWI.Add(1)
		}
		w.Header().Set("Date", now.Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"Signature expired: %s is now earlier than %s (%s - 5 min.)"}`,
			at.Format(stamp), now.Add(-5*time.Minute).Format(stamp), now.Format(stamp))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type skewKey struct{}

// testClockSkew migrates the bookstore in-process through skewProxy, 10
// minutes ahead and 10 more after 20 calls, with the direct calls and with
// --sdk-middleware: both runs complete, the table equals the clean run's,
// and the summary counts the direct calls.
func testClockSkew(t *testing.T, f *fixture) {
	for _, sdkCalls := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk-middleware=%v", sdkCalls), func(t *testing.T) {
			p := &skewProxy{ahead: 10 * time.Minute, step: 10 * time.Minute, stepAfter: 20}
			endpoint := startSkewProxy(t, f.endpoint, p)
			table := migratetest.TableName(t, "skew")
			summaryPath := filepath.Join(t.TempDir(), "summary.json")
			args := []string{"run", "--mapping", bookstoreMapping, "--pg", f.pg, "--endpoint", endpoint,
				"--table", table, "--create-table", "--quiet", "--state", filepath.Join(t.TempDir(), "state.json"),
				"--summary-json", summaryPath}
			if sdkCalls {
				args = append(args, "--sdk-middleware")
			}
			out, errOut, code := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("run through a clock 10 minutes ahead exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			t.Logf("%d BatchWriteItem calls; %d requests refused as expired, %d of them BatchWriteItem\n%s",
				p.writes.Load(), p.expired.Load(), p.expiredBWI.Load(), out)
			if p.expired.Load() == 0 || p.expiredBWI.Load() == 0 {
				t.Errorf("no request (%d) or no BatchWriteItem call (%d) was refused as expired: the test tests nothing",
					p.expired.Load(), p.expiredBWI.Load())
			}
			var sum engine.RunResult
			data, err := os.ReadFile(summaryPath)
			if err != nil || json.Unmarshal(data, &sum) != nil {
				t.Fatalf("summary JSON: %v\n%s", err, data)
			}
			if sum.Status != "complete" || (sum.Writer.DirectCalls > 0) == sdkCalls || sum.Writer.DirectFallbacks > p.expiredBWI.Load() {
				t.Errorf("summary: status %s, writer %+v", sum.Status, sum.Writer)
			}
			sameItems(t, "table written through a skewed clock", scanCanonical(t, f.ddb, table), f.clean)
		})
	}
}
