package mapping_test

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// jobsCatalog has a job history with one current job per employee, made
// so by a partial unique index, and a badge table with a full one.
func jobsCatalog() *mapping.Catalog {
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	cat.Tables["hr.job_history"] = &mapping.Table{Schema: "hr", Name: "job_history",
		Columns: []mapping.Column{
			col("job_id", pgkind.Int, "bigint", true),
			col("emp_id", pgkind.Int, "bigint", true),
			col("title", pgkind.Text, "text", true),
			col("status", pgkind.Text, "character varying(10)", true),
			col("end_date", pgkind.Date, "date", false),
		},
		PrimaryKey: []string{"job_id"}, Unique: [][]string{{"job_id"}},
		UniqueIndexes: []mapping.UniqueIndex{
			{Name: "job_history_pkey", Columns: []string{"job_id"}},
			{Name: "one_current_job", Columns: []string{"emp_id"}, Predicate: "(end_date IS NULL)"},
			{Name: "one_open_job", Columns: []string{"emp_id"}, Predicate: "((status)::text = ANY ((ARRAY['OPEN'::character varying, 'HELD'::character varying])::text[]))"},
		},
	}
	cat.Tables["hr.badges"] = &mapping.Table{Schema: "hr", Name: "badges",
		Columns: []mapping.Column{
			col("badge_id", pgkind.Int, "bigint", true),
			col("emp_id", pgkind.Int, "bigint", true),
			col("site", pgkind.Text, "text", true),
			col("desk", pgkind.Text, "text", false),
		},
		PrimaryKey: []string{"badge_id"}, Unique: [][]string{{"badge_id"}},
		UniqueIndexes: []mapping.UniqueIndex{
			{Name: "badges_pkey", Columns: []string{"badge_id"}},
			{Name: "badge_per_emp", Columns: []string{"emp_id"}},
			{Name: "site_by_expr", Columns: []string{"site"}, Predicate: "(lower(site) = 'x'::text)"},
			{Name: "one_desk", Columns: []string{"desk"}},
		},
	}
	return cat
}

const hrHeader = `table: HRTable
schema: hr
keys: { partition: PK, sort: SK }
entities:
`

