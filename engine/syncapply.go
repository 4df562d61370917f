package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/transform"
)

// applier applies the stream in rounds: it collects the changes received
// (up to MaxBatch, or as many as have arrived), finds and renders the
// items they affect in one snapshot, writes them, and once DynamoDB
// acknowledged all of them confirms the position of the last transaction
// the round completed. A round is collected and resolved while the round
// before it is written; its own write starts only once that one is
// acknowledged, so two writes of one item are never in flight at once,
// and positions are confirmed in order.
type applier struct {
	cfg    SyncConfig
	log    *slog.Logger
	ss     *streamSource
	stream *replicate.Stream
	conn   *pgx.Conn // reads rounds and the server's position
	start  time.Time

	batch *affect.Batch
	// added are the changes in the batch, to build it again for a round
	// that is tried again (Resolve counts into its batch).
	added []*replicate.Change
	xids  []uint32  // transactions with changes in the batch
	first time.Time // commit time of the batch's oldest transaction
	inTxn bool
	// pending is the position to confirm once the batch is applied: the end
	// of the last transaction whose changes are all in it or applied.
	// started is the position of the last round begun (being written, or
	// confirmed).
	pending, confirmed, started LSN
	// writing delivers the round being written once DynamoDB acknowledged
	// it (or failed); nil when no round is being written.
	writing  chan written
	caughtUp bool
	// catchUpTo is the position UntilCaughtUp waits for.
	catchUpTo LSN
	// schema is the definition of the tables as the items were rendered
	// with (the state file's record); following is set while a schema
	// change is being followed.
	schema    []extract.TableSchema
	following bool
	// capacity is what the table takes at once (load.CapacityOf): where
	// each round's writer starts, instead of unlimited.
	capacity load.TableCapacity

	// counts
	txns, changes, puts, deletes, rounds atomic.Int64
	fanout                               Fanout
	lastLatency                          time.Duration
	server                               LSN
	received                             LSN
	lastMessage                          time.Time
	tableChanges                         map[string]int64
	entities                             map[string]SyncEntity
	writes                               SyncWrites
	// walSamples are the source's WAL positions this sync saw, oldest
	// first, from the oldest not yet confirmed on (see lagSince).
	walSamples []walSample
	// rate window
	lastStatus            time.Time
	lastChanges, lastItem int64
}

func (a *applier) run(ctx context.Context) error {
	msgs := make(chan replicate.Message, 4*a.cfg.MaxBatch)
	streamCtx, stopStream := context.WithCancel(context.WithoutCancel(ctx))
	streamErr := make(chan error, 1)
	go func() { streamErr <- a.stream.Run(streamCtx, msgs) }()
	defer func() {
		stopStream()
		<-streamErr
	}()

	a.batch = a.ss.graph.NewBatch()
	a.lastStatus, a.lastMessage = time.Now(), time.Now()
	status := time.NewTicker(a.cfg.StatusEvery)
	defer status.Stop()
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	// A first status says the stream has begun (a readiness probe waits
	// for it) and samples the source's WAL position.
	a.cfg.Observer.Status(a.status(ctx, false))
	var check <-chan time.Time
	if a.cfg.UntilCaughtUp {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		check = t.C
	}
	// A round, once begun, runs to its end even when ctx ends: its
	// position is then confirmed, and a restart repeats less. ctx only
	// stops the loop between rounds; but the slot guard (--max-slot-wal)
	// ends the round too.
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	stopWork := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); errors.Is(cause, ErrSlotWALLimit) {
			cancelWork(cause)
		}
	})
	defer stopWork()
	// DDL while no sync ran, or during the initial load.
	if err := a.checkSchema(work, "since the items were rendered"); err != nil {
		return err
	}
	// The target of --until-caught-up is read now; it is checked again
	// after every round, not only by the ticker (checkCaughtUp reads
	// nothing until the confirmed position reaches it).
	caughtUp := func() (bool, error) {
		if !a.cfg.UntilCaughtUp {
			return false, nil
		}
		if err := a.checkCaughtUp(work); err != nil {
			return false, err
		}
		return a.caughtUp, nil
	}
	if done, err := caughtUp(); err != nil || done {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); errors.Is(cause, ErrSlotWALLimit) {
				return cause
			}
			// Finish what was received: the round is applied and
			// confirmed, so that a restart repeats less.
			err := a.apply(work)
			return errors.Join(kinded(ErrInterrupted, fmt.Errorf("sync interrupted")), err)
		case err := <-streamErr:
			streamErr <- err // for the deferred wait
			return fmt.Errorf("sync: the replication stream stopped: %w", err)
		case <-status.C:
			// DDL with no change after it sends no Relation message: look.
			if err := a.checkSchema(work, "while streaming"); err != nil {
				return err
			}
			a.cfg.Observer.Status(a.status(ctx, false))
		case <-sample.C:
			a.sampleWAL(ctx)
		case <-check:
			if done, err := caughtUp(); err != nil || done {
				return err
			}
		case w := <-a.writing:
			a.writing = nil
			if err := a.finish(w); err != nil {
				return err
			}
			if done, err := caughtUp(); err != nil || done {
				return err
			}
		case m := <-msgs:
			if err := a.handle(work, m); err != nil {
				return err
			}
			// Begin a round once the batch is full, or when nothing more
			// is waiting: rounds grow with the load and stay small when
			// idle.
			if a.batch.Len() >= a.cfg.MaxBatch || (len(msgs) == 0 && (a.batch.Len() > 0 || a.pending > a.started)) {
				if err := a.begin(work); err != nil {
					return err
				}
				if done, err := caughtUp(); err != nil || done {
					return err
				}
			}
		}
	}
}

