package replicate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgdynamo/migrate/internal/pgurl"
)

// Connect opens a replication connection (replication=database) to the
// database of url, with the URL's settings (a URL without connect_timeout
// gets pgurl.DefaultConnectTimeout). Text values are sent in the forms
// the snapshot reads pin (ISO dates, UTC, exact floats), so that both
// sides agree. Errors never contain the password (pgconn redacts it).
func Connect(ctx context.Context, url string) (*pgconn.PgConn, error) {
	cfg, err := connConfig(url)
	if err != nil {
		return nil, err
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("replicate: replication connection to %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return conn, nil
}

// connConfig is the configuration Connect uses. Besides the text forms it
// overrides one setting of the user's: the slot's exported snapshot is a
// transaction of this session that stays open, idle, until the initial
// load has joined it, so idle_in_transaction_session_timeout is off for
// this session (the startup packet outranks ALTER DATABASE/ROLE).
func connConfig(url string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("replicate: bad postgres URL: %w", err)
	}
	pgurl.ApplyDefaults(cfg, url)
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = "0"
	cfg.RuntimeParams["replication"] = "database"
	cfg.RuntimeParams["DateStyle"] = "ISO, YMD"
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["IntervalStyle"] = "iso_8601"
	cfg.RuntimeParams["extra_float_digits"] = "1"
	cfg.RuntimeParams["bytea_output"] = "hex" // as the snapshots read it (extract.StreamValue)
	return cfg, nil
}

// Kind says what a Message is.
type Kind int

const (
	// KindBegin starts a transaction; Xid and Time (commit time) are set.
	KindBegin Kind = iota + 1
	// KindChange is a row inserted, updated or deleted; Change is set.
	KindChange
	// KindTruncate is a TRUNCATE of one or more tables; Truncated is set.
	KindTruncate
	// KindCommit ends a transaction; LSN is the end of its commit record,
	// the position to confirm once all of it is applied, and Time its
	// commit time.
	KindCommit
	// KindPosition says the server has sent every transaction that
	// committed before LSN (a keepalive; between transactions only).
	KindPosition
	// KindRelation describes a table (Rel), before the first change of it
	// the stream sends, and again before the first change after its
	// definition changed (DDL); inside a transaction.
	KindRelation
)

// Message is one event of the stream, in WAL order. Changes and truncates
// come between the KindBegin and KindCommit of their transaction, whose
// Xid they carry.
type Message struct {
	Kind      Kind
	Xid       uint32
	LSN       LSN
	Time      time.Time
	Change    *Change
	Truncated []Table
	Rel       *Relation
}

// Op is the kind of a row change.
type Op byte

const (
	Insert Op = 'I'
	Update Op = 'U'
	Delete Op = 'D'
)

func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("op %q", byte(o))
}

// Relation is a table as the stream describes it.
type Relation struct {
	ID uint32
	Table
	Columns []RelationColumn
	// Identity is the replica identity: 'd' default, 'f' full, 'i' index,
	// 'n' nothing.
	Identity byte
}

// RelationColumn is one column of a Relation.
type RelationColumn struct {
	Name string
	// Key says the column is part of the replica identity: an old version
	// sent as a key (Change.OldKeyOnly) holds only these.
	Key     bool
	TypeOID uint32
	TypeMod int32
}

