package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/engine"
)

// fieldValidateCase is one bad value: the Validate's error, the field it
// must name and a part of its message.
type fieldValidateCase struct {
	name       string
	err        error
	field, msg string
}

func checkFieldCases(t *testing.T, cases []fieldValidateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, engine.ErrConfig) {
				t.Errorf("not an ErrConfig: %v", tc.err)
			}
			got, ok := fieldErrors(tc.err)[tc.field]
			if !ok || !strings.Contains(got, tc.msg) {
				t.Errorf("problem of %s = %q, want %q; all: %v", tc.field, got, tc.msg, tc.err)
			}
		})
	}
}

func TestValidateTableNames(t *testing.T) {
	t.Parallel()
	checkFieldCases(t, []fieldValidateCase{
		{"run", engine.RunConfig{Table: "a b"}.Validate(), "Table", `run: Table: table name "a b": character ' ' at offset 1 is not allowed`},
		{"sync", engine.SyncConfig{Table: "ab"}.Validate(), "Table", `sync: Table: table name "ab" has 2 characters`},
		{"verify", engine.VerifyConfig{Sample: 1, CompareConfig: engine.CompareConfig{Table: "a/b"}}.Validate(), "Table", "verify: Table: table name"},
		{"plan", engine.PlanConfig{CompareConfig: engine.CompareConfig{Table: "x"}}.Validate(), "Table", "plan: Table: table name"},
		{"query table", engine.QueryInput{Table: "a b", PK: "x"}.Validate(), "Table", "query: Table: table name"},
		{"query index", engine.QueryInput{Table: "abc", Index: "ab", PK: "x"}.Validate(), "Index", `query: Index: index name "ab" has 2 characters`},
	})
	for _, name := range []string{"", "abc", "Orders_2024.v-1"} {
		if _, ok := fieldErrors(engine.RunConfig{Table: name}.Validate())["Table"]; ok {
			t.Errorf("RunConfig.Validate finds a problem with table %q", name)
		}
		if _, ok := fieldErrors(engine.QueryInput{Table: "abc", Index: name, PK: "x"}.Validate())["Index"]; ok {
			t.Errorf("QueryInput.Validate finds a problem with index %q", name)
		}
	}
}

func TestQueryInputValidate(t *testing.T) {
	t.Parallel()
	q := func(f func(*engine.QueryInput)) error {
		in := engine.QueryInput{Table: "orders", PK: "CUSTOMER#1"}
		f(&in)
		return in.Validate()
	}
	checkFieldCases(t, []fieldValidateCase{
		{"limit", q(func(in *engine.QueryInput) { in.Limit = -1 }), "Limit", "query: Limit must not be negative (0 = no limit)"},
		{"attributes", q(func(in *engine.QueryInput) { in.Attributes = []string{"a", "", "b"} }), "Attributes", `query: Attributes has an empty name: "a,,b"`},
		{"prefix and range", q(func(in *engine.QueryInput) { in.SKPrefix, in.SKFrom, in.SKTo = "a", "b", "c" }), "SKPrefix", "query: SKPrefix and SKFrom/SKTo exclude each other"},
		{"from alone", q(func(in *engine.QueryInput) { in.SKFrom = "b" }), "SKFrom", "query: SKFrom and SKTo go together"},
		{"to alone", q(func(in *engine.QueryInput) { in.SKTo = "b" }), "SKFrom", "query: SKFrom and SKTo go together"},
		{"equals and prefix", q(func(in *engine.QueryInput) { in.SKEquals, in.SKPrefix = "a", "b" }), "SKEquals", "excludes SKPrefix"},
	})
	// Every problem at once.
	if fe := fieldErrors(q(func(in *engine.QueryInput) { in.Limit, in.Attributes, in.SKFrom = -1, []string{""}, "x" })); len(fe) != 3 {
		t.Errorf("want 3 problems at once, got %v", fe)
	}
	for _, f := range []func(*engine.QueryInput){
		func(*engine.QueryInput) {},
		func(in *engine.QueryInput) { in.SKPrefix, in.Limit, in.Attributes = "ORDER#", 10, []string{"a"} },
		func(in *engine.QueryInput) { in.SKFrom, in.SKTo = "a", "b" },
		func(in *engine.QueryInput) { in.PK, in.PKs = "", []string{"A#1", "A#2"} },
	} {
		if err := q(f); err != nil {
			t.Errorf("Validate of a good query = %v", err)
		}
	}
	if err := (engine.QueryInput{}).Validate(); !errors.Is(err, engine.ErrConfig) || len(fieldErrors(err)) != 0 {
		t.Errorf("an empty query = %v, want missing table and key as ErrConfig, no FieldError", err)
	}
}
