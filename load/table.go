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
// sort key if any, and every index of cfg.Indexes (global and local), with
// the key types and projections cfg gives (S and ALL by default), on-demand
// billing; then waits until it is ACTIVE. If the table exists, it checks
// that its key schema, key types, indexes and projections match cfg and
// explains every difference if not, then waits until it is ACTIVE.
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

// checkTable lists every difference between an existing table and cfg.
func checkTable(cfg Config, t *types.TableDescription) error {
	var diffs []string
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range t.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	checkType := func(what, name string, want types.ScalarAttributeType) {
		want = keyType(want)
		if typ, ok := attrTypes[name]; ok && typ != want {
			diffs = append(diffs, fmt.Sprintf("%s %q has type %s, the mapping writes %s", what, name, typ, typeWord(want)))
		}
	}
	compare := func(what string, wantPK, wantSK string, pkType, skType types.ScalarAttributeType, ks []types.KeySchemaElement) {
		pk, sk := keysOf(ks)
		if pk != wantPK {
			diffs = append(diffs, fmt.Sprintf("%s partition key is %q, the mapping uses %q", what, pk, wantPK))
		} else {
			checkType(what+" partition key", pk, pkType)
		}
		switch {
		case sk == wantSK:
			if sk != "" {
				checkType(what+" sort key", sk, skType)
			}
		case sk == "":
			diffs = append(diffs, fmt.Sprintf("%s has no sort key, the mapping uses %q", what, wantSK))
		case wantSK == "":
			diffs = append(diffs, fmt.Sprintf("%s sort key is %q, the mapping uses none", what, sk))
		default:
			diffs = append(diffs, fmt.Sprintf("%s sort key is %q, the mapping uses %q", what, sk, wantSK))
		}
	}
	// An index must project at least what the mapping declares: a table
	// projecting more serves every read the mapping plans (it costs more).
	compareProjection := func(ix Index, p *types.Projection) {
		want := projection(ix)
		if p == nil || p.ProjectionType == "" || p.ProjectionType == types.ProjectionTypeAll || want.ProjectionType == types.ProjectionTypeKeysOnly {
			return
		}
		if want.ProjectionType == types.ProjectionTypeAll {
			diffs = append(diffs, fmt.Sprintf("index %s projects %s, the mapping declares ALL", ix.Name, p.ProjectionType))
			return
		}
		have := map[string]bool{}
		for _, a := range p.NonKeyAttributes {
			have[a] = true
		}
		var missing []string
		for _, a := range want.NonKeyAttributes {
			if !have[a] {
				missing = append(missing, a)
			}
		}
		if len(missing) > 0 {
			diffs = append(diffs, fmt.Sprintf("index %s does not project %s, which the mapping includes", ix.Name, strings.Join(missing, ", ")))
		}
	}
	compare("table", cfg.PartitionKey, cfg.SortKey, cfg.PartitionKeyType, cfg.SortKeyType, t.KeySchema)
	type existing struct {
		keys       []types.KeySchemaElement
		projection *types.Projection
		local      bool
	}
	indexes := map[string]existing{}
	for _, ix := range t.GlobalSecondaryIndexes {
		indexes[aws.ToString(ix.IndexName)] = existing{ix.KeySchema, ix.Projection, false}
	}
	for _, ix := range t.LocalSecondaryIndexes {
		indexes[aws.ToString(ix.IndexName)] = existing{ix.KeySchema, ix.Projection, true}
	}
	for _, ix := range cfg.Indexes {
		have, ok := indexes[ix.Name]
		switch {
		case !ok && ix.Local:
			diffs = append(diffs, fmt.Sprintf("local index %q is missing (a local index can only be created with the table)", ix.Name))
			continue
		case !ok:
			diffs = append(diffs, fmt.Sprintf("index %q is missing", ix.Name))
			continue
		case have.local != ix.Local:
			diffs = append(diffs, fmt.Sprintf("index %q is %s, the mapping declares it %s", ix.Name, scope(have.local), scope(ix.Local)))
			continue
		}
		compare("index "+ix.Name, ix.PartitionKey, ix.SortKey, ix.PartitionKeyType, ix.SortKeyType, have.keys)
		compareProjection(ix, have.projection)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: table %q: %s", ErrTableMismatch, cfg.Table, strings.Join(diffs, "; "))
}

func scope(local bool) string {
	if local {
		return "local"
	}
	return "global"
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