func TestSingletons(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"partial index implied by the where filter", hrHeader + "  CurrentJob:\n    from: job_history\n    where: \"end_date IS NULL\"\n    key: { pk: \"EMP#{emp_id}\", sk: CURRENT_JOB }\n", nil},
		{"implied by one conjunct of the filter", hrHeader + "  CurrentJob:\n    from: job_history\n    where: \"title <> 'x' AND end_date IS NULL\"\n    key: { pk: \"EMP#{emp_id}\", sk: CURRENT_JOB }\n", nil},
		{"predicate with casts and ANY ARRAY", hrHeader + "  OpenJob:\n    from: job_history\n    where: \"status IN ('OPEN', 'HELD')\"\n    key: { pk: \"EMP#{emp_id}\", sk: OPEN_JOB }\n", nil},
		{"full unique index", hrHeader + "  Badge:\n    from: badges\n    key: { pk: \"EMP#{emp_id}\", sk: BADGE }\n", nil},
		{"no where filter", hrHeader + "  CurrentJob:\n    from: job_history\n    key: { pk: \"EMP#{emp_id}\", sk: CURRENT_JOB }\n", []string{
			`m.yaml:5:3: the key of CurrentJob does not include the primary key (job_id) or another unique key of hr.job_history, so two rows could produce the same item: the unique index one_current_job over (emp_id) holds only where end_date IS NULL, which the where filter of CurrentJob does not imply: add that condition to the where filter; the unique index one_open_job over (emp_id) holds only where status IN ('OPEN', 'HELD'), which the where filter of CurrentJob does not imply: add that condition to the where filter`}},
		{"filter that does not imply the predicate", hrHeader + "  CurrentJob:\n    from: job_history\n    where: \"end_date IS NULL OR title = 'x'\"\n    key: { pk: \"EMP#{emp_id}\", sk: CURRENT_JOB }\n", []string{
			`m.yaml:5:3: the key of CurrentJob does not include the primary key (job_id) or another unique key of hr.job_history, so two rows could produce the same item: the unique index one_current_job over (emp_id) holds only where end_date IS NULL, which the where filter of CurrentJob does not imply: add that condition to the where filter; the unique index one_open_job over (emp_id) holds only where status IN ('OPEN', 'HELD'), which the where filter of CurrentJob does not imply: add that condition to the where filter`}},
		{"no index over the key's columns", hrHeader + "  JobByTitle:\n    from: job_history\n    where: \"end_date IS NULL\"\n    key: { pk: \"TITLE#{title}\", sk: JOB }\n", []string{
			`m.yaml:5:3: the key of JobByTitle does not include the primary key (job_id) or another unique key of hr.job_history, so two rows could produce the same item: a unique constraint or unique index over (title), or a partial unique index over them whose predicate the where filter implies, would make it one row per key`}},
		{"key without a column", hrHeader + "  AnyJob:\n    from: job_history\n    where: \"end_date IS NULL\"\n    key: { pk: JOBS, sk: ANY }\n", []string{
			`m.yaml:5:3: the key of AnyJob does not include the primary key (job_id) or another unique key of hr.job_history, so two rows could produce the same item: its key names no column of the table, so every row would produce the same item`}},
		{"nullable index column", hrHeader + "  Desk:\n    from: badges\n    key: { pk: \"DESK#{desk}\", sk: BADGE }\n", []string{
			`m.yaml:5:3: the key of Desk does not include the primary key (badge_id) or another unique key of hr.badges, so two rows could produce the same item: the unique index one_desk over (desk) lets rows with NULL in desk repeat: make them NOT NULL`}},
		{"predicate this tool cannot read", hrHeader + "  BySite:\n    from: badges\n    key: { pk: \"SITE#{site}\", sk: BADGE }\n", []string{
			`m.yaml:5:3: the key of BySite does not include the primary key (badge_id) or another unique key of hr.badges, so two rows could produce the same item: the partial unique index site_by_expr over (site) has a predicate this tool cannot read ((lower(site) = 'x'::text))`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapping.Parse("m.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range mapping.Check(m, jobsCatalog()) {
				lines = append(lines, d.String())
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n got: %s\nwant: %s", strings.Join(lines, "\n      "), strings.Join(tc.want, "\n      "))
			}
			if tc.want == nil {
				// validate accepts the singleton, but the run must still
				// check its keys: the index proves nothing the run can
				// rely on once the source changes.
				for _, e := range mapping.ProveUniqueKeys(m, jobsCatalog()).Entities {
					if e.Unique {
						t.Errorf("entity %s proven unique for the run: %s", e.Entity, e.Reason)
					}
				}
			}
		})
	}
}

func TestReadPredicate(t *testing.T) {
	t.Parallel()
	cases := []struct{ pg, want string }{
		{"(end_date IS NULL)", "(end_date IS NULL)"},
		{"((status)::text = 'open'::text)", "(status = 'open')"},
		{"(kind = ANY (ARRAY['a'::text, 'b'::text]))", "(kind IN ('a', 'b'))"},
		{"(kind <> ALL (ARRAY['a'::text]))", "(kind NOT IN ('a'))"},
		{"(is_current AND (\"End\" > '2024-01-01'::date))", "(is_current AND (\"End\" > '2024-01-01'))"},
		{"(ts < '2024-01-01 00:00:00'::timestamp without time zone)", "(ts < '2024-01-01 00:00:00')"},
		{"(note = 'a::b (c)'::character varying(20))", "(note = 'a::b (c)')"},
		{"(n = (1)::numeric)", "(n = 1)"},
		{"((status)::text = ANY ((ARRAY['OPEN'::character varying, 'HELD'::character varying])::text[]))", "(status IN ('OPEN', 'HELD'))"},
		{"(tag = ANY (ARRAY['a])'::text]))", "(tag IN ('a])'))"},
	}
	for _, tc := range cases {
		c, err := mapping.ReadPredicate(tc.pg)
		if err != nil {
			t.Errorf("%s: %v", tc.pg, err)
			continue
		}
		if c.Raw != tc.want {
			t.Errorf("%s: got %s, want %s", tc.pg, c.Raw, tc.want)
		}
	}
}
