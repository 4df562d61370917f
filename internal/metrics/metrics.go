// Package metrics serves what an operator watches while a long command
// runs: Prometheus metrics on /metrics, liveness on /healthz and readiness
// on /readyz, from one HTTP listener (--metrics-addr).
//
// The engine reports through its observers; the wrappers here keep the
// last report, and the collector turns it into metrics when Prometheus
// scrapes. Labels carry entity and table names only: never a row value,
// SQL text or a secret.
package metrics

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
)

const namespace = "migrate"

// State holds the last report of the command being watched. Its methods are
// safe for concurrent use: observers write it from the engine, the HTTP
// handlers read it.
type State struct {
	mu sync.Mutex
	// Command is "sync", "run" or "export".
	command string
	// ReadyLag is the lag /readyz accepts from a sync.
	readyLag time.Duration
	// stale is how old a sync's last status may be before /readyz stops
	// trusting it (a round retrying for long sends none).
	stale time.Duration

	started    time.Time // the command's start
	streaming  bool      // a sync's stream has begun
	syncStatus engine.SyncStatus
	statusAt   time.Time
	progress   contract.Progress
	runStarted bool
	runDone    bool
	failedAt   time.Time
	retriedAt  time.Time // a run's: when its progress last showed a retried call
	now        func() time.Time
}

// Config says what a State watches.
type Config struct {
	Command string
	// ReadyLag is the largest lag at which a sync is ready. Default 30s.
	ReadyLag time.Duration
	// StatusEvery is how often the sync reports; /readyz distrusts a
	// status older than three of these (at least 30s).
	StatusEvery time.Duration
}

// NewState returns a State for a command starting now.
func NewState(c Config) *State {
	if c.ReadyLag <= 0 {
		c.ReadyLag = 30 * time.Second
	}
	return &State{command: c.Command, readyLag: c.ReadyLag, stale: max(3*c.StatusEvery, 30*time.Second), started: time.Now(), now: time.Now}
}

// Failed records that the command failed now (the time of the last error).
func (s *State) Failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failedAt = s.now()
}

// Ready says whether the command is ready, and why not.
func (s *State) Ready() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	switch s.command {
	case "sync":
		if !s.streaming {
			return false, "not streaming yet (creating the slot or loading the table)"
		}
		if age := now.Sub(s.statusAt); age > s.stale {
			return false, fmt.Sprintf("no status for %s (a round may be retrying)", age.Round(time.Second))
		}
		if lag := s.lagLocked(now); lag > s.readyLag.Seconds() {
			return false, fmt.Sprintf("lag %.1fs is over --ready-lag %s", lag, s.readyLag)
		}
		return true, fmt.Sprintf("streaming, lag %.1fs", s.lagLocked(now))
	default:
		if !s.runStarted {
			return false, "not reading yet (checking the source and the target)"
		}
		return true, "running"
	}
}

// lagLocked is the sync's lag in seconds now: it grows between two
// statuses while something waits, so a stalled sync does not look fresh.
func (s *State) lagLocked(now time.Time) float64 {
	st := s.syncStatus
	if st.CaughtUp {
		return 0
	}
	lag := st.LagSeconds
	if !st.LagSince.IsZero() {
		lag = max(lag, now.Sub(st.LagSince).Seconds())
	}
	return lag
}

type syncObserver struct {
	engine.SyncObserver
	s *State
}

// WrapSync returns an observer that records a sync's reports in s and
// passes them on to next.
func WrapSync(next engine.SyncObserver, s *State) engine.SyncObserver {
	return &syncObserver{SyncObserver: next, s: s}
}

func (o *syncObserver) Status(st engine.SyncStatus) {
	o.s.mu.Lock()
	o.s.streaming, o.s.syncStatus, o.s.statusAt = true, st, o.s.now()
	o.s.mu.Unlock()
	o.SyncObserver.Status(st)
}

func (o *syncObserver) Started(r contract.RunStart) {
	o.s.mu.Lock()
	o.s.runStarted = true
	o.s.mu.Unlock()
	o.SyncObserver.Started(r)
}

func (o *syncObserver) Progress(p contract.Progress) {
	o.s.mu.Lock()
	o.s.progress = p
	o.s.mu.Unlock()
	o.SyncObserver.Progress(p)
}

type runObserver struct {
	contract.Observer
	s *State
}

// WrapRun returns an observer that records a run's or an export's
// progress in s and passes it on to next.
func WrapRun(next contract.Observer, s *State) contract.Observer {
	return &runObserver{Observer: next, s: s}
}

func (o *runObserver) Started(r contract.RunStart) {
	o.s.mu.Lock()
	o.s.runStarted = true
	o.s.mu.Unlock()
	o.Observer.Started(r)
}

func (o *runObserver) Progress(p contract.Progress) {
	o.s.mu.Lock()
	prev := o.s.progress.Writes
	if p.Writes.Retries > prev.Retries || p.Writes.ThrottledCalls > prev.ThrottledCalls {
		// A call failed (and was retried) since the last report.
		o.s.retriedAt = o.s.now()
	}
	o.s.progress = p
	o.s.runDone = o.s.runDone || p.Done
	o.s.mu.Unlock()
	o.Observer.Progress(p)
}

// desc is one metric's description.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
}

