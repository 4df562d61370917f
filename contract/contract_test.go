package contract_test

import (
	"errors"
	"testing"

	"github.com/pgdynamo/migrate/contract"
)

type rowKey string

func (k rowKey) SourceKey() string { return string(k) }

func TestOriginString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    contract.Origin
		want string
	}{
		{contract.Origin{Entity: "customer", Table: "customers", SourceKey: "customer_id=42"}, "customers row customer_id=42 (entity customer)"},
		{contract.Origin{Table: "customers", Row: rowKey("customer_id=7")}, "customers row customer_id=7"},
		{contract.Origin{Table: "customers"}, "customers row"},
		{contract.Origin{SourceKey: "line 3"}, "row line 3"},
		{contract.Origin{Entity: "Book"}, "(entity Book)"},
		{contract.Origin{}, "item of unknown origin"},
	} {
		if got := c.o.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}

func TestOriginResolved(t *testing.T) {
	t.Parallel()
	o := contract.Origin{Table: "t", Row: rowKey("id=1")}.Resolved()
	if o.Row != nil || o.SourceKey != "id=1" || o.Key() != "id=1" {
		t.Errorf("resolved: %+v", o)
	}
	if k := (contract.Origin{SourceKey: "a", Row: rowKey("b")}).Key(); k != "a" {
		t.Errorf("Key prefers SourceKey, got %q", k)
	}
}

func TestItemError(t *testing.T) {
	t.Parallel()
	cause := errors.New("too long")
	e := &contract.ItemError{Origin: contract.Origin{Table: "books", SourceKey: "book_id=1"}, Key: `PK="BOOK#1"`, Reason: "sort key is 1025 bytes", Err: cause}
	if got, want := e.Error(), `load: books row book_id=1 [PK="BOOK#1"]: sort key is 1025 bytes`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if !errors.Is(e, cause) {
		t.Error("ItemError does not unwrap to its cause")
	}
	e.Key = ""
	if got, want := e.Error(), `load: books row book_id=1: sort key is 1025 bytes`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestShardCountString(t *testing.T) {
	t.Parallel()
	computed := contract.ShardCount{Entity: "Order", Index: "GSI2", Count: 14, Basis: "readRate 600000 -> 12 shards, padded to 14"}
	if got, want := computed.String(), "shards for Order GSI2: readRate 600000 -> 12 shards, padded to 14 (count: auto)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	preset := contract.ShardCount{Entity: "Order", Index: "GSI2", Count: 14, Preset: true}
	if got, want := preset.String(), "shards for Order GSI2: 14 (count: auto, as computed by the run being resumed)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestEntityStatsAdd(t *testing.T) {
	t.Parallel()
	s := contract.EntityStats{Written: 1, Retries: 2, Throttled: 3, WCU: 4}
	s.Add(contract.EntityStats{Written: 10, Retries: 20, Throttled: 30, WCU: 40})
	if s != (contract.EntityStats{Written: 11, Retries: 22, Throttled: 33, WCU: 44}) {
		t.Errorf("Add: %+v", s)
	}
}