// handle takes one message of the stream.
func (a *applier) handle(ctx context.Context, m replicate.Message) error {
	if m.Kind != replicate.KindPosition {
		a.lastMessage = time.Now() // keepalives come while the server reads old WAL too
	}
	if m.LSN > a.received {
		a.received = m.LSN
	}
	switch m.Kind {
	case replicate.KindBegin:
		a.inTxn = true
		a.xids = append(a.xids, m.Xid)
		if a.first.IsZero() {
			a.first = m.Time
		}
	case replicate.KindChange:
		a.changes.Add(1)
		if m.Change != nil && m.Change.Rel != nil {
			if a.tableChanges == nil {
				a.tableChanges = map[string]int64{}
			}
			a.tableChanges[m.Change.Rel.Table.String()]++
		}
		err := a.batch.Add(m.Change)
		if err == nil {
			a.added = append(a.added, m.Change)
		}
		var ie *affect.IdentityError
		if errors.As(err, &ie) {
			// The identity was changed after sync checked it: the WAL
			// lacks these old values for good.
			return kinded(ErrSchemaChanged, fmt.Errorf("sync: a change of %s (transaction %d) was written while the table's replica identity lacked columns: %w. "+
				"Its old values are not in the WAL, so the items it affects cannot be found; the slot stays at %s. "+
				"To go on: give the table the identity it needs, drop the slot and publication (migrate sync --drop), then sync again into a new or emptied table",
				m.Change.Rel.Table, m.Xid, err, a.confirmed))
		}
		return err
	case replicate.KindTruncate:
		return a.truncate(ctx, m)
	case replicate.KindRelation:
		// Sent before the first change of a table after DDL changed it;
		// what it says is as of that change, the catalog is as of now,
		// and rounds read rows now: the catalog decides.
		if i := slices.IndexFunc(a.schema, func(t extract.TableSchema) bool { return t.Schema == m.Rel.Schema && t.Name == m.Rel.Name }); i >= 0 && relationDiffers(m.Rel, a.schema[i]) {
			return a.checkSchema(ctx, "(the stream describes table "+m.Rel.Table.String()+" anew)")
		}
	case replicate.KindCommit:
		a.inTxn = false
		a.txns.Add(1)
		a.pending = m.LSN
	case replicate.KindPosition:
		if !a.inTxn && m.LSN > a.pending {
			a.pending = m.LSN
		}
	}
	return nil
}

// apply applies the batch and confirms the pending position: when it
// returns, every change received is in the table.
func (a *applier) apply(ctx context.Context) error {
	if err := a.begin(ctx); err != nil {
		return err
	}
	return a.wait()
}

// written is a round's write, once acknowledged or failed.
type written struct {
	res   *affect.Result
	st    contract.Stats
	err   error
	pos   LSN       // to confirm once written
	first time.Time // commit time of the round's oldest transaction
}

