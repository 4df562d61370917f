package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// describe returns the description of a table, or nil and no error when
// the table does not exist.
func describe(ctx context.Context, client TableAPI, table string) (*types.TableDescription, error) {
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

// TableProblem is one way an existing table cannot serve the mapping.
type TableProblem struct {
	// Index is the index at fault, "" for the table itself.
	Index string
	// Attribute is the key attribute at fault, "" when the problem is not
	// about one (a missing index, a projection, a status).
	Attribute string
	// Msg says what the table has and what the mapping needs.
	Msg string
	// Pending is set for a table or index that is not ACTIVE yet (being
	// created or updated): waiting resolves it.
	Pending bool
}

// String returns the problem's message.
func (p TableProblem) String() string { return p.Msg }

// TableCheck is what InspectTable found out about an existing table.
type TableCheck struct {
	Table    string
	Problems []TableProblem

	// Billing is the table's capacity mode: PAY_PER_REQUEST or PROVISIONED
	// (a table that reports no billing mode summary is provisioned).
	Billing types.BillingMode
	// WriteCapacity is the provisioned write capacity units of the table,
	// and IndexWriteCapacity of each index of the mapping, by name (both 0
	// on demand). Writes to an index consume its own capacity.
	WriteCapacity      int64
	IndexWriteCapacity map[string]int64
	// MaxWriteRequestUnits is an on-demand table's configured maximum
	// write rate, 0 when none is set.
	MaxWriteRequestUnits int64

	// The table's identity, for a state file: DynamoDB Local reports no
	// TableID and always the same ARN for one name, so CreatedAt is what
	// tells a re-created table there.
	ARN       string
	ID        string
	CreatedAt time.Time
	Status    types.TableStatus
}

// Err returns nil when the table can serve the mapping, else a
// *TableMismatchError listing every problem.
func (c TableCheck) Err() error {
	if len(c.Problems) == 0 {
		return nil
	}
	return &TableMismatchError{Table: c.Table, Problems: c.Problems}
}

// BillingSummary describes the capacity mode for a report line, e.g.
// "on demand" or "provisioned, 100 WCU (GSI1 50 WCU)".
func (c TableCheck) BillingSummary() string {
	if c.Billing == types.BillingModePayPerRequest {
		if c.MaxWriteRequestUnits > 0 {
			return fmt.Sprintf("on demand, at most %d write request units/s", c.MaxWriteRequestUnits)
		}
		return "on demand"
	}
	s := fmt.Sprintf("provisioned, %d WCU", c.WriteCapacity)
	var ix []string
	for _, name := range slices.Sorted(maps.Keys(c.IndexWriteCapacity)) {
		ix = append(ix, fmt.Sprintf("%s %d WCU", name, c.IndexWriteCapacity[name]))
	}
	if len(ix) > 0 {
		s += " (" + strings.Join(ix, ", ") + ")"
	}
	return s
}

// TableMismatchError lists every way an existing table differs from what
// the mapping needs. It wraps ErrTableMismatch.
type TableMismatchError struct {
	Table    string
	Problems []TableProblem
}

// Error names the table and every problem.
func (e *TableMismatchError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Msg
	}
	return fmt.Sprintf("%v: table %q: %s", ErrTableMismatch, e.Table, strings.Join(msgs, "; "))
}

// Unwrap returns ErrTableMismatch.
func (e *TableMismatchError) Unwrap() error { return ErrTableMismatch }

