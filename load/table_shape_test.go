package load

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// shapedConfig uses every table shape the mapping language has: number
// and binary keys, a local index, and the three projections.
func shapedConfig(table string) Config {
	return Config{
		Table: table, PartitionKey: "PK", SortKey: "SK", SortKeyType: types.ScalarAttributeTypeN,
		Indexes: []Index{
			{Name: "LSI1", Local: true, PartitionKey: "PK", SortKey: "LSI1SK", Projection: types.ProjectionTypeKeysOnly},
			{Name: "GSI1", PartitionKey: "GSI1PK", PartitionKeyType: types.ScalarAttributeTypeB, SortKey: "GSI1SK", SortKeyType: types.ScalarAttributeTypeN, Projection: types.ProjectionTypeKeysOnly},
			{Name: "GSI2", PartitionKey: "GSI2PK", Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"value"}},
			{Name: "GSI3", PartitionKey: "SK", PartitionKeyType: types.ScalarAttributeTypeN, SortKey: "PK"},
		},
	}
}

func TestCreateTableInputShapes(t *testing.T) {
	t.Parallel()
	in := createTableInput(shapedConfig("app"))
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	if got := strings.Join(defs, ","); got != "PK:S,SK:N,LSI1SK:S,GSI1PK:B,GSI1SK:N,GSI2PK:S" {
		t.Errorf("attribute definitions = %s", got)
	}
	if len(in.LocalSecondaryIndexes) != 1 || len(in.GlobalSecondaryIndexes) != 3 {
		t.Fatalf("%d local, %d global indexes", len(in.LocalSecondaryIndexes), len(in.GlobalSecondaryIndexes))
	}
	lsi := in.LocalSecondaryIndexes[0]
	if pk, sk := keysOf(lsi.KeySchema); pk != "PK" || sk != "LSI1SK" || lsi.Projection.ProjectionType != types.ProjectionTypeKeysOnly {
		t.Errorf("LSI1: %s %s %+v", pk, sk, lsi.Projection)
	}
	want := map[string]string{"GSI1": "KEYS_ONLY", "GSI2": "INCLUDE[value]", "GSI3": "ALL"}
	for _, g := range in.GlobalSecondaryIndexes {
		got := string(g.Projection.ProjectionType)
		if len(g.Projection.NonKeyAttributes) > 0 {
			got += "[" + strings.Join(g.Projection.NonKeyAttributes, ",") + "]"
		}
		if got != want[aws.ToString(g.IndexName)] {
			t.Errorf("%s projection %s, want %s", aws.ToString(g.IndexName), got, want[aws.ToString(g.IndexName)])
		}
	}
}

func TestCheckTableShapes(t *testing.T) {
	t.Parallel()
	cfg := shapedConfig("app")
	good := func() *types.TableDescription {
		in := createTableInput(cfg)
		d := &types.TableDescription{TableName: in.TableName, KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions}
		for _, l := range in.LocalSecondaryIndexes {
			d.LocalSecondaryIndexes = append(d.LocalSecondaryIndexes, types.LocalSecondaryIndexDescription{IndexName: l.IndexName, KeySchema: l.KeySchema, Projection: l.Projection})
		}
		for _, g := range in.GlobalSecondaryIndexes {
			d.GlobalSecondaryIndexes = append(d.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection})
		}
		return d
	}
	cases := []struct {
		name string
		mut  func(*types.TableDescription)
		want []string
	}{
		{"matches", func(*types.TableDescription) {}, nil},
		{"projecting more is enough", func(d *types.TableDescription) {
			d.GlobalSecondaryIndexes[0].Projection = &types.Projection{ProjectionType: types.ProjectionTypeAll}
			d.GlobalSecondaryIndexes[1].Projection.NonKeyAttributes = []string{"value", "other"}
		}, nil},
		{"types, scope and projections", func(d *types.TableDescription) {
			d.AttributeDefinitions[1].AttributeType = types.ScalarAttributeTypeS // SK
			d.AttributeDefinitions[3].AttributeType = types.ScalarAttributeTypeS // GSI1PK
			d.LocalSecondaryIndexes = nil
			d.GlobalSecondaryIndexes[1].Projection = &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
			d.GlobalSecondaryIndexes[2].Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x"}}
		}, []string{
			`the table's sort key "SK" has type S but the mapping writes numbers (N)`,
			`local index LSI1 does not exist but the mapping needs it`, `a local index can only be created with the table`,
			`index GSI1's partition key "GSI1PK" has type S but the mapping writes binary (B)`,
			`index GSI2 projects KEYS_ONLY but the mapping needs INCLUDE value`,
			`index GSI3 projects INCLUDE x but the mapping needs ALL`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := good()
			tc.mut(d)
			err := CheckTable(cfg, d)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTableMismatch) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

func TestIndexEntrySizeByProjection(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"PK": s("CUSTOMER#1"), "SK": s("PROFILE"), "GP": s("EMAIL#a@b"), "GS": s("X"),
		"value": s("vv"), "big": s(strings.Repeat("z", 3000)),
	}
	size := ItemSize(item)
	keys := len("PK") + 10 + len("SK") + 7 + len("GP") + 9 + len("GS") + 1
	cases := []struct {
		ix   Index
		want int
	}{
		{Index{Name: "all", PartitionKey: "GP", SortKey: "GS"}, size},
		{Index{Name: "keys", PartitionKey: "GP", SortKey: "GS", Projection: types.ProjectionTypeKeysOnly}, keys},
		{Index{Name: "include", PartitionKey: "GP", SortKey: "GS", Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"value", "absent"}}, keys + len("value") + 2},
	}
	for _, tc := range cases {
		got, ok := IndexEntrySize(item, size, tc.ix, "PK", "SK")
		if !ok || got != tc.want {
			t.Errorf("%s: entry size %d (%v), want %d", tc.ix.Name, got, ok, tc.want)
		}
	}
	// Write units: 3 for the table, 3 for ALL, 1 each for the smaller entries.
	indexes := []Index{cases[0].ix, cases[1].ix, cases[2].ix}
	if got := ItemWriteUnits(item, indexes, "PK", "SK"); got != 3+3+1+1 {
		t.Errorf("ItemWriteUnits = %d, want 8", got)
	}
	delete(item, "GS")
	if _, ok := IndexEntrySize(item, ItemSize(item), cases[1].ix, "PK", "SK"); ok {
		t.Error("an item without the index sort key is in the index")
	}
}

// ShapedConfig is shapedConfig, for the external integration test.
var ShapedConfig = shapedConfig