// begin resolves the batch, waits until the round before it is written,
// and starts writing this one; finish confirms its position once it is
// written.
func (a *applier) begin(ctx context.Context) error {
	var res *affect.Result
	if a.batch.Len() > 0 {
		var err error
		if res, err = a.resolve(ctx); err != nil {
			return err
		}
		a.rounds.Add(1)
	}
	w := written{res: res, pos: a.pending, first: a.first}
	// Only transactions that ended are confirmed; one still open keeps its
	// xid for the next round's visibility check.
	if a.inTxn && len(a.xids) > 0 {
		a.xids = a.xids[len(a.xids)-1:]
	} else {
		a.xids, a.first = a.xids[:0], time.Time{}
	}
	a.batch, a.added = a.ss.graph.NewBatch(), a.added[:0]
	a.started = max(a.started, w.pos)
	if err := a.wait(); err != nil {
		return err
	}
	items := roundItems(res)
	if len(items) == 0 {
		return a.finish(w)
	}
	done := make(chan written, 1)
	a.writing = done
	go func() {
		w.st, w.err = a.writeItems(ctx, items)
		done <- w
	}()
	return nil
}

// wait waits for the round being written, if any, and finishes it.
func (a *applier) wait() error {
	if a.writing == nil {
		return nil
	}
	w := <-a.writing
	a.writing = nil
	return a.finish(w)
}

// finish counts a written round and confirms its position.
func (a *applier) finish(w written) error {
	if err := a.recordWrite(w.st, w.err); err != nil {
		return err
	}
	if res := w.res; res != nil {
		a.fanout.Changes += res.Fanout.Changes
		a.fanout.Items += res.Fanout.Items
		if res.Fanout.Max > a.fanout.Max {
			a.fanout.Max, a.fanout.MaxChange = res.Fanout.Max, res.Fanout.MaxChange
		}
		a.puts.Add(int64(len(res.Puts)))
		a.deletes.Add(int64(len(res.Deletes)))
		if a.entities == nil {
			a.entities = map[string]SyncEntity{}
		}
		for _, it := range res.Puts {
			e := a.entities[it.Entity]
			e.Put++
			a.entities[it.Entity] = e
		}
		for _, it := range res.Deletes {
			e := a.entities[it.Entity]
			e.Deleted++
			a.entities[it.Entity] = e
		}
		if !w.first.IsZero() {
			a.lastLatency = time.Since(w.first)
		}
	}
	if w.pos > a.confirmed {
		a.confirmed = w.pos
		a.stream.Confirm(a.confirmed)
	}
	return nil
}

// roundItems are the writes of a resolved round.
func roundItems(res *affect.Result) []contract.Item {
	if res == nil {
		return nil
	}
	items := make([]contract.Item, 0, len(res.Puts)+len(res.Deletes))
	for _, it := range res.Puts {
		items = append(items, contract.Item{Attrs: it.Attrs, Origin: contract.Origin{Entity: it.Entity, Table: it.Table, SourceKey: it.SourceKey}})
	}
	for _, it := range res.Deletes {
		items = append(items, contract.Item{Attrs: it.Attrs, Delete: true, Origin: contract.Origin{Entity: it.Entity, Table: it.Table, SourceKey: it.SourceKey}})
	}
	return items
}

