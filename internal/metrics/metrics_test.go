package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/affect"
)

func TestListenAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, err string }{
		{":9464", "127.0.0.1:9464", ""},
		{"0.0.0.0:9464", "0.0.0.0:9464", ""},
		{"[::1]:9", "[::1]:9", ""},
		{"9464", "", "want HOST:PORT"},
		{"host:", "", "no port"},
	} {
		got, err := ListenAddr(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ListenAddr(%q): err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// A sync's metrics and readiness follow its reports; the lag keeps
// growing between reports while WAL waits, so a stalled sync is not ready.
func TestSyncMetricsAndReadiness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := NewState(Config{Command: "sync", ReadyLag: 10 * time.Second, StatusEvery: 10 * time.Second})
	s.now = func() time.Time { return now }
	srv, err := Start("127.0.0.1:0", s, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	base := "http://" + srv.Addr()

	if code, body := get(t, base+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "not streaming yet") {
		t.Errorf("/readyz before streaming: %d %q", code, body)
	}

	obs := WrapSync(engine.NopSyncObserver{}, s)
	obs.Progress(contract.Progress{Entities: []contract.EntityProgress{{Entity: "Order", RowsRead: 5, ItemsWritten: 5}}})
	obs.Status(engine.SyncStatus{
		ServerLSN: 5000, Received: 4000, Confirmed: 3000, LagBytes: 2000, SlotRetainedBytes: 123456,
		LagSince: now.Add(-4 * time.Second), Transactions: 7, Changes: 9, Rounds: 2,
		TableChanges: map[string]int64{"public.orders": 9},
		Entities:     map[string]engine.SyncEntity{"Order": {Put: 3, Deleted: 1}},
		Fanout:       affect.Fanout{Items: 11},
		Writes:       engine.SyncWrites{Calls: 4, ThrottledCalls: 1, Retries: 2, Throttled: 2, LastError: now.Add(-time.Minute)},
	})
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`migrate_command_info{command="sync"} 1`,
		`migrate_build_info{version="v1.2.3"} 1`,
		"migrate_sync_lag_seconds 4\n",
		"migrate_sync_lag_bytes 2000\n",
		"migrate_sync_source_wal_lsn 5000\n",
		"migrate_sync_received_lsn 4000\n",
		"migrate_sync_confirmed_lsn 3000\n",
		"migrate_sync_slot_retained_wal_bytes 123456\n",
		"migrate_sync_caught_up 0\n",
		"migrate_sync_streaming 1\n",
		"migrate_sync_transactions_total 7\n",
		`migrate_sync_changes_total{table="public.orders"} 9`,
		`migrate_items_written_total{entity="Order"} 8`, // 5 loaded + 3 put
		`migrate_items_deleted_total{entity="Order"} 1`,
		`migrate_rows_read_total{entity="Order"} 5`,
		"migrate_sync_items_rerendered_total 11\n",
		"migrate_dynamodb_calls_total 4\n",
		"migrate_dynamodb_throttled_calls_total 1\n",
		"migrate_dynamodb_retries_total 2\n",
		"migrate_last_error_timestamp_seconds 1.76726874e+09\n",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, "lag 4.0s") {
		t.Errorf("/readyz at 4s lag: %d %q", code, body)
	}
	// No new report: the same WAL has now waited 12 s, over --ready-lag.
	now = now.Add(8 * time.Second)
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "lag 12.0s is over --ready-lag 10s") {
		t.Errorf("/readyz at 12s lag: %d %q", code, body)
	}
	// Caught up again.
	obs.Status(engine.SyncStatus{CaughtUp: true})
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz caught up: %d", code)
	}
	// A status that does not come back in time is not trusted.
	now = now.Add(31 * time.Second)
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "no status for 31s") {
		t.Errorf("/readyz with a stale status: %d %q", code, body)
	}
}

func TestRunReadiness(t *testing.T) {
	t.Parallel()
	s := NewState(Config{Command: "run"})
	if ok, _ := s.Ready(); ok {
		t.Error("ready before it started")
	}
	obs := WrapRun(contract.NopObserver{}, s)
	obs.Started(contract.RunStart{})
	obs.Progress(contract.Progress{Entities: []contract.EntityProgress{{Entity: "Book", RowsRead: 3, ItemsWritten: 2, Rejects: 1}},
		Writes: contract.WriteProgress{Calls: 5, ThrottledCalls: 2, Retries: 7, Throttled: 6}})
	if ok, why := s.Ready(); !ok {
		t.Errorf("not ready after start: %s", why)
	}
	srv, err := Start("127.0.0.1:0", s, "dev")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	_, body := get(t, "http://"+srv.Addr()+"/metrics")
	for _, want := range []string{`migrate_rows_read_total{entity="Book"} 3`, `migrate_items_written_total{entity="Book"} 2`, `migrate_rejects_total{entity="Book"} 1`,
		"migrate_dynamodb_calls_total 5\n", "migrate_dynamodb_throttled_calls_total 2\n", "migrate_dynamodb_retries_total 7\n", "migrate_dynamodb_throttled_items_total 6\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "migrate_sync_") {
		t.Error("a run serves sync metrics")
	}
	if v := regexp.MustCompile(`migrate_last_error_timestamp_seconds (\S+)`).FindStringSubmatch(body); v == nil || v[1] == "0" {
		t.Errorf("the retried calls left no last error time: %v", v)
	}
}

// The Grafana dashboard, the README's metrics table and its alert rules
// name only metrics the collector serves.
func TestDashboardMetricsExist(t *testing.T) {
	t.Parallel()
	served := map[string]bool{"migrate_build_info": true} // registered beside the collector
	ch := make(chan *prometheus.Desc, 64)
	go func() { NewCollector(NewState(Config{})).Describe(ch); close(ch) }()
	fq := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		served[fq.FindStringSubmatch(d.String())[1]] = true
	}
	data, err := os.ReadFile("../../deploy/grafana/migrate-sync.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if len(dash.Panels) < 5 {
		t.Errorf("dashboard has %d panels", len(dash.Panels))
	}
	var texts []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			texts = append(texts, tg.Expr)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	for _, line := range strings.Split(string(readme), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "| `migrate_") || strings.HasPrefix(trimmed, "expr: migrate_") {
			texts = append(texts, trimmed)
			rows++
		}
	}
	if rows < 15 {
		t.Errorf("found %d metric rows and alert rules in the README", rows)
	}
	name := regexp.MustCompile(`migrate_[a-z_]*[a-z]`)
	for _, text := range texts {
		for _, n := range name.FindAllString(text, -1) {
			if !served[n] {
				t.Errorf("%q is named (%s) but not served", n, text)
			}
		}
	}
}
