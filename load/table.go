package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableAPI is the part of the DynamoDB client EnsureTable uses.
type TableAPI interface {
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	CreateTable(ctx context.Context, params *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
}

var _ TableAPI = (*dynamodb.Client)(nil)

// ErrTableMismatch is wrapped when an existing table's keys differ from the
// configuration.
var ErrTableMismatch = errors.New("load: existing table does not match the mapping")

// tableWait bounds waiting for a table to become ACTIVE.
const tableWait = 5 * time.Minute

// EnsureTable creates cfg.Table if it does not exist: the partition key, the
// sort key if any, and every index of cfg.Indexes (global and local), with
// the key types and projections cfg gives (S and ALL by default), on-demand
// billing, pre-warmed for cfg.WarmWCU write units per second if set; then waits until it is ACTIVE. If the table exists, it checks it
// with InspectTable and explains every way it cannot serve cfg (an error
// wrapping ErrTableMismatch), then waits until it is ACTIVE.
func EnsureTable(ctx context.Context, client TableAPI, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	desc, err := describe(ctx, client, cfg.Table)
	if err != nil {
		return err
	}
	if desc == nil {
		_, err := client.CreateTable(ctx, createTableInput(cfg))
		var inUse *types.ResourceInUseException
		switch {
		case errors.As(err, &inUse):
			// Created concurrently: check it like an existing one.
			if desc, err = describe(ctx, client, cfg.Table); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("load: create table %q: %w", cfg.Table, err)
		default:
			cfg.Logger.Info("load: created table", "table", cfg.Table)
		}
	}
	if desc != nil {
		check := InspectTable(cfg, desc)
		// Waiting below resolves a table or index that is not ACTIVE yet.
		check.Problems = slices.DeleteFunc(check.Problems, func(p TableProblem) bool { return p.Pending })
		if err := check.Err(); err != nil {
			return err
		}
		if desc.TableStatus == types.TableStatusActive && indexesActive(desc) {
			return nil
		}
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = time.Second
		o.MaxDelay = 10 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.Table)}, tableWait); err != nil {
		return fmt.Errorf("load: wait for table %q to become active: %w", cfg.Table, err)
	}
	return nil
}

func indexesActive(t *types.TableDescription) bool {
	for _, ix := range t.GlobalSecondaryIndexes {
		if ix.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

func createTableInput(cfg Config) *dynamodb.CreateTableInput {
	var defs []types.AttributeDefinition
	seen := map[string]bool{}
	def := func(name string, typ types.ScalarAttributeType) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: keyType(typ)})
	}
	def(cfg.PartitionKey, cfg.PartitionKeyType)
	def(cfg.SortKey, cfg.SortKeyType)
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(cfg.Table),
		KeySchema:   keySchema(cfg.PartitionKey, cfg.SortKey),
		BillingMode: types.BillingModePayPerRequest,
	}
	if cfg.WarmWCU > 0 {
		// Pre-warmed for the load's peak: a new on-demand table takes
		// OnDemandInitialWCU at once, and twice its previous peak after.
		in.WarmThroughput = &types.WarmThroughput{WriteUnitsPerSecond: aws.Int64(cfg.WarmWCU)}
	}
	for _, ix := range cfg.Indexes {
		def(ix.PartitionKey, ix.PartitionKeyType)
		def(ix.SortKey, ix.SortKeyType)
		if ix.Local {
			in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
				IndexName:  aws.String(ix.Name),
				KeySchema:  keySchema(cfg.PartitionKey, ix.SortKey),
				Projection: projection(ix),
			})
			continue
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PartitionKey, ix.SortKey),
			Projection: projection(ix),
		})
	}
	in.AttributeDefinitions = defs
	return in
}

// keyType is a key attribute's type, S when unset.
func keyType(t types.ScalarAttributeType) types.ScalarAttributeType {
	if t == "" {
		return types.ScalarAttributeTypeS
	}
	return t
}

func projection(ix Index) *types.Projection {
	switch ix.Projection {
	case "", types.ProjectionTypeAll:
		return &types.Projection{ProjectionType: types.ProjectionTypeAll}
	case types.ProjectionTypeInclude:
		return &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: ix.NonKeyAttributes}
	}
	return &types.Projection{ProjectionType: ix.Projection}
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
	if sk != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	return ks
}

// keysOf returns the hash and range attribute names of a key schema.
func keysOf(ks []types.KeySchemaElement) (pk, sk string) {
	for _, k := range ks {
		switch k.KeyType {
		case types.KeyTypeHash:
			pk = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			sk = aws.ToString(k.AttributeName)
		}
	}
	return pk, sk
}

func typeWord(t types.ScalarAttributeType) string {
	switch t {
	case types.ScalarAttributeTypeN:
		return "numbers (N)"
	case types.ScalarAttributeTypeB:
		return "binary (B)"
	}
	return "strings (S)"
}

// CheckTable reports every way an existing table cannot serve cfg (see
// InspectTable), as one *TableMismatchError wrapping ErrTableMismatch, or
// nil.
func CheckTable(cfg Config, t *types.TableDescription) error {
	return InspectTable(cfg.WithDefaults(), t).Err()
}

// CreateTableInput is the request EnsureTable sends to create cfg.Table:
// what --create-table creates, for plans to show.
func CreateTableInput(cfg Config) *dynamodb.CreateTableInput {
	return createTableInput(cfg.WithDefaults())
}
