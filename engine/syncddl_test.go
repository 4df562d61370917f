package engine

import (
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/extract"
)

func TestDiffSchemas(t *testing.T) {
	t.Parallel()
	old := extract.TableSchema{Schema: "public", Name: "books", PrimaryKey: []string{"book_id"}, Identity: extract.IdentityDefault, IdentityColumns: []string{"book_id"},
		Columns: []extract.ColumnSchema{
			{Num: 1, Name: "book_id", Type: "bigint", TypeOID: 20, TypeMod: -1, Mapped: true},
			{Num: 2, Name: "price", Type: "numeric(10,2)", TypeOID: 1700, TypeMod: 655366, Mapped: true},
			{Num: 3, Name: "notes", Type: "text", TypeOID: 25, TypeMod: -1},
		}}
	edit := func(f func(*extract.TableSchema)) extract.TableSchema {
		n := old
		n.Columns = append([]extract.ColumnSchema(nil), old.Columns...)
		f(&n)
		return n
	}
	for _, c := range []struct {
		name   string
		cur    []extract.TableSchema
		want   string
		follow bool
	}{
		{"same", []extract.TableSchema{old}, "", true},
		{"added", []extract.TableSchema{edit(func(n *extract.TableSchema) {
			n.Columns = append(n.Columns, extract.ColumnSchema{Num: 4, Name: "stock", Type: "integer", Default: true})
		})}, "table public.books: column stock (integer) was added, with a default", true},
		{"type of a mapped column", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Columns[1].Type, n.Columns[1].TypeMod = "numeric(12,3)", 786439 })},
			"table public.books: column price changed type numeric(10,2) → numeric(12,3), which the mapping reads", false},
		{"type of an unmapped column", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Columns[2].Type, n.Columns[2].TypeOID = "character varying", 1043 })},
			"table public.books: column notes changed type text → character varying", true},
		{"renamed", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Columns[1].Name = "cost" })},
			"table public.books: column price was renamed to cost, which the mapping reads", false},
		{"dropped, unmapped", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Columns = n.Columns[:2] })},
			"table public.books: column notes (text) was dropped", true},
		{"dropped and added again", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Columns[1].Num = 5 })},
			"table public.books: column price (numeric(10,2)) was dropped, which the mapping reads; table public.books: column price (numeric(10,2)) was added, NULL in existing rows", false},
		{"primary key", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.PrimaryKey = []string{"book_id", "price"} })},
			"table public.books: primary key (book_id) → (book_id, price)", false},
		{"replica identity, nothing required", []extract.TableSchema{edit(func(n *extract.TableSchema) { n.Identity, n.IdentityColumns = extract.IdentityFull, nil })},
			"table public.books: replica identity DEFAULT (book_id) → FULL, which still carries what deletes and key changes need", true},
		{"table gone", nil, "table public.books: the table was dropped or renamed", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			changes := diffSchemas([]extract.TableSchema{old}, c.cur, nil)
			var got []string
			for _, ch := range changes {
				got = append(got, ch.String())
			}
			if strings.Join(got, "; ") != c.want {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "; "), c.want)
			}
			if err := stopOn(changes, 0, "while streaming"); (err == nil) != c.follow {
				t.Errorf("stop: %v, want follow %v", err, c.follow)
			}
		})
	}
}
