package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/load"
)

// Target stores the items of a run: the DynamoDB table by default
// (BatchWriteItem through load.Writer), or anything else that acknowledges
// what it stored, such as an export to files.
type Target interface {
	// Open gets the target ready before any source row is read (for a
	// table: check that it exists and fits the mapping, or create it) and
	// says which target it is, so that a resumed run can refuse a target
	// it did not write.
	Open(ctx context.Context) (TargetInfo, error)
	// Write stores the items received until the channel is closed or ctx
	// ends. It calls each item's Ack once the item is durably stored, or
	// its Fail once the item is refused; the engine checkpoints on those
	// calls only. The error is what stopped Write (row errors of refused
	// items included, see load.Writer.Write). Items come with their
	// Origin.SourceKey set.
	//
	// The items of one source row arrive one after another, never mixed
	// with another row's: a target that commits items in groups (files)
	// can end a group where Origin.Table or Origin.SourceKey changes, so
	// that no row is split between two groups. See also Starter.
	//
	// Write must not wait for more items before it acknowledges the ones
	// it holds for long: Run reads at most RunConfig.MaxPendingRows rows
	// ahead of the oldest row whose items are not all settled, then waits
	// for them. A Starter is the exception: Run does not bound its rows,
	// its groups do.
	Write(ctx context.Context, items <-chan load.Item) (load.Stats, error)
}

// TargetInfo identifies a target. A resumed run continues only into the
// target its state file names.
type TargetInfo struct {
	Kind     string    `json:"kind"`               // "dynamodb" for a table
	Name     string    `json:"name"`               // the table name
	Endpoint string    `json:"endpoint,omitempty"` // a custom endpoint, when one is set
	Region   string    `json:"region,omitempty"`
	ARN      string    `json:"arn,omitempty"`
	ID       string    `json:"id,omitempty"` // DynamoDB's TableId: a new table of the same name has another
	Created  time.Time `json:"created,omitzero"`
}

// DynamoDB is what the engine calls on a DynamoDB client:
// *dynamodb.Client fits. Run writes (BatchWriteItem, and CreateTable with
// RunConfig.CreateTable); Plan and Verify only read (DescribeTable, Scan,
// BatchGetItem); Prune also deletes through BatchWriteItem.
type DynamoDB interface {
	load.BatchWriter
	load.TableAPI
	tableread.Scanner
	tableread.Getter
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// tableTarget is the default Target: the DynamoDB table, written with
// load.Writer.
type tableTarget struct {
	client DynamoDB
	cfg    load.Config
	create bool
	// resumed is the state file of the run being resumed: its table must
	// still exist (it is never created then), and be the same table.
	resumed *checkpoint.State
	writer  atomic.Pointer[load.Writer]
}

// newTableTarget is the default Target of a run (prev: the run resumed).
func newTableTarget(cfg RunConfig, prev *checkpoint.State) *tableTarget {
	return &tableTarget{client: cfg.DynamoDB, cfg: cfg.writerConfig(), create: cfg.CreateTable, resumed: prev}
}

func (t *tableTarget) Open(ctx context.Context) (TargetInfo, error) {
	info := TargetInfo{Kind: "dynamodb", Name: t.cfg.Table}
	if c, ok := t.client.(*dynamodb.Client); ok {
		o := c.Options()
		info.Region, info.Endpoint = o.Region, aws.ToString(o.BaseEndpoint)
	}
	if t.create && t.resumed == nil {
		if err := load.EnsureTable(ctx, t.client, t.cfg); err != nil {
			if errors.Is(err, load.ErrTableMismatch) {
				return info, kinded(ErrTable, err)
			}
			return info, err
		}
	}
	// An unreachable endpoint or missing credentials fail here, within
	// seconds, instead of as retries of the first batch.
	desc, err := tableread.Describe(ctx, t.client, t.cfg.Table)
	switch {
	case err != nil:
		return info, fmt.Errorf("check target table %q: %w", t.cfg.Table, err)
	case desc == nil && t.resumed != nil:
		// Creating it would make an empty table in which the resumed run
		// skips every checkpointed row.
		return info, resumeRefusal(t.resumed.CheckTarget(nil))
	case desc == nil:
		return info, kinded(ErrTable, fmt.Errorf("target table %q does not exist: create it, or pass --create-table to create it with the mapping's keys and indexes", t.cfg.Table))
	}
	check := load.InspectTable(t.cfg, desc)
	info.ARN, info.ID, info.Created = check.ARN, check.ID, check.CreatedAt.UTC()
	if t.cfg.Capacity == (load.TableCapacity{}) {
		// The writer starts at what the table takes at once instead of
		// flooding it and backing off.
		t.cfg.Capacity = load.CapacityOf(desc)
	}
	t.cfg.Logger.Info("target table", "table", t.cfg.Table, "billing", check.BillingSummary(),
		"start_wcu", t.cfg.Capacity.WCU, "on_demand_doubling", t.cfg.Capacity.OnDemand)
	if err := check.Err(); err != nil {
		return info, kinded(ErrTable, err)
	}
	if t.resumed != nil {
		if err := t.resumed.CheckTarget(info.checkpoint()); err != nil {
			return info, resumeRefusal(err)
		}
	}
	return info, nil
}

// checkpoint is the identity a state file records of a table target, nil
// for other targets.
func (i TargetInfo) checkpoint() *checkpoint.Target {
	if i.Kind != "dynamodb" {
		return nil
	}
	return &checkpoint.Target{
		Endpoint: checkpoint.RedactEndpoint(i.Endpoint), Region: i.Region,
		TableARN: i.ARN, TableID: i.ID, CreatedAt: i.Created,
	}
}

// resumeRefusal is the error of a resume into a table other than the one
// its state file was written to.
func resumeRefusal(err error) error {
	return stateErrorf("run --resume: %v. Resuming would skip every row the state file records as written; pass --fresh instead of --resume to load every row again", err)
}

func (t *tableTarget) Write(ctx context.Context, items <-chan load.Item) (load.Stats, error) {
	w, err := load.NewWriter(t.client, t.cfg)
	if err != nil {
		return load.Stats{}, err
	}
	t.writer.Store(w)
	return w.Write(ctx, items)
}

// WriteStats are the writer's counts so far (progress reports).
func (t *tableTarget) WriteStats() (load.Stats, bool) {
	if w := t.writer.Load(); w != nil {
		return w.Stats(), true
	}
	return load.Stats{}, false
}

// writeStatser is a Target that reports its writer's counts while it
// writes.
type writeStatser interface {
	WriteStats() (load.Stats, bool)
}