// InspectTable checks an existing table against what cfg needs, before
// anything is read or written: the key schema (names and types), every
// index of cfg (global or local as declared, its keys and their types, a
// projection that holds what the index must serve, ACTIVE), and the
// table's status. It also reports the billing mode and the table's
// identity. Indexes of the table that cfg does not name are no problem:
// the items lack their keys.
func InspectTable(cfg Config, t *types.TableDescription) TableCheck {
	c := TableCheck{
		Table:     cfg.Table,
		Billing:   types.BillingModeProvisioned,
		ARN:       aws.ToString(t.TableArn),
		ID:        aws.ToString(t.TableId),
		CreatedAt: aws.ToTime(t.CreationDateTime),
		Status:    t.TableStatus,
	}
	if t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode != "" {
		c.Billing = t.BillingModeSummary.BillingMode
	}
	if t.ProvisionedThroughput != nil {
		c.WriteCapacity = aws.ToInt64(t.ProvisionedThroughput.WriteCapacityUnits)
	}
	if t.OnDemandThroughput != nil {
		c.MaxWriteRequestUnits = max(0, aws.ToInt64(t.OnDemandThroughput.MaxWriteRequestUnits))
	}
	problem := func(index, attr string, pending bool, format string, args ...any) {
		c.Problems = append(c.Problems, TableProblem{Index: index, Attribute: attr, Pending: pending, Msg: fmt.Sprintf(format, args...)})
	}

	switch t.TableStatus {
	case types.TableStatusActive, types.TableStatusUpdating, "":
	case types.TableStatusCreating:
		problem("", "", true, "the table is %s but the mapping needs it ACTIVE", t.TableStatus)
	default:
		problem("", "", false, "the table is %s but the mapping needs it ACTIVE", t.TableStatus)
	}

	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range t.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	// what is "the table" or "index X".
	keys := func(index, what string, wantPK, wantSK string, pkType, skType types.ScalarAttributeType, ks []types.KeySchemaElement) {
		pk, sk := keysOf(ks)
		key := func(role, have, want string, wantType types.ScalarAttributeType) {
			wantType = keyType(wantType)
			switch {
			case have == want && want == "":
			case have == "":
				problem(index, want, false, "%s has no %s but the mapping needs %q (%s)", what, role, want, wantType)
			case want == "":
				problem(index, have, false, "%s has %s %q but the mapping has none, so its items would lack it", what, role, have)
			case have != want:
				problem(index, have, false, "%s's %s is %q but the mapping needs %q (%s)", what, role, have, want, wantType)
			default:
				if typ, ok := attrTypes[have]; ok && typ != wantType {
					problem(index, have, false, "%s's %s %q has type %s but the mapping writes %s", what, role, have, typ, typeWord(wantType))
				}
			}
		}
		key("partition key", pk, wantPK, pkType)
		key("sort key", sk, wantSK, skType)
	}
	keys("", "the table", cfg.PartitionKey, cfg.SortKey, cfg.PartitionKeyType, cfg.SortKeyType, t.KeySchema)

	type existing struct {
		keys       []types.KeySchemaElement
		projection *types.Projection
		status     types.IndexStatus
		capacity   *types.ProvisionedThroughputDescription
		local      bool
	}
	indexes := map[string]existing{}
	for _, ix := range t.GlobalSecondaryIndexes {
		indexes[aws.ToString(ix.IndexName)] = existing{ix.KeySchema, ix.Projection, ix.IndexStatus, ix.ProvisionedThroughput, false}
	}
	for _, ix := range t.LocalSecondaryIndexes {
		// A local index is part of the table: its status is the table's.
		indexes[aws.ToString(ix.IndexName)] = existing{ix.KeySchema, ix.Projection, "", nil, true}
	}
	for _, want := range cfg.Indexes {
		have, ok := indexes[want.Name]
		switch {
		case !ok && want.Local:
			problem(want.Name, "", false, "local index %s does not exist but the mapping needs it, with sort key %q (%s), projecting %s; a local index can only be created with the table",
				want.Name, want.SortKey, keyType(want.SortKeyType), projectionText(want))
			continue
		case !ok:
			problem(want.Name, "", false, "index %s does not exist but the mapping needs it, with %s, projecting %s",
				want.Name, describeKeys(want), projectionText(want))
			continue
		case have.local != want.Local:
			problem(want.Name, "", false, "index %s is %s but the mapping declares it %s", want.Name, scope(have.local), scope(want.Local))
			continue
		}
		what := "index " + want.Name
		wantPK := want.PartitionKey
		if want.Local {
			wantPK = cfg.PartitionKey
		}
		keys(want.Name, what, wantPK, want.SortKey, want.PartitionKeyType, want.SortKeyType, have.keys)
		if msg := projectionProblem(want, have.projection); msg != "" {
			problem(want.Name, "", false, "%s %s", what, msg)
		}
		switch have.status {
		case types.IndexStatusActive, types.IndexStatusUpdating, "":
		case types.IndexStatusCreating:
			problem(want.Name, "", true, "%s is %s (backfilling) but the mapping needs it ACTIVE", what, have.status)
		default:
			problem(want.Name, "", false, "%s is %s but the mapping needs it ACTIVE", what, have.status)
		}
		if have.capacity != nil && c.Billing == types.BillingModeProvisioned {
			if c.IndexWriteCapacity == nil {
				c.IndexWriteCapacity = map[string]int64{}
			}
			c.IndexWriteCapacity[want.Name] = aws.ToInt64(have.capacity.WriteCapacityUnits)
		}
	}
	return c
}

func scope(local bool) string {
	if local {
		return "local"
	}
	return "global"
}

func describeKeys(ix Index) string {
	s := fmt.Sprintf("partition key %q (%s)", ix.PartitionKey, keyType(ix.PartitionKeyType))
	if ix.SortKey != "" {
		s += fmt.Sprintf(" and sort key %q (%s)", ix.SortKey, keyType(ix.SortKeyType))
	}
	return s
}

func projectionType(ix Index) types.ProjectionType {
	if ix.Projection == "" {
		return types.ProjectionTypeAll
	}
	return ix.Projection
}

func projectionText(ix Index) string {
	if projectionType(ix) == types.ProjectionTypeInclude {
		return fmt.Sprintf("INCLUDE %s", strings.Join(ix.NonKeyAttributes, ", "))
	}
	return string(projectionType(ix))
}

// projectionProblem says how an index's projection fails to hold what the
// mapping needs, or "". ALL holds everything; INCLUDE holds the keys and
// its attributes; KEYS_ONLY the keys.
func projectionProblem(want Index, have *types.Projection) string {
	got := types.ProjectionTypeAll // DynamoDB always reports one; be lenient if not
	var include []string
	if have != nil && have.ProjectionType != "" {
		got, include = have.ProjectionType, have.NonKeyAttributes
	}
	need := projectionType(want)
	switch {
	case got == types.ProjectionTypeAll:
		return ""
	case need == types.ProjectionTypeKeysOnly:
		return ""
	case need == types.ProjectionTypeAll:
		return fmt.Sprintf("projects %s but the mapping needs ALL", describeProjection(got, include))
	case got == types.ProjectionTypeKeysOnly:
		return fmt.Sprintf("projects KEYS_ONLY but the mapping needs INCLUDE %s", strings.Join(want.NonKeyAttributes, ", "))
	}
	var missing []string
	for _, a := range want.NonKeyAttributes {
		if !slices.Contains(include, a) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("projects %s but the mapping needs %s too", describeProjection(got, include), strings.Join(missing, ", "))
	}
	return ""
}

func describeProjection(t types.ProjectionType, include []string) string {
	if t == types.ProjectionTypeInclude {
		return "INCLUDE " + strings.Join(include, ", ")
	}
	return string(t)
}
