package extract

import (
	"fmt"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// TestAggregateSQL pins the SQL of aggregates: identifiers quoted, the
// filter's literals as parameters (numbered before the keyset's) cast to
// the compared column's kind, text compared as text, latest descending
// with NULLs last.
func TestAggregateSQL(t *testing.T) {
	t.Parallel()
	typ := func(name string, k pgkind.Kind) mapping.Column {
		return mapping.Column{Name: name, Type: pgkind.Type{Name: name, Kind: k}}
	}
	cond := func(s string) *mapping.Condition {
		c, err := mapping.ParseCondition(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	on := []JoinOn{{Column: "customer id", Ref: -1, RefColumn: "id"}}
	q := Query{Schema: "s", Table: "c", Columns: []mapping.Column{typ("id", pgkind.Int)}, OrderBy: []string{"id"}, After: []any{int64(5)},
		Embeds: []Embed{
			{Schema: "s", Table: "o", On: on, Agg: mapping.AggCount, Columns: []mapping.Column{typ("count", pgkind.Int)},
				Where:        cond(`"st""atus" IN ('OPEN', 'it''s') AND NOT (total BETWEEN 1 AND 2.5 OR paid) AND at IS NOT NULL AND at > '2024-01-01'`),
				WhereColumns: []mapping.Column{typ(`st"atus`, pgkind.Text), typ("total", pgkind.Numeric), typ("paid", pgkind.Bool), typ("at", pgkind.Timestamptz)}},
			{Schema: "s", Table: "o", On: on, Agg: mapping.AggSum, AggColumn: "total", Columns: []mapping.Column{typ("total", pgkind.Numeric)}},
			{Schema: "s", Table: "o", On: on, Columns: []mapping.Column{typ("note", pgkind.Text)}, OrderBy: []string{"at", "id"}, Desc: true, Limit: 1,
				Where: cond("paid IS FALSE"), WhereColumns: []mapping.Column{typ("paid", pgkind.Bool)}},
		}}
	sql, args, err := q.SQL()
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT t."id"::int8, ` +
		`(SELECT json_build_array(json_build_array((count(*))::int8))::text FROM "s"."o" AS e0 WHERE e0."customer id" = t."id" AND ` +
		`((e0."st""atus"::text IN ($1::text, $2::text)) AND (NOT ((e0."total" BETWEEN $3::text::numeric AND $4::text::numeric) OR (e0."paid"))) AND (e0."at" IS NOT NULL) AND (e0."at" > $5::text::timestamptz))), ` +
		`(SELECT json_build_array(json_build_array((coalesce(sum(e1."total")::numeric, 0))::numeric))::text FROM "s"."o" AS e1 WHERE e1."customer id" = t."id"), ` +
		`(SELECT coalesce(json_agg(json_build_array(x.c0)), '[]')::text FROM (SELECT e2."note"::text AS c0 FROM "s"."o" AS e2 WHERE e2."customer id" = t."id" AND (e2."paid" IS FALSE) ORDER BY e2."at" DESC NULLS LAST, e2."id" DESC NULLS LAST LIMIT 1) AS x) ` +
		`FROM "s"."c" AS t WHERE (t."id") > ($6::id) ORDER BY t."id"`
	if sql != want {
		t.Errorf("SQL\n got %s\nwant %s", sql, want)
	}
	if got := fmt.Sprint(args); got != "[OPEN it's 1 2.5 2024-01-01 5]" {
		t.Errorf("args %s", got)
	}
}
