package transform_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/golden"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// Each case directory under testdata/transform holds catalog.json (the
// source tables), mapping.yaml, rows.json (rows per table, in key order) and
// items.golden.json (the items and row errors the mapping produces).
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/transform/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden cases found")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			got := runCase(t, dir)
			golden.Check(t, filepath.Join(dir, "items.golden.json"), got)
		})
	}
}

type catalogFile struct {
	Tables []struct {
		Schema     string     `json:"schema"`
		Name       string     `json:"name"`
		PrimaryKey []string   `json:"primaryKey"`
		Unique     [][]string `json:"unique"`
		Columns    []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Kind    string `json:"kind"`
			Elem    string `json:"elem"`
			NotNull bool   `json:"notNull"`
		} `json:"columns"`
	} `json:"tables"`
}

func kindOf(t testing.TB, s string) pgkind.Kind {
	for k := pgkind.Other; k <= pgkind.Array; k++ {
		if k.String() == s {
			return k
		}
	}
	if s == "" {
		return pgkind.Other
	}
	t.Fatalf("unknown kind %q", s)
	return 0
}

func loadCatalog(t testing.TB, path string) *mapping.Catalog {
	var cf catalogFile
	readJSON(t, path, &cf)
	cat := &mapping.Catalog{Tables: map[string]*mapping.Table{}}
	for _, ft := range cf.Tables {
		schema := ft.Schema
		if schema == "" {
			schema = "public"
		}
		tb := &mapping.Table{Schema: schema, Name: ft.Name, PrimaryKey: ft.PrimaryKey}
		if ft.PrimaryKey != nil {
			tb.Unique = append(tb.Unique, ft.PrimaryKey)
		}
		tb.Unique = append(tb.Unique, ft.Unique...)
		for _, c := range ft.Columns {
			tb.Columns = append(tb.Columns, mapping.Column{
				Name: c.Name, NotNull: c.NotNull,
				Type: pgkind.Type{Name: c.Type, Kind: kindOf(t, c.Kind), Elem: kindOf(t, c.Elem)},
			})
		}
		cat.Tables[schema+"."+ft.Name] = tb
	}
	return cat
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// value converts a JSON test value to what extract yields for the kind.
func value(t *testing.T, v any, k, elem pgkind.Kind) any {
	if v == nil {
		return nil
	}
	switch k {
	case pgkind.Int:
		n, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	case pgkind.Numeric:
		return extract.Decimal(fmt.Sprint(v))
	case pgkind.Float:
		if s, ok := v.(string); ok { // "NaN", "Infinity"
			var f float64
			fmt.Sscan(s, &f)
			return f
		}
		f, err := v.(json.Number).Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	case pgkind.Bool:
		return v.(bool)
	case pgkind.Date, pgkind.Timestamp, pgkind.Timestamptz:
		s := v.(string)
		switch s {
		case "infinity":
			return extract.Infinity{Sign: 1}
		case "-infinity":
			return extract.Infinity{Sign: -1}
		}
		layout := time.RFC3339Nano
		if k == pgkind.Date {
			layout = "2006-01-02"
		}
		tm, err := time.Parse(layout, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UTC()
	case pgkind.Bytea:
		b, err := base64.StdEncoding.DecodeString(v.(string))
		if err != nil {
			t.Fatal(err)
		}
		return b
	case pgkind.JSON:
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return extract.JSON(b)
	case pgkind.Array:
		arr := v.([]any)
		out := make([]any, len(arr))
		for i, e := range arr {
			if sub, ok := e.([]any); ok {
				out[i] = value(t, sub, pgkind.Array, elem)
				continue
			}
			out[i] = value(t, e, elem, pgkind.Other)
		}
		return out
	}
	return fmt.Sprint(v)
}

type goldenItem struct {
	Entity    string         `json:"entity"`
	SourceKey string         `json:"sourceKey"`
	Item      map[string]any `json:"item,omitempty"`
	Error     string         `json:"error,omitempty"`
}

func runCase(t *testing.T, dir string) []byte {
	t.Helper()
	cat := loadCatalog(t, filepath.Join(dir, "catalog.json"))
	data, err := os.ReadFile(filepath.Join(dir, "mapping.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("mapping.yaml", data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if ds := mapping.Check(m, cat); ds != nil {
		t.Fatalf("check: %v", ds)
	}
	plan, err := transform.Compile(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	var rows map[string][]map[string]any
	readJSON(t, filepath.Join(dir, "rows.json"), &rows)
	var out []goldenItem
	for _, src := range plan.Sources {
		for _, r := range rows[src.Name] {
			row := buildRow(t, src.Query, r, rows)
			items, errs := src.Apply(row)
			for _, it := range items {
				out = append(out, goldenItem{Entity: it.Entity, SourceKey: it.SourceKey, Item: transform.JSONItem(it.Attrs)})
			}
			for _, e := range errs {
				out = append(out, goldenItem{Entity: e.Entity, SourceKey: e.Key, Error: e.Error()})
			}
		}
	}
	// One item per line: reviewers see exactly which items a change moves.
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, it := range out {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("  ")
		buf.Write(bytes.TrimSpace(line.Bytes()))
		if i < len(out)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	return buf.Bytes()
}

// buildRow lays out one base row as extract would: base columns, joined
// parent columns (LEFT JOIN semantics), then embedded child rows (filtered,
// ordered and limited like the SQL).
func buildRow(t *testing.T, q extract.Query, base map[string]any, rows map[string][]map[string]any) extract.Row {
	t.Helper()
	var vals []any
	for _, c := range q.Columns {
		vals = append(vals, value(t, base[c.Name], c.Type.Kind, c.Type.Elem))
	}
	rels := []map[string]any{} // raw rows of joins, by index; nil when no parent
	rel := func(ref int) map[string]any {
		if ref < 0 {
			return base
		}
		return rels[ref]
	}
	for _, j := range q.Joins {
		var match map[string]any
		for _, cand := range rows[j.Schema+"."+j.Table] {
			ok := true
			for _, on := range j.On {
				from := rel(on.Ref)
				if from == nil || from[on.RefColumn] == nil || fmt.Sprint(cand[on.Column]) != fmt.Sprint(from[on.RefColumn]) {
					ok = false
				}
			}
			if ok {
				match = cand
				break
			}
		}
		rels = append(rels, match)
		for _, c := range j.Columns {
			var v any
			if match != nil {
				v = value(t, match[c.Name], c.Type.Kind, c.Type.Elem)
			}
			vals = append(vals, v)
		}
	}
	for _, e := range q.Embeds {
		var children []map[string]any
		for _, cand := range rows[e.Schema+"."+e.Table] {
			ok := true
			for _, on := range e.On {
				if fmt.Sprint(cand[on.Column]) != fmt.Sprint(base[on.RefColumn]) {
					ok = false
				}
			}
			if ok {
				children = append(children, cand)
			}
		}
		sort.SliceStable(children, func(a, b int) bool {
			for _, o := range e.OrderBy {
				x, y := fmt.Sprint(children[a][o]), fmt.Sprint(children[b][o])
				if x != y {
					return x < y
				}
			}
			return false
		})
		if e.Limit > 0 && len(children) > e.Limit {
			children = children[:e.Limit]
		}
		out := make([]extract.Row, len(children))
		for i, ch := range children {
			r := extract.Row{}
			for _, c := range e.Columns {
				r.Values = append(r.Values, value(t, ch[c.Name], c.Type.Kind, c.Type.Elem))
			}
			out[i] = r
		}
		vals = append(vals, out)
	}
	return extract.Row{Values: vals}
}