// resolve resolves the batch in a snapshot that sees all its
// transactions.
func (a *applier) resolve(ctx context.Context) (*affect.Result, error) {
	var res *affect.Result
	err := a.retrying(ctx, "resolving a round", func(try int) error {
		if try > 1 {
			// Resolve counted into the batch: a fresh one from the same
			// changes.
			a.batch = a.ss.graph.NewBatch()
			for _, c := range a.added {
				if err := a.batch.Add(c); err != nil {
					return err
				}
			}
		}
		if !a.batch.NeedsRead() {
			// Every change renders from the stream: no snapshot to wait for.
			var err error
			res, err = a.batch.Resolve(ctx, nil, a.maxFanout())
			return err
		}
		return a.inSnapshot(ctx, a.xids, func(tx *extract.Snapshot) error {
			var err error
			res, err = a.batch.Resolve(ctx, tx, a.maxFanout())
			return err
		})
	})
	if err != nil {
		// DDL not yet seen in the stream makes queries fail, or rows
		// render wrong: when it is that, say which.
		if cur, rerr := readSchemas(ctx, a.conn, a.schema); rerr == nil {
			if serr := stopOn(diffSchemas(a.schema, cur, a.ss.graph), a.confirmed, "while streaming"); serr != nil {
				return nil, serr
			}
		}
	}
	var fe *affect.FanoutError
	var re *transform.RowError
	switch {
	case errors.As(err, &fe):
		return nil, fmt.Errorf("sync: %w; nothing of its transaction was applied. Raise --max-fanout (%d) if this is expected, then sync again: the slot resumes at %s", fe, fe.Max, a.confirmed)
	case errors.As(err, &re):
		return nil, fmt.Errorf("sync: bad row: %w; fix the row in the source, then sync again: the slot resumes at %s", re, a.confirmed)
	case err != nil:
		return nil, fmt.Errorf("sync: %w", err)
	}
	return res, nil
}

func (a *applier) maxFanout() int {
	if a.cfg.MaxFanout < 0 {
		return 0
	}
	return a.cfg.MaxFanout
}

// write writes items with a writer of their own and returns once each is
// acknowledged, or the reason one was not.
func (a *applier) write(ctx context.Context, items []contract.Item) error {
	st, err := a.writeItems(ctx, items)
	return a.recordWrite(st, err)
}

// writerConfig is the sync's writer configuration, starting at the
// table's capacity unless the caller gave one.
func (a *applier) writerConfig() load.Config {
	c := a.cfg.writerConfig()
	if c.Capacity == (load.TableCapacity{}) {
		c.Capacity = a.capacity
	}
	return c
}

// writeItems writes items and returns once each is acknowledged; it
// changes nothing of the applier (a round is written while the next is
// resolved).
func (a *applier) writeItems(ctx context.Context, items []contract.Item) (contract.Stats, error) {
	if len(items) == 0 {
		return contract.Stats{}, nil
	}
	w, err := load.NewWriter(a.cfg.DynamoDB, a.writerConfig())
	if err != nil {
		return contract.Stats{}, err
	}
	var acked atomic.Int64
	ch := make(chan contract.Item, len(items))
	for _, it := range items {
		it.Ack = func() { acked.Add(1) }
		ch <- it
	}
	close(ch)
	// Once sent, a round is written to its end even when ctx ends: its
	// position is then confirmed, and a restart repeats less.
	// ctx is the loop's work context: it outlives an interruption, but
	// not the slot guard.
	st, err := w.Write(ctx, ch)
	if n := acked.Load(); err == nil && n != int64(len(items)) {
		err = &unacknowledgedError{acked: n, items: len(items)}
	}
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, ErrSlotWALLimit) {
			return st, cause
		}
	}
	return st, err
}

// unacknowledgedError is a write that ended without an error but without
// every item acknowledged.
type unacknowledgedError struct {
	acked int64
	items int
}

func (e *unacknowledgedError) Error() string {
	return fmt.Sprintf("sync: %d of %d items acknowledged", e.acked, e.items)
}

// recordWrite counts a write's calls and says what its error means.
func (a *applier) recordWrite(st contract.Stats, err error) error {
	a.writes.Calls += st.Calls
	a.writes.ThrottledCalls += st.ThrottledCalls
	a.writes.Retries += st.Total.Retries
	a.writes.Throttled += st.Total.Throttled
	if st.Total.Retries > 0 || st.ThrottledCalls > 0 || st.SDKRetries > 0 {
		a.writes.LastError = time.Now()
	}
	if err == nil {
		return nil
	}
	a.writes.LastError = time.Now()
	if errors.Is(err, ErrSlotWALLimit) {
		return err
	}
	var ie *contract.ItemError
	if errors.As(err, &ie) {
		return fmt.Errorf("sync: bad row: %s; fix the row in the source, then sync again: the slot resumes at %s", describeItemError(ie), a.confirmed)
	}
	var ue *unacknowledgedError
	if errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("sync: write: %w; sync again to resume at %s", err, a.confirmed)
}

