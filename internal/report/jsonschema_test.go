package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The published JSON Schemas of the documents, in the repository's docs.
const schemaDir = "../../docs/schema"

// compileSchema compiles one of the published schemas. Each is registered
// under its $id, where the others' relative references find it, so that
// nothing is fetched.
func compileSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	ids := map[string]string{}
	for _, f := range []string{"plan.schema.json", "verify.schema.json"} {
		raw, err := os.ReadFile(filepath.Join(schemaDir, f))
		if err != nil {
			t.Fatal(err)
		}
		doc := jsonValue(t, raw)
		id, _ := doc.(map[string]any)["$id"].(string)
		if !strings.HasSuffix(id, "/docs/schema/"+f) {
			t.Fatalf("%s: $id %q does not name the file", f, id)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
		ids[f] = id
	}
	sch, err := c.Compile(ids[file])
	if err != nil {
		t.Fatalf("compile %s: %v", file, err)
	}
	return sch
}

func jsonValue(t *testing.T, raw []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The golden JSON documents, and every plan and verify document the other
// tests render, are valid by the published schemas.
func TestDocumentsMatchTheSchemas(t *testing.T) {
	t.Parallel()
	plan, verify := compileSchema(t, "plan.schema.json"), compileSchema(t, "verify.schema.json")
	for file, sch := range map[string]*jsonschema.Schema{"plan.json": plan, "verify.json": verify} {
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(jsonValue(t, raw)); err != nil {
			t.Errorf("testdata/%s:\n%v", file, err)
		}
	}
	missing := samplePlan()
	missing.Table.Exists = false
	missing.Reads = Reads{Mode: "none"}
	missing.Table.Create = &TableCreate{
		Keys:    []KeyAttribute{{Name: "PK", Type: "S", Role: "partition"}, {Name: "SK", Type: "S", Role: "sort"}},
		Billing: "PAY_PER_REQUEST",
		Indexes: []IndexCreate{
			{Name: "GSI1", Kind: "global", Keys: []KeyAttribute{{Name: "GSI1PK", Type: "S", Role: "partition"}}, Projection: "ALL"},
			{Name: "LSI1", Kind: "local", Keys: []KeyAttribute{{Name: "PK", Type: "S", Role: "partition"}, {Name: "LSI1SK", Type: "N", Role: "sort"}},
				Projection: "INCLUDE", NonKeyAttributes: []string{"total"}},
		},
	}
	missing.Capacity.MaxItem = nil
	missing.Capacity.Indexes = []IndexKeys{
		{Index: "GSI1", Items: 2129, WriteUnits: 2129, DistinctPartitionKeys: 118, Method: "exact",
			Projection: "ALL", StorageBytes: 650_000, AllWriteUnits: 2129, AllStorageBytes: 650_000},
		{Index: "LSI1", Items: 210, WriteUnits: 210, DistinctPartitionKeys: 68, Method: "hyperloglog",
			Projection: "INCLUDE", StorageBytes: 31_000, AllWriteUnits: 420, AllStorageBytes: 96_000},
	}
	missing.Problems = []Problem{{Kind: "duplicate-key", Entity: "Order", Key: &Key{PK: "CUSTOMER#1"}, Message: "same key"}}
	for name, doc := range map[string]func(*bytes.Buffer) error{
		"plan, missing table": func(b *bytes.Buffer) error { return JSON(b, missing) },
		"plan with no entities": func(b *bytes.Buffer) error {
			return JSON(b, &Plan{GeneratedAt: time.Now(), Reads: Reads{Mode: "none"}})
		},
	} {
		if err := plan.Validate(jsonValue(t, render(t, doc))); err != nil {
			t.Errorf("%s:\n%v", name, err)
		}
	}
	if err := verify.Validate(jsonValue(t, render(t, func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(true)) }))); err != nil {
		t.Errorf("identical verify:\n%v", err)
	}
}

// Each case breaks a valid document in a way a consumer relying on the
// schema must be protected from.
func TestSchemasRejectBrokenDocuments(t *testing.T) {
	t.Parallel()
	plan, verify := compileSchema(t, "plan.schema.json"), compileSchema(t, "verify.schema.json")
	doc := func(f func(*bytes.Buffer) error) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(render(t, f), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name   string
		sch    *jsonschema.Schema
		doc    func(*bytes.Buffer) error
		break_ func(m map[string]any)
		want   string
	}{
		{"wrong schema name", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { m["schema"] = "migrate.plan/v2" }, "/schema"},
		{"a verify document as a plan", plan, func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(true)) },
			func(m map[string]any) {}, "missing properties"},
		{"summary without create", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { delete(m["summary"].(map[string]any), "create") }, "missing property 'create'"},
		{"null list", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { m["stale"] = nil }, "/stale"},
		{"negative count", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { m["entities"].([]any)[0].(map[string]any)["create"] = -1 }, "/entities/0/create"},
		{"unknown read mode", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { m["reads"].(map[string]any)["mode"] = "query" }, "/reads/mode"},
		{"untagged attribute value", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) {
				m["changes"].([]any)[0].(map[string]any)["attributes"].([]any)[0].(map[string]any)["new"] = "Oslo"
			}, "/changes/0/attributes/0/new"},
		{"changed without old", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) {
				delete(m["changes"].([]any)[0].(map[string]any)["attributes"].([]any)[0].(map[string]any), "old")
			}, "missing property 'old'"},
		{"bad time", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) { m["generatedAt"] = "yesterday" }, "/generatedAt"},
		{"unknown index projection", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) {
				m["capacity"].(map[string]any)["indexes"].([]any)[0].(map[string]any)["projection"] = "SOME"
			}, "/capacity/indexes/0/projection"},
		{"negative index storage", plan, func(b *bytes.Buffer) error { return JSON(b, samplePlan()) },
			func(m map[string]any) {
				m["capacity"].(map[string]any)["indexes"].([]any)[1].(map[string]any)["allStorageBytes"] = -1
			}, "/capacity/indexes/1/allStorageBytes"},
		{"short hash", verify, func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(false)) },
			func(m map[string]any) { m["entities"].([]any)[0].(map[string]any)["actualHash"] = "abc" }, "/entities/0/actualHash"},
		{"sample above one", verify, func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(false)) },
			func(m map[string]any) { m["sample"] = 1.5 }, "/sample"},
		{"missing item without key", verify, func(b *bytes.Buffer) error { return VerifyJSON(b, sampleVerify(false)) },
			func(m map[string]any) { delete(m["missing"].([]any)[0].(map[string]any), "key") }, "missing property 'key'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := doc(tc.doc)
			tc.break_(m)
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.sch.Validate(jsonValue(t, raw))
			if err == nil {
				t.Fatal("the schema accepts the broken document")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error lacks %q:\n%v", tc.want, err)
			}
		})
	}
}