// Column returns the index of the named column, or -1.
func (r *Relation) Column(name string) int {
	for i, c := range r.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Value is one column value of a row version, in PostgreSQL's text form.
type Value struct {
	Text string
	Null bool
	// Unchanged is a TOASTed value an update did not change; the stream
	// does not send it (the old version may hold it).
	Unchanged bool
}

// Change is one row inserted, updated or deleted.
type Change struct {
	Op  Op
	Rel *Relation
	// New is the row after an insert or update; Old the row before an
	// update or delete, when the stream sends it: always for a delete,
	// for an update only when the replica identity's columns changed or
	// the identity is FULL. Both are indexed like Rel.Columns.
	New, Old []Value
	// OldKeyOnly says Old holds only the replica identity's columns
	// (Key); the others are NULL in it, whatever they were.
	OldKeyOnly bool
}

// NewValue returns column i of the row after the change, and whether the
// stream sent it: an unchanged TOASTed value is taken from the old
// version when that holds it.
func (c *Change) NewValue(i int) (Value, bool) {
	if c.New == nil || i < 0 || i >= len(c.New) {
		return Value{}, false
	}
	if v := c.New[i]; !v.Unchanged {
		return v, true
	}
	return c.OldValue(i)
}

// OldValue returns column i of the row before the change, and whether the
// stream sent it (a key-only old version holds the key's columns only).
func (c *Change) OldValue(i int) (Value, bool) {
	if c.Old == nil || i < 0 || i >= len(c.Old) {
		return Value{}, false
	}
	if c.OldKeyOnly && !c.Rel.Columns[i].Key {
		return Value{}, false
	}
	v := c.Old[i]
	return v, !v.Unchanged
}

// StreamConfig configures a Stream.
type StreamConfig struct {
	Slot, Publication string
	// Start is where to start; the server starts at the slot's confirmed
	// position when Start is before it. 0: the confirmed position.
	Start LSN
	// StatusEvery is how often the confirmed position is reported to the
	// server and its own position asked for. Default 1s; it must stay well
	// under the server's wal_sender_timeout (default 60s).
	StatusEvery time.Duration
}

// Stream reads a slot's changes. Start it with Start, read it with Run,
// and tell it what is applied with Confirm.
type Stream struct {
	conn      *pgconn.PgConn
	cfg       StreamConfig
	confirmed atomic.Uint64
	serverEnd atomic.Uint64
	relations map[uint32]*Relation
	inTxn     bool
	xid       uint32
}

// Start starts streaming from the slot on a replication connection, with
// pgoutput's protocol version 1: each transaction is sent once it
// committed, whole and in commit order.
func Start(ctx context.Context, repl *pgconn.PgConn, cfg StreamConfig) (*Stream, error) {
	if err := CheckName("slot", cfg.Slot); err != nil {
		return nil, err
	}
	if err := CheckName("publication", cfg.Publication); err != nil {
		return nil, err
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = time.Second
	}
	err := pglogrepl.StartReplication(ctx, repl, cfg.Slot, cfg.Start, pglogrepl.StartReplicationOptions{
		Mode:       pglogrepl.LogicalReplication,
		PluginArgs: []string{"proto_version '1'", "publication_names '" + cfg.Publication + "'"},
	})
	if err != nil {
		return nil, fmt.Errorf("replicate: start streaming slot %s: %w", cfg.Slot, err)
	}
	s := &Stream{conn: repl, cfg: cfg, relations: map[uint32]*Relation{}}
	s.confirmed.Store(uint64(cfg.Start))
	return s, nil
}

// Confirm records that every transaction that committed before lsn is
// applied; the next status update tells the server, which may then
// recycle the WAL before it. Lower positions than the last are ignored.
func (s *Stream) Confirm(lsn LSN) {
	for {
		old := s.confirmed.Load()
		if uint64(lsn) <= old || s.confirmed.CompareAndSwap(old, uint64(lsn)) {
			return
		}
	}
}

// Confirmed is the last position given to Confirm.
func (s *Stream) Confirmed() LSN { return LSN(s.confirmed.Load()) }

// ServerEnd is the server's WAL position as of its last message.
func (s *Stream) ServerEnd() LSN { return LSN(s.serverEnd.Load()) }

// Run receives the stream and sends its Messages to out, in order, until
// ctx ends or the stream fails. It owns the connection: it also sends the
// status updates (the confirmed position) every StatusEvery, also while
// out is full. On return, it has reported the last confirmed position.
func (s *Stream) Run(ctx context.Context, out chan<- Message) error {
	next := time.Now()
	var pending []Message
	defer func() { _ = s.status(context.WithoutCancel(ctx), false) }()
	for {
		if !time.Now().Before(next) {
			if err := s.status(ctx, true); err != nil {
				return err
			}
			next = time.Now().Add(s.cfg.StatusEvery)
		}
		if len(pending) > 0 {
			wait := time.NewTimer(time.Until(next))
			select {
			case out <- pending[0]:
				pending = pending[1:]
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return ctx.Err()
			}
			wait.Stop()
			continue
		}
		rctx, cancel := context.WithDeadline(ctx, next)
		raw, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return fmt.Errorf("replicate: receive: %w", err)
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replicate: %w", pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("replicate: keepalive: %w", err)
				}
				s.advance(ka.ServerWALEnd)
				if ka.ReplyRequested {
					next = time.Now()
				}
				if !s.inTxn {
					pending = append(pending, Message{Kind: KindPosition, LSN: ka.ServerWALEnd, Time: ka.ServerTime})
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("replicate: XLogData: %w", err)
				}
				s.advance(xld.ServerWALEnd)
				m, ok, err := s.decode(xld.WALData)
				if err != nil {
					return err
				}
				if ok {
					pending = append(pending, m)
				}
			}
		case *pgproto3.CopyDone:
			return errors.New("replicate: the server ended the stream")
		}
	}
}

