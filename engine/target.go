package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/internal/tableread"
	"github.com/pgdynamo/migrate/load"
)

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

func (t *tableTarget) Open(ctx context.Context) (contract.TargetInfo, error) {
	info := contract.TargetInfo{Kind: "dynamodb", Name: t.cfg.Table}
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
	t.cfg.Logger.Info("target table", "table", t.cfg.Table, "billing", check.BillingSummary())
	if err := check.Err(); err != nil {
		return info, kinded(ErrTable, err)
	}
	if t.resumed != nil {
		if err := t.resumed.CheckTarget(targetCheckpoint(info)); err != nil {
			return info, resumeRefusal(err)
		}
	}
	return info, nil
}

// targetCheckpoint is the identity a state file records of a table target, nil
// for other targets.
func targetCheckpoint(i contract.TargetInfo) *checkpoint.Target {
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

func (t *tableTarget) Write(ctx context.Context, items <-chan contract.Item) (contract.Stats, error) {
	w, err := load.NewWriter(t.client, t.cfg)
	if err != nil {
		return contract.Stats{}, err
	}
	t.writer.Store(w)
	return w.Write(ctx, items)
}

// WriteStats are the writer's counts so far (progress reports).
func (t *tableTarget) WriteStats() (contract.Stats, bool) {
	if w := t.writer.Load(); w != nil {
		return w.Stats(), true
	}
	return contract.Stats{}, false
}

// writeStatser is a Target that reports its writer's counts while it
// writes.
type writeStatser interface {
	WriteStats() (contract.Stats, bool)
}
