package load

import (
	"encoding/json"
	"strings"
	"testing"
)

// The table an import creates is the table EnsureTable creates: same keys,
// indexes, projections and billing.
func TestTableCreationParameters(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Indexes = append(cfg.Indexes, Index{Name: "GSI2", PartitionKey: "GSI2PK"}, Index{Name: "Inverted", PartitionKey: "SK", SortKey: "PK"})
	cfg.PartitionKeyType = "N"
	cfg.Indexes[0].Projection, cfg.Indexes[0].NonKeyAttributes = "INCLUDE", []string{"name"}
	got, err := TableCreationParameters(cfg)
	if err != nil {
		t.Fatal(err)
	}
	create := createTableInput(cfg.WithDefaults())
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"table", got.TableName, create.TableName},
		{"attributes", got.AttributeDefinitions, create.AttributeDefinitions},
		{"keys", got.KeySchema, create.KeySchema},
		{"billing", got.BillingMode, create.BillingMode},
		{"indexes", got.GlobalSecondaryIndexes, create.GlobalSecondaryIndexes},
	} {
		g, _ := json.Marshal(c.got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s: %s, CreateTable has %s", c.what, g, w)
		}
	}
	if len(got.AttributeDefinitions) != 5 { // PK, SK, GSI1PK, GSI1SK, GSI2PK: each once
		t.Errorf("attribute definitions: %d, want 5", len(got.AttributeDefinitions))
	}
	if got.BillingMode != "PAY_PER_REQUEST" || len(got.GlobalSecondaryIndexes) != 3 {
		t.Errorf("billing %s, %d indexes", got.BillingMode, len(got.GlobalSecondaryIndexes))
	}
	if p := got.GlobalSecondaryIndexes[0].Projection; p.ProjectionType != "INCLUDE" || len(p.NonKeyAttributes) != 1 {
		t.Errorf("projection %+v", p)
	}
	for _, d := range got.AttributeDefinitions {
		if *d.AttributeName == "PK" && d.AttributeType != "N" {
			t.Errorf("PK is %s, want N", d.AttributeType)
		}
	}
	// ImportTable creates no local index.
	cfg.Indexes = append(cfg.Indexes, Index{Name: "ByDate", PartitionKey: "PK", SortKey: "date", Local: true})
	if _, err := TableCreationParameters(cfg); err == nil || !strings.Contains(err.Error(), "ByDate") {
		t.Errorf("a local index: %v", err)
	}
}
