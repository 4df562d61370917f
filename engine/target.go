package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/tableread"
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
}

func (t *tableTarget) Open(ctx context.Context) (TargetInfo, error) {
	info := TargetInfo{Kind: "dynamodb", Name: t.cfg.Table}
	if c, ok := t.client.(*dynamodb.Client); ok {
		o := c.Options()
		info.Region, info.Endpoint = o.Region, aws.ToString(o.BaseEndpoint)
	}
	if t.create {
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
	case desc == nil:
		return info, kinded(ErrTable, fmt.Errorf("target table %q does not exist: create it, or pass --create-table to create it with the mapping's keys and indexes", t.cfg.Table))
	}
	if err := load.CheckTable(t.cfg, desc); err != nil {
		return info, kinded(ErrTable, err)
	}
	info.ARN, info.ID = aws.ToString(desc.TableArn), aws.ToString(desc.TableId)
	info.Created = aws.ToTime(desc.CreationDateTime).UTC()
	return info, nil
}

func (t *tableTarget) Write(ctx context.Context, items <-chan load.Item) (load.Stats, error) {
	w, err := load.NewWriter(t.client, t.cfg)
	if err != nil {
		return load.Stats{}, err
	}
	return w.Write(ctx, items)
}