var (
	descUp            = desc("command_info", "The command this process runs (always 1).", "command")
	descStart         = desc("start_time_seconds", "When the command started, in seconds since the epoch.")
	descLastError     = desc("last_error_timestamp_seconds", "When a DynamoDB call last failed (and was retried) or the command failed; 0 when never.")
	descRowsRead      = desc("rows_read_total", "Source rows read, by entity.", "entity")
	descItemsWritten  = desc("items_written_total", "Items DynamoDB acknowledged, by entity (sync: items put).", "entity")
	descItemsDeleted  = desc("items_deleted_total", "Items deleted, by entity (sync).", "entity")
	descRejects       = desc("rejects_total", "Rows or items refused and written to the reject file, by entity.", "entity")
	descLagSeconds    = desc("sync_lag_seconds", "Age of the oldest source WAL not yet applied, from samples of the source's WAL position and commit times (0 when caught up).")
	descLagBytes      = desc("sync_lag_bytes", "Source WAL position minus the confirmed position.")
	descServerLSN     = desc("sync_source_wal_lsn", "The source's current WAL position (the end of the last record inserted, pg_current_wal_insert_lsn), as a byte offset.")
	descReceivedLSN   = desc("sync_received_lsn", "Position of the last message received from the slot, as a byte offset.")
	descConfirmedLSN  = desc("sync_confirmed_lsn", "Position up to which every change is applied and confirmed to the slot, as a byte offset.")
	descRetained      = desc("sync_slot_retained_wal_bytes", "WAL the replication slot holds back on the source (pg_current_wal_lsn - restart_lsn).")
	descCaughtUp      = desc("sync_caught_up", "1 when every change up to the source's WAL position is applied.")
	descStreaming     = desc("sync_streaming", "1 once the initial load is done and the stream runs.")
	descTransactions  = desc("sync_transactions_total", "Source transactions received.")
	descChanges       = desc("sync_changes_total", "Row changes read from the slot, by source table.", "table")
	descRerendered    = desc("sync_items_rerendered_total", "Items the changes affected and re-rendered (a change's own items, and the items that embed or copy its row).")
	descRounds        = desc("sync_rounds_total", "Rounds applied.")
	descApplyLatency  = desc("sync_apply_latency_seconds", "Commit-to-acknowledged time of the oldest transaction of the last round.")
	descCalls         = desc("dynamodb_calls_total", "BatchWriteItem calls made by the writer.")
	descThrottledCall = desc("dynamodb_throttled_calls_total", "Calls throttled, or answered with UnprocessedItems.")
	descRetries       = desc("dynamodb_retries_total", "Item sends beyond the first (after a failed call or as UnprocessedItems).")
	descThrottled     = desc("dynamodb_throttled_items_total", "Item sends DynamoDB throttled.")
)

// Collector turns a State into metrics when Prometheus scrapes.
type Collector struct{ s *State }

// NewCollector returns the collector of s.
func NewCollector(s *State) *Collector { return &Collector{s: s} }

// Describe sends the descriptions of every metric Collect may send.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descStart, descLastError, descRowsRead, descItemsWritten, descItemsDeleted,
		descRejects, descLagSeconds, descLagBytes, descServerLSN, descReceivedLSN, descConfirmedLSN, descRetained, descCaughtUp,
		descStreaming, descTransactions, descChanges, descRerendered, descRounds, descApplyLatency, descCalls, descThrottledCall,
		descRetries, descThrottled} {
		ch <- d
	}
}

// Collect sends the metrics of the last report.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(descUp, 1, s.command)
	gauge(descStart, unix(s.started))

	// Entities of the run, or of a sync's initial load.
	for _, e := range s.progress.Entities {
		counter(descRowsRead, float64(e.RowsRead), e.Entity)
		counter(descRejects, float64(e.Rejects), e.Entity)
		if s.command != "sync" {
			counter(descItemsWritten, float64(e.ItemsWritten), e.Entity)
		}
	}
	lastError := s.failedAt
	if s.command != "sync" {
		w := s.progress.Writes
		counter(descCalls, float64(w.Calls))
		counter(descThrottledCall, float64(w.ThrottledCalls))
		counter(descRetries, float64(w.Retries))
		counter(descThrottled, float64(w.Throttled))
		if s.retriedAt.After(lastError) {
			lastError = s.retriedAt
		}
	}
	if s.command == "sync" {
		st := s.syncStatus
		if st.Writes.LastError.After(lastError) {
			lastError = st.Writes.LastError
		}
		// Items of the initial load and of the stream, by entity.
		written := map[string]int64{}
		for _, e := range s.progress.Entities {
			written[e.Entity] += e.ItemsWritten
		}
		for name, e := range st.Entities {
			written[name] += e.Put
		}
		for _, name := range sortedKeys(written) {
			counter(descItemsWritten, float64(written[name]), name)
		}
		for _, name := range sortedKeys(st.Entities) {
			counter(descItemsDeleted, float64(st.Entities[name].Deleted), name)
		}
		gauge(descStreaming, bool01(s.streaming))
		if s.streaming {
			gauge(descLagSeconds, s.lagLocked(now))
			gauge(descLagBytes, float64(st.LagBytes))
			gauge(descServerLSN, float64(st.ServerLSN))
			gauge(descReceivedLSN, float64(st.Received))
			gauge(descConfirmedLSN, float64(st.Confirmed))
			if st.SlotRetainedBytes >= 0 {
				gauge(descRetained, float64(st.SlotRetainedBytes))
			}
			gauge(descCaughtUp, bool01(st.CaughtUp))
			gauge(descApplyLatency, st.LastLatency)
		}
		counter(descTransactions, float64(st.Transactions))
		for _, t := range sortedKeys(st.TableChanges) {
			counter(descChanges, float64(st.TableChanges[t]), t)
		}
		counter(descRerendered, float64(st.Fanout.Items))
		counter(descRounds, float64(st.Rounds))
		counter(descCalls, float64(st.Writes.Calls))
		counter(descThrottledCall, float64(st.Writes.ThrottledCalls))
		counter(descRetries, float64(st.Writes.Retries))
		counter(descThrottled, float64(st.Writes.Throttled))
	}
	gauge(descLastError, unix(lastError))
}

func unix(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
