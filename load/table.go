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
// sort key if any, and every index of cfg.Indexes, keys of the types of
// cfg.KeyTypes (S by default), on-demand billing, indexes projecting what
// cfg says (ALL by default); then waits until it is ACTIVE. If the table
// exists, it checks it with CheckTable and explains every difference if it
// cannot serve cfg (an error wrapping ErrTableMismatch), then waits until
// it is ACTIVE.
func EnsureTable(ctx context.Context, client TableAPI, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	desc, err := Describe(ctx, client, cfg.Table)
	if err != nil {
		return err
	}
	if desc == nil {
		_, err := client.CreateTable(ctx, createTableInput(cfg))
		var inUse *types.ResourceInUseException
		switch {
		case errors.As(err, &inUse):
			// Created concurrently: check it like an existing one.
			if desc, err = Describe(ctx, client, cfg.Table); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("load: create table %q: %w", cfg.Table, err)
		default:
			cfg.Logger.Info("load: created table", "table", cfg.Table)
		}
	}
	if desc != nil {
		check := CheckTable(cfg, desc)
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
	def := func(name string) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: cfg.keyType(name)})
	}
	def(cfg.PartitionKey)
	def(cfg.SortKey)
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(cfg.Table),
		KeySchema:   keySchema(cfg.PartitionKey, cfg.SortKey),
		BillingMode: types.BillingModePayPerRequest,
	}
	for _, ix := range cfg.Indexes {
		def(ix.PartitionKey)
		def(ix.SortKey)
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PartitionKey, ix.SortKey),
			Projection: projectionOf(ix),
		})
	}
	in.AttributeDefinitions = defs
	return in
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

func projectionOf(ix Index) *types.Projection {
	p := &types.Projection{ProjectionType: ix.projection()}
	if p.ProjectionType == types.ProjectionTypeInclude {
		p.NonKeyAttributes = ix.NonKeyAttributes
	}
	return p
}