// inSnapshot runs f in a read-only snapshot that sees every transaction of
// xids. A transaction is sent once its commit record is in the WAL, which
// can be a moment before it is visible to new snapshots: a read then would
// miss the change, and nothing later would repair it.
func (a *applier) inSnapshot(ctx context.Context, xids []uint32, f func(*extract.Snapshot) error) error {
	wait := time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		snap, err := extract.Begin(ctx, a.conn)
		if err != nil {
			return err
		}
		var text string
		err = scanOne(ctx, snap, "SELECT pg_current_snapshot()::text", &text)
		if err == nil {
			var ok bool
			if ok, err = sees(text, xids); err == nil && ok {
				err = f(snap)
				_ = snap.Close(context.WithoutCancel(ctx))
				return err
			}
		}
		_ = snap.Close(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sync: committed transactions %v are still not visible after a minute", xids)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// sees reports whether a snapshot, in pg_snapshot's text form
// "xmin:xmax:xip,...", sees every transaction of xids (32-bit, as the
// stream sends them, all recent).
func sees(snapshot string, xids []uint32) (bool, error) {
	parts := strings.Split(snapshot, ":")
	if len(parts) != 3 {
		return false, fmt.Errorf("sync: snapshot %q", snapshot)
	}
	xmin, err1 := strconv.ParseUint(parts[0], 10, 64)
	xmax, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return false, fmt.Errorf("sync: snapshot %q: %w", snapshot, err)
	}
	running := map[uint64]bool{}
	if parts[2] != "" {
		for _, s := range strings.Split(parts[2], ",") {
			x, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return false, fmt.Errorf("sync: snapshot %q: %w", snapshot, err)
			}
			running[x] = true
		}
	}
	for _, x := range xids {
		// The full xid: xmax's epoch, or the one before when the low bits
		// wrapped since.
		full := xmax&^0xFFFFFFFF | uint64(x)
		if full >= xmax && full >= 1<<32 {
			full -= 1 << 32
		}
		if full >= xmax || (full >= xmin && running[full]) {
			return false, nil
		}
	}
	return true, nil
}

// checkCaughtUp sets caughtUp once nothing received waits and the
// confirmed position has reached the target: the end of the source's WAL
// when the first check ran. Every transaction visible then committed at
// or before it (replicate.CurrentLSN), and a target read once is reached
// even while the source goes on writing.
func (a *applier) checkCaughtUp(ctx context.Context) error {
	if a.catchUpTo == 0 {
		lsn, err := replicate.CurrentLSN(ctx, a.conn)
		if err != nil {
			return err
		}
		a.catchUpTo, a.server = lsn, max(a.server, lsn)
	}
	if a.batch.Len() > 0 || a.inTxn || a.confirmed < a.catchUpTo {
		return nil
	}
	// Caught up means the table is right: not if DDL is pending.
	if err := a.checkSchema(ctx, "before catching up"); err != nil {
		return err
	}
	a.caughtUp = a.batch.Len() == 0
	return nil
}