// The schemas describe exactly the Go types: every JSON field is a property,
// every field without omitempty is required, and no property is left over.
// A field added to schema.go without its schema fails here.
func TestSchemasFollowTheGoTypes(t *testing.T) {
	t.Parallel()
	files := map[string]map[string]any{}
	load := func(file string) map[string]any {
		if files[file] == nil {
			raw, err := os.ReadFile(filepath.Join(schemaDir, file))
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			files[file] = m
		}
		return files[file]
	}
	// resolve follows $ref (within a file or into a sibling file).
	var resolve func(file string, s map[string]any) (string, map[string]any)
	resolve = func(file string, s map[string]any) (string, map[string]any) {
		ref, ok := s["$ref"].(string)
		if !ok {
			return file, s
		}
		target, ptr, _ := strings.Cut(ref, "#")
		if target != "" {
			file = target
		}
		node := load(file)
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			if tok != "" {
				node = node[tok].(map[string]any)
			}
		}
		return resolve(file, node)
	}
	var walk func(path, file string, s map[string]any, typ reflect.Type)
	walk = func(path, file string, s map[string]any, typ reflect.Type) {
		file, s = resolve(file, s)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch {
		case typ == reflect.TypeFor[time.Time]():
			if s["type"] != "string" {
				t.Errorf("%s: a time, described as %v", path, s["type"])
			}
		case typ == reflect.TypeFor[json.RawMessage]():
			if s["type"] != "object" {
				t.Errorf("%s: a DynamoDB JSON value, described as %v", path, s["type"])
			}
		case typ.Kind() == reflect.Struct:
			props, _ := s["properties"].(map[string]any)
			var required []string
			for _, r := range s["required"].([]any) {
				required = append(required, r.(string))
			}
			fields := map[string]bool{}
			var fieldsOf func(reflect.Type)
			fieldsOf = func(st reflect.Type) {
				for f := range st.Fields() {
					if f.Anonymous {
						fieldsOf(f.Type)
						continue
					}
					name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
					fields[name] = true
					p, ok := props[name].(map[string]any)
					if !ok {
						t.Errorf("%s: field %s (%q) is not in the schema", path, f.Name, name)
						continue
					}
					if omit := strings.Contains(opts, "omitempty"); omit == slices.Contains(required, name) {
						t.Errorf("%s.%s: omitempty %v, but required in the schema %v", path, name, omit, !omit)
					}
					walk(path+"."+name, file, p, f.Type)
				}
			}
			fieldsOf(typ)
			for name := range props {
				if !fields[name] {
					t.Errorf("%s: the schema has property %q that the Go type lacks", path, name)
				}
			}
		case typ.Kind() == reflect.Slice:
			if s["type"] != "array" {
				t.Errorf("%s: a list, described as %v", path, s["type"])
				return
			}
			walk(path+"[]", file, s["items"].(map[string]any), typ.Elem())
		case typ.Kind() == reflect.String:
			if ty, ok := s["type"]; ok && ty != "string" {
				t.Errorf("%s: a string, described as %v", path, ty)
			}
		case typ.Kind() == reflect.Bool:
			if s["type"] != "boolean" {
				t.Errorf("%s: a boolean, described as %v", path, s["type"])
			}
		case typ.Kind() == reflect.Float64:
			if s["type"] != "number" {
				t.Errorf("%s: a float, described as %v", path, s["type"])
			}
		case typ.Kind() == reflect.Int, typ.Kind() == reflect.Int64:
			if s["type"] != "integer" {
				t.Errorf("%s: an integer, described as %v", path, s["type"])
			}
		default:
			t.Errorf("%s: no rule for Go type %v", path, typ)
		}
	}
	walk("plan", "plan.schema.json", load("plan.schema.json"), reflect.TypeFor[Plan]())
	walk("verify", "verify.schema.json", load("verify.schema.json"), reflect.TypeFor[Verify]())
}
