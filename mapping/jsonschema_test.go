package mapping_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/pgdynamo/migrate/mapping"
)

// mappingSchemaFile is the published JSON Schema of the mapping file, the
// one editors load through the "# yaml-language-server: $schema=" line.
const mappingSchemaFile = "../docs/schema/mapping.schema.json"

func compileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return sch
}

// yamlToJSON turns a YAML document into the JSON value a YAML-aware editor
// validates. Mapping keys are taken as text, as the parser takes them (a
// key "null:" is the string "null"); scalars are decoded with YAML's types.
func yamlToJSON(t *testing.T, src []byte) any {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	raw, err := json.Marshal(nodeValue(t, doc.Content[0]))
	if err != nil {
		t.Fatalf("yaml to json: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func nodeValue(t *testing.T, n *yaml.Node) any {
	t.Helper()
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeValue(t, n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, nodeValue(t, c))
		}
		return l
	case yaml.AliasNode:
		return nodeValue(t, n.Alias)
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatalf("yaml scalar at %d:%d: %v", n.Line, n.Column, err)
	}
	return v
}

// Every mapping in the repository's testdata is valid by the schema, as it
// is by the parser.
func TestTestdataMappingsMatchTheSchema(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, mappingSchemaFile)
	var files []string
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d mappings under testdata: %v", len(files), files)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mapping.Parse(f, src); err != nil {
				t.Fatalf("the parser rejects it: %v", err)
			}
			if err := sch.Validate(yamlToJSON(t, src)); err != nil {
				t.Errorf("the schema rejects it:\n%v", err)
			}
		})
	}
}

// Each case is a mistake both the schema and the parser must reject; the
// schema's message must point at the offending place.
func TestSchemaRejectsWhatTheParserRejects(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, mappingSchemaFile)
	const ok = `table: Shop
keys: { partition: PK, sort: SK }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
entities:
  Customer:
    from: customers
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    attributes: { name: name, since: { column: created_at, as: epoch_millis } }
    embed:
      addresses: { from: addresses, join: { customer_id: customer_id }, as: map, by: label, max: 20 }
    copy:
      - { from: regions, join: { region_id: region_id }, attributes: [region] }
    index:
      GSI2: { pk: "X#{shard}", sk: Y, shard: { count: auto, readRate: 1000, by: customer_id } }
`
	if _, err := mapping.Parse("m.yaml", []byte(strings.Replace(ok, "GSI2:", "GSI1:", 1))); err != nil {
		t.Fatalf("the base case must parse: %v", err)
	}
	if err := sch.Validate(yamlToJSON(t, []byte(ok))); err != nil {
		t.Fatalf("the base case must validate: %v", err)
	}
	cases := []struct {
		name, old, new string
		want           string // in the schema's error
	}{
		{"missing keys", "keys: { partition: PK, sort: SK }\n", "", "missing property 'keys'"},
		{"unknown top-level field", "table: Shop\n", "table: Shop\ntabel: X\n", "additional properties 'tabel' not allowed"},
		{"table name too short", "table: Shop", "table: Sh", "/table"},
		{"table name with a space", "table: Shop", `table: "My Shop"`, "/table"},
		{"index name with a slash", "  GSI1: {", "  GSI/1: {", "invalid propertyName 'GSI/1'"},
		{"index without partition", "GSI1: { partition: GSI1PK, sort: GSI1SK }", "GSI1: { sort: GSI1SK }", "missing property 'partition'"},
		{"no entities", "entities:\n", "entities: {}\nx:\n", "additional properties"},
		{"entity without from", "    from: customers\n", "", "missing property 'from'"},
		{"misspelled entity field", "    from: customers\n", "    form: customers\n", "additional properties 'form' not allowed"},
		{"key without pk", `key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }`, `key: { sk: PROFILE }`, "missing property 'pk'"},
		{"empty template", `pk: "CUSTOMER#{customer_id}"`, `pk: ""`, "/key/pk"},
		{"unknown conversion", "as: epoch_millis", "as: epoch_milis", "/attributes"},
		{"bad null mode", "as: epoch_millis }", "as: epoch_millis, null: keep }", "/attributes"},
		{"attributes as a bare column", "attributes: { name: name, since: { column: created_at, as: epoch_millis } }", "attributes: name", "/attributes"},
		{"embed without max", ", by: label, max: 20 }", ", by: label }", "missing property 'max'"},
		{"embed max zero", "max: 20", "max: 0", "/max"},
		{"map embed without by", "as: map, by: label,", "as: map,", "missing property 'by'"},
		{"list embed with by", "as: map, by: label,", "as: list, by: label,", "/embed/addresses"},
		{"embed as set", "as: map", "as: set", "/as"},
		{"empty join", "join: { customer_id: customer_id }", "join: {}", "/join"},
		{"copy of everything", "attributes: [region]", `attributes: "*"`, "/copy/0/attributes"},
		{"copy of nothing", ", attributes: [region] }", " }", "/copy/0"},
		{"copy as a map", "    copy:\n      - {", "    copy:\n      x: {", "/copy"},
		{"shard auto without readRate", "readRate: 1000, ", "", "missing property 'readRate'"},
		{"shard count too high", "count: auto", "count: 1001", "/shard/count"},
		{"shard without by", ", by: customer_id } }", " } }", "missing property 'by'"},
		{"index field misspelled", `GSI2: { pk: "X#{shard}"`, `GSI2: { pkk: "X#{shard}"`, "additional properties 'pkk' not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(ok, tc.old, tc.new, 1)
			if src == ok {
				t.Fatalf("the edit %q did not apply", tc.old)
			}
			if _, err := mapping.Parse("m.yaml", []byte(src)); err == nil {
				t.Errorf("the parser accepts it, the schema must not be stricter:\n%s", src)
			}
			err := sch.Validate(yamlToJSON(t, []byte(src)))
			if err == nil {
				t.Fatalf("the schema accepts:\n%s", src)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) {
				t.Errorf("schema error lacks %q:\n%s", tc.want, msg)
			}
		})
	}
}