// status is the sync's state now.
func (a *applier) status(ctx context.Context, done bool) SyncStatus {
	a.sampleWAL(ctx)
	now := time.Now()
	s := SyncStatus{
		Elapsed: now.Sub(a.start), ServerLSN: a.server, Confirmed: a.confirmed,
		Transactions: a.txns.Load(), Changes: a.changes.Load(), ItemsPut: a.puts.Load(), ItemsDeleted: a.deletes.Load(), Rounds: a.rounds.Load(),
		Fanout: a.fanout, LastLatency: a.lastLatency.Seconds(), Done: done,
	}
	if a.server > a.confirmed {
		s.LagBytes = int64(a.server - a.confirmed)
	}
	if !a.first.IsZero() {
		s.LagSeconds = now.Sub(a.first).Seconds()
	}
	s.CaughtUp = a.caughtUp || (s.LagBytes == 0 && a.batch.Len() == 0)
	s.Received, s.Writes = a.received, a.writes
	if !s.CaughtUp {
		s.LagSince = a.lagSince()
		if !s.LagSince.IsZero() {
			s.LagSeconds = max(s.LagSeconds, now.Sub(s.LagSince).Seconds())
		}
	}
	s.SlotRetainedBytes = -1
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	if slot, err := replicate.ReadSlot(qctx, a.conn, a.cfg.Slot); err == nil && slot != nil {
		s.SlotRetainedBytes = slot.RetainedBytes
	}
	cancel()
	// A long silence while the source is ahead is the server reading old
	// WAL (from the slot's restart point, kept by a transaction that was
	// open when the slot was made or by a long one since): say so, the
	// status line alone would look like a stall.
	quiet := now.Sub(a.lastMessage)
	if !done && !s.CaughtUp && s.LagBytes > 0 && quiet > 5*time.Second {
		a.log.Warn("sync: nothing received from the slot while the source is ahead: the server is reading WAL it must decode before the next change",
			"silent", quiet.Round(time.Second).String(), "behind", report.Bytes(s.LagBytes), "retained", report.Bytes(max(s.SlotRetainedBytes, 0)),
			"lag", (time.Duration(s.LagSeconds) * time.Second).String())
	}
	s.TableChanges = make(map[string]int64, len(a.tableChanges))
	for k, v := range a.tableChanges {
		s.TableChanges[k] = v
	}
	s.Entities = make(map[string]SyncEntity, len(a.entities))
	for k, v := range a.entities {
		s.Entities[k] = v
	}
	if secs := now.Sub(a.lastStatus).Seconds(); secs > 0 {
		items := s.ItemsPut + s.ItemsDeleted
		s.ChangesPerSecond = float64(s.Changes-a.lastChanges) / secs
		s.ItemsPerSecond = float64(items-a.lastItem) / secs
		a.lastStatus, a.lastChanges, a.lastItem = now, s.Changes, items
	}
	return s
}