func (s *Stream) advance(lsn LSN) {
	for {
		old := s.serverEnd.Load()
		if uint64(lsn) <= old || s.serverEnd.CompareAndSwap(old, uint64(lsn)) {
			return
		}
	}
}

// status reports the confirmed position as written, flushed and applied.
func (s *Stream) status(ctx context.Context, reply bool) error {
	pos := s.Confirmed()
	if pos == 0 {
		return nil // nothing to say yet; 0 would mean "no position"
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pos, WALFlushPosition: pos, WALApplyPosition: pos, ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("replicate: status update: %w", err)
	}
	return nil
}

// decode turns one pgoutput message into a Message; ok is false for
// messages that only update the stream's own state (types, origins).
func (s *Stream) decode(data []byte) (Message, bool, error) {
	if len(data) == 0 {
		return Message{}, false, nil
	}
	lm, err := pglogrepl.Parse(data)
	if err != nil {
		return Message{}, false, fmt.Errorf("replicate: decode %q message: %w", data[0], err)
	}
	switch m := lm.(type) {
	case *pglogrepl.RelationMessage:
		rel := &Relation{ID: m.RelationID, Table: Table{Schema: m.Namespace, Name: m.RelationName}, Identity: m.ReplicaIdentity}
		for _, c := range m.Columns {
			rel.Columns = append(rel.Columns, RelationColumn{Name: c.Name, Key: c.Flags&1 != 0, TypeOID: c.DataType, TypeMod: c.TypeModifier})
		}
		s.relations[m.RelationID] = rel
		return Message{Kind: KindRelation, Xid: s.xid, Rel: rel}, true, nil
	case *pglogrepl.BeginMessage:
		s.inTxn, s.xid = true, m.Xid
		return Message{Kind: KindBegin, Xid: m.Xid, LSN: m.FinalLSN, Time: m.CommitTime}, true, nil
	case *pglogrepl.CommitMessage:
		s.inTxn = false
		return Message{Kind: KindCommit, Xid: s.xid, LSN: m.TransactionEndLSN, Time: m.CommitTime}, true, nil
	case *pglogrepl.InsertMessage:
		rel, err := s.relation(m.RelationID)
		if err != nil {
			return Message{}, false, err
		}
		return s.change(&Change{Op: Insert, Rel: rel, New: values(m.Tuple)}), true, nil
	case *pglogrepl.UpdateMessage:
		rel, err := s.relation(m.RelationID)
		if err != nil {
			return Message{}, false, err
		}
		c := &Change{Op: Update, Rel: rel, New: values(m.NewTuple)}
		if m.OldTuple != nil {
			c.Old, c.OldKeyOnly = values(m.OldTuple), m.OldTupleType == pglogrepl.UpdateMessageTupleTypeKey
		}
		return s.change(c), true, nil
	case *pglogrepl.DeleteMessage:
		rel, err := s.relation(m.RelationID)
		if err != nil {
			return Message{}, false, err
		}
		c := &Change{Op: Delete, Rel: rel}
		if m.OldTuple != nil {
			c.Old, c.OldKeyOnly = values(m.OldTuple), m.OldTupleType == pglogrepl.DeleteMessageTupleTypeKey
		}
		return s.change(c), true, nil
	case *pglogrepl.TruncateMessage:
		msg := Message{Kind: KindTruncate, Xid: s.xid}
		for _, id := range m.RelationIDs {
			rel, err := s.relation(id)
			if err != nil {
				return Message{}, false, err
			}
			msg.Truncated = append(msg.Truncated, rel.Table)
		}
		return msg, true, nil
	}
	return Message{}, false, nil // type and origin messages
}

func (s *Stream) change(c *Change) Message {
	return Message{Kind: KindChange, Xid: s.xid, Change: c}
}

func (s *Stream) relation(id uint32) (*Relation, error) {
	rel, ok := s.relations[id]
	if !ok {
		return nil, fmt.Errorf("replicate: change of relation %d, which the stream never described", id)
	}
	return rel, nil
}

// values copies a tuple out of the receive buffer, which the next message
// reuses.
func values(t *pglogrepl.TupleData) []Value {
	if t == nil {
		return nil
	}
	out := make([]Value, len(t.Columns))
	for i, c := range t.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			out[i].Null = true
		case pglogrepl.TupleDataTypeToast:
			out[i].Unchanged = true
		default:
			out[i].Text = string(c.Data)
		}
	}
	return out
}
