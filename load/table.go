package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
// sort key if any, and every index of cfg.Indexes, all keys of type S,
// on-demand billing, indexes projecting ALL; then waits until it is ACTIVE.
// If the table exists, it checks that its key schema and indexes match cfg
// and explains every difference if not, then waits until it is ACTIVE.
func EnsureTable(ctx context.Context, client TableAPI, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	desc, err := describeTable(ctx, client, cfg.Table)
	if err != nil {
		return err
	}
	if desc == nil {
		_, err := client.CreateTable(ctx, createTableInput(cfg))
		var inUse *types.ResourceInUseException
		switch {
		case errors.As(err, &inUse):
			// Created concurrently: check it like an existing one.
			if desc, err = describeTable(ctx, client, cfg.Table); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("load: create table %q: %w", cfg.Table, err)
		default:
			cfg.Logger.Info("load: created table", "table", cfg.Table)
		}
	}
	if desc != nil {
		if err := checkTable(cfg, desc); err != nil {
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

// describeTable returns nil, nil when the table does not exist.
func describeTable(ctx context.Context, client TableAPI, table string) (*types.TableDescription, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("load: describe table %q: %w", table, err)
	case out.Table == nil:
		return nil, fmt.Errorf("load: describe table %q: empty answer", table)
	}
	return out.Table, nil
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
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS})
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
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
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

// checkTable lists every difference between an existing table and cfg.
func checkTable(cfg Config, t *types.TableDescription) error {
	var diffs []string
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range t.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	checkType := func(what, name string) {
		if typ, ok := attrTypes[name]; ok && typ != types.ScalarAttributeTypeS {
			diffs = append(diffs, fmt.Sprintf("%s %q has type %s, the mapping writes strings (S)", what, name, typ))
		}
	}
	compare := func(what string, wantPK, wantSK string, ks []types.KeySchemaElement) {
		pk, sk := keysOf(ks)
		if pk != wantPK {
			diffs = append(diffs, fmt.Sprintf("%s partition key is %q, the mapping uses %q", what, pk, wantPK))
		} else {
			checkType(what+" partition key", pk)
		}
		switch {
		case sk == wantSK:
			if sk != "" {
				checkType(what+" sort key", sk)
			}
		case sk == "":
			diffs = append(diffs, fmt.Sprintf("%s has no sort key, the mapping uses %q", what, wantSK))
		case wantSK == "":
			diffs = append(diffs, fmt.Sprintf("%s sort key is %q, the mapping uses none", what, sk))
		default:
			diffs = append(diffs, fmt.Sprintf("%s sort key is %q, the mapping uses %q", what, sk, wantSK))
		}
	}
	compare("table", cfg.PartitionKey, cfg.SortKey, t.KeySchema)
	existing := map[string][]types.KeySchemaElement{}
	for _, ix := range t.GlobalSecondaryIndexes {
		existing[aws.ToString(ix.IndexName)] = ix.KeySchema
	}
	for _, ix := range cfg.Indexes {
		ks, ok := existing[ix.Name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("index %q is missing", ix.Name))
			continue
		}
		compare("index "+ix.Name, ix.PartitionKey, ix.SortKey, ks)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: table %q: %s", ErrTableMismatch, cfg.Table, strings.Join(diffs, "; "))
}

// CheckTable reports every difference between an existing table's
// description and cfg's keys and indexes, as one error wrapping
// ErrTableMismatch, or nil.
func CheckTable(cfg Config, t *types.TableDescription) error {
	return checkTable(cfg.WithDefaults(), t)
}

// CreateTableInput is the request EnsureTable sends to create cfg.Table:
// what --create-table creates, for plans to show.
func CreateTableInput(cfg Config) *dynamodb.CreateTableInput {
	return createTableInput(cfg.WithDefaults())
}