// truncate handles a TRUNCATE of mapped tables: with OnTruncateDelete it
// applies the batch so far, deletes every item of the entities built from
// the truncated tables, and re-renders every row of the sources built
// from, embedding or copying from them; else it stops the sync before the
// truncating transaction.
func (a *applier) truncate(ctx context.Context, m replicate.Message) error {
	entities, sources := a.ss.graph.Truncated(m.Truncated)
	if len(sources) == 0 {
		return nil
	}
	var names []string
	for _, t := range m.Truncated {
		names = append(names, t.String())
	}
	if a.cfg.OnTruncate != OnTruncateDelete {
		return kinded(ErrTruncate, fmt.Errorf("sync: TRUNCATE of %s (transaction %d): the stream cannot tell which items it removed, so it stopped before that transaction; the slot resumes at %s. "+
			"Run sync with --on-truncate delete to delete the items of %s and re-render the items that embed or copy from the truncated tables, or drop the slot (sync --drop) and load again",
			strings.Join(names, ", "), m.Xid, a.confirmed, strings.Join(entities, ", ")))
	}
	// What came before the TRUNCATE in the stream goes first. The
	// truncating transaction stays open: its position is confirmed only
	// once the rest of it is applied too.
	if err := a.apply(ctx); err != nil {
		return err
	}
	a.log.Warn("TRUNCATE: deleting the items of the truncated tables' entities and re-rendering what depends on them", "tables", strings.Join(names, ", "), "entities", strings.Join(entities, ", "))
	owned := map[string]bool{}
	for _, e := range entities {
		owned[e] = true
	}
	var dels []contract.Item
	m2 := a.ss.plan.Mapping
	_, err := tableread.Scan(ctx, a.cfg.DynamoDB, tableread.ScanConfig{Table: a.cfg.Table, Consistent: true}, func(item map[string]types.AttributeValue) error {
		if owned[entityOf(item, m2.EntityAttribute)] {
			key := map[string]types.AttributeValue{m2.PartitionKey: item[m2.PartitionKey]}
			if m2.SortKey != "" {
				key[m2.SortKey] = item[m2.SortKey]
			}
			dels = append(dels, contract.Item{Attrs: key, Delete: true, Origin: contract.Origin{Entity: entityOf(item, m2.EntityAttribute), Table: a.cfg.Table}})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync: TRUNCATE: scan %s: %w", a.cfg.Table, err)
	}
	if err := a.write(ctx, dels); err != nil {
		return err
	}
	a.deletes.Add(int64(len(dels)))
	return a.render(ctx, []uint32{m.Xid}, sources)
}

// render puts the items of every row of sources, read in one snapshot
// that sees the transactions xids.
func (a *applier) render(ctx context.Context, xids []uint32, sources []*transform.Source) error {
	return a.retrying(ctx, "rendering items again", func(int) error { return a.renderOnce(ctx, xids, sources) })
}

// renderOnce is one try of render: the items it wrote before a failure
// are written again by the next.
func (a *applier) renderOnce(ctx context.Context, xids []uint32, sources []*transform.Source) error {
	return a.inSnapshot(ctx, xids, func(tx *extract.Snapshot) error {
		var items []contract.Item
		flush := func() error {
			err := a.write(ctx, items)
			a.puts.Add(int64(len(items)))
			items = items[:0]
			return err
		}
		for _, src := range sources {
			for row, err := range extract.Rows(ctx, tx, src.Query) {
				if err != nil {
					return err
				}
				its, errs := src.Apply(row)
				if len(errs) > 0 {
					return fmt.Errorf("sync: bad row: %w", errs[0])
				}
				for _, it := range its {
					items = append(items, contract.Item{Attrs: it.Attrs, Origin: contract.Origin{Entity: it.Entity, Table: it.Table, SourceKey: it.SourceKey}})
				}
				if len(items) >= 10*load.MaxBatchItems*a.writerConfig().Concurrency {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		return flush()
	})
}

// scanOne reads the one value of a one-row query inside the snapshot.
func scanOne(ctx context.Context, snap *extract.Snapshot, sql string, dst any) error {
	rows, err := snap.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := rows.Scan(dst); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// walSample is the source's WAL position at one moment.
type walSample struct {
	at  time.Time
	lsn LSN
}

// sampleWAL records the source's WAL position now. The samples let the lag
// be measured against the source's clock of WAL, not against the messages
// received: while the server decodes old WAL (a slot whose restart point
// is far behind) nothing arrives, and a lag taken from received commits
// would read zero.
func (a *applier) sampleWAL(ctx context.Context) {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	lsn, err := replicate.CurrentLSN(qctx, a.conn)
	if err != nil {
		return
	}
	a.server = lsn
	a.walSamples = append(a.walSamples, walSample{at: time.Now(), lsn: lsn})
	a.trimSamples()
}

// trimSamples drops the samples the confirmed position has passed, but for
// the last of them: the WAL written after it is what is still waiting.
func (a *applier) trimSamples() {
	i := 0
	for i+1 < len(a.walSamples) && a.walSamples[i+1].lsn <= a.confirmed {
		i++
	}
	a.walSamples = a.walSamples[i:]
}

// lagSince is when the oldest WAL not yet confirmed was written, as far as
// the samples and the received commits tell; zero when nothing waits.
func (a *applier) lagSince() time.Time {
	a.trimSamples()
	var since time.Time
	switch {
	case len(a.walSamples) == 0:
	case a.walSamples[0].lsn > a.confirmed:
		// The first sample already saw unconfirmed WAL: it was written
		// before this sync started, at the latest.
		since = a.start
	case len(a.walSamples) > 1:
		// WAL past the confirmed position appeared between these two:
		// the later one is a lower bound, never a false alarm.
		since = a.walSamples[1].at
	}
	if !a.first.IsZero() && (since.IsZero() || a.first.Before(since)) {
		since = a.first
	}
	return since
}

// retryAttempts bounds the tries of a round whose reads the source ended
// with a transient error.
const retryAttempts = 8

// retrying runs f (its try counted from 1) until it succeeds, fails with
// an error that another try cannot cure, or retryAttempts tries failed.
// The source ends a read with a deadlock or a serialization failure when
// DDL or a lock queue crosses it (a read of the round, waiting behind an
// ALTER TABLE that waits behind it, is the deadlock's victim): the round
// is read again in a new snapshot, which is what the next round would do.
func (a *applier) retrying(ctx context.Context, what string, f func(try int) error) error {
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		err := f(try)
		if err == nil || try == retryAttempts || !transientSource(err) {
			return err
		}
		a.log.Warn("sync: the source ended a read with a transient error; trying again in a new snapshot", "while", what, "try", try, "err", err.Error())
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// transientSource says whether err is the source's, and one a new try may
// not meet: a deadlock, a serialization failure, a lock not available.
func transientSource(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40P01", "40001", "55P03":
		return true
	}
	return false
}
