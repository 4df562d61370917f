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

// schemaBase uses every construct of the language once; it must parse and
// validate. The cases below edit it.
const schemaBase = `table: Shop
keys: { partition: PK, sort: { name: SK, type: S } }
indexes:
  GSI1: { partition: GSI1PK, sort: GSI1SK }
  GSI2: { partition: { name: GSI2PK, type: N }, projection: KEYS_ONLY }
  LSI1: { local: true, sort: LSI1SK, projection: { include: [name] } }
entities:
  Customer:
    from: customers
    where: deleted_at IS NULL
    key: { pk: "CUSTOMER#{customer_id}", sk: PROFILE }
    attributes: { name: name, since: { column: created_at, as: epoch_millis } }
    embed:
      addresses: { from: addresses, join: { customer_id: customer_id }, as: map, by: label, max: 20 }
    copy:
      - { from: regions, join: { region_id: region_id }, into: region, attributes: [region] }
    index:
      GSI1: { pk: "X#{shard}", sk: Y, shard: { count: auto, readRate: 1000, by: customer_id } }
      GSI2: { pk: "{customer_id}", where: "tier = 'GOLD'", empty: absent }
      LSI1: { sk: "SINCE#{created_at}" }
accessPatterns:
  customer:
    description: a customer
    params: { id: customers.customer_id }
    get: { pk: "CUSTOMER#{id}", sk: PROFILE }
    sql: SELECT name FROM customers WHERE customer_id = @id
  recent:
    params: "SELECT customer_id AS id FROM customers"
    query: { index: LSI1, pk: "CUSTOMER#{id}", sk: { begins_with: "SINCE#" }, direction: desc, limit: 3 }
    ordered: false
    sql: SELECT name FROM customers WHERE customer_id = @id
`

// edited applies one edit to schemaBase, failing when it does not apply.
func edited(t *testing.T, old, new string) string {
	t.Helper()
	src := strings.Replace(schemaBase, old, new, 1)
	if src == schemaBase {
		t.Fatalf("the edit %q did not apply", old)
	}
	return src
}

// Each case is a mistake both the schema and the parser must reject; the
// schema's message must point at the offending place.
func TestSchemaRejectsWhatTheParserRejects(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, mappingSchemaFile)
	if _, err := mapping.Parse("m.yaml", []byte(schemaBase)); err != nil {
		t.Fatalf("the base case must parse: %v", err)
	}
	if err := sch.Validate(yamlToJSON(t, []byte(schemaBase))); err != nil {
		t.Fatalf("the base case must validate: %v", err)
	}
	cases := []struct {
		name, old, new string
		want           string // in the schema's error
	}{
		{"missing keys", "keys: { partition: PK, sort: { name: SK, type: S } }\n", "", "missing property 'keys'"},
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
		{"copy as a map", "    copy:\n      - {", "    copy:\n      x: {", "/copy"},
		{"shard auto without readRate", "readRate: 1000, ", "", "missing property 'readRate'"},
		{"shard count too high", "count: auto", "count: 1001", "/shard/count"},
		{"shard without by", ", by: customer_id } }", " } }", "missing property 'by'"},
		{"index field misspelled", `GSI1: { pk: "X#{shard}"`, `GSI1: { pkk: "X#{shard}"`, "additional properties 'pkk' not allowed"},

		// Key types, local indexes and projections.
		{"unknown key type", "sort: { name: SK, type: S }", "sort: { name: SK, type: X }", "/keys/sort"},
		{"lower-case key type", "sort: { name: SK, type: S }", "sort: { name: SK, type: s }", "/keys/sort"},
		{"key attribute without name", "sort: { name: SK, type: S }", "sort: { type: S }", "missing property 'name'"},
		{"key attribute field misspelled", "sort: { name: SK, type: S }", "sort: { nmae: SK }", "additional properties 'nmae' not allowed"},
		{"index key type misspelled", "{ name: GSI2PK, type: N }", "{ name: GSI2PK, type: number }", "/indexes/GSI2/partition"},
		{"local index with partition", "LSI1: { local: true, sort: LSI1SK", "LSI1: { local: true, partition: PK, sort: LSI1SK", "/indexes/LSI1"},
		{"local index without sort", "LSI1: { local: true, sort: LSI1SK, ", "LSI1: { local: true, ", "missing property 'sort'"},
		{"local as a word", "local: true", "local: yes", "/indexes/LSI1/local"},
		{"unknown projection", "projection: KEYS_ONLY", "projection: KEYS_ONY", "/indexes/GSI2/projection"},
		{"projection INCLUDE without attributes", "projection: KEYS_ONLY", "projection: INCLUDE", "/indexes/GSI2/projection"},
		{"empty include", "include: [name]", "include: []", "/indexes/LSI1/projection"},
		{"projection field misspelled", "include: [name]", "includes: [name]", "/indexes/LSI1/projection"},
		{"unknown index in an entity", "      LSI1: { sk:", "      L1: { sk:", "invalid propertyName 'L1'"},

		// Where clauses, empty: absent, index entries.
		{"empty where", "where: deleted_at IS NULL", `where: ""`, "/entities/Customer/where"},
		{"where as a list", "where: deleted_at IS NULL", "where: [deleted_at IS NULL]", "/entities/Customer/where"},
		{"index where not a string", `where: "tier = 'GOLD'"`, "where: { tier: GOLD }", "/index/GSI2/where"},
		{"unknown empty mode", "empty: absent", "empty: skip", "/index/GSI2/empty"},
		{"index entry with neither key", `LSI1: { sk: "SINCE#{created_at}" }`, `LSI1: { where: "tier = 'GOLD'" }`, "/index/LSI1"},
		{"shard without pk", `GSI1: { pk: "X#{shard}", sk: Y,`, `GSI1: { sk: Y,`, "/index/GSI1"},

		// Copies into maps.
		{"copy into nothing", "into: region, attributes: [region] }", "into: region }", "/copy/0"},
		{"empty into", "into: region", `into: ""`, "/copy/0/into"},

		// Access patterns.
		{"pattern without sql", "    sql: SELECT name FROM customers WHERE customer_id = @id\n  recent:", "  recent:", "missing property 'sql'"},
		{"pattern with get and query", `    get: { pk: "CUSTOMER#{id}", sk: PROFILE }`, `    get: { pk: "CUSTOMER#{id}", sk: PROFILE }` + "\n    query: { pk: \"CUSTOMER#{id}\" }", "/accessPatterns/customer"},
		{"pattern with neither get nor query", `    get: { pk: "CUSTOMER#{id}", sk: PROFILE }` + "\n", "", "/accessPatterns/customer"},
		{"pattern field misspelled", "    description: a customer", "    descripton: a customer", "additional properties 'descripton' not allowed"},
		{"parameter without its table", "id: customers.customer_id", "id: customer_id", "/accessPatterns/customer/params"},
		{"parameter of four parts", "id: customers.customer_id", "id: db.public.customers.customer_id", "/accessPatterns/customer/params"},
		{"parameter named shard", "params: { id: customers.customer_id }", "params: { shard: customers.customer_id }", "/accessPatterns/customer/params"},
		{"params a single word", `params: "SELECT customer_id AS id FROM customers"`, "params: customers", "/accessPatterns/recent/params"},
		{"params a list", "params: { id: customers.customer_id }", "params: [customers.customer_id]", "/accessPatterns/customer/params"},
		{"get without pk", `get: { pk: "CUSTOMER#{id}", sk: PROFILE }`, "get: { sk: PROFILE }", "missing property 'pk'"},
		{"get with a condition", "sk: PROFILE }\n    sql", "sk: { begins_with: PRO } }\n    sql", "/accessPatterns/customer/get/sk"},
		{"query without pk", `index: LSI1, pk: "CUSTOMER#{id}", `, "index: LSI1, ", "missing property 'pk'"},
		{"query on a bad index name", "index: LSI1,", "index: L1,", "/accessPatterns/recent/query/index"},
		{"unknown sk condition", "begins_with:", "starts_with:", "/accessPatterns/recent/query/sk"},
		{"two sk conditions", `{ begins_with: "SINCE#" }`, `{ begins_with: "SINCE#", gt: "SINCE#2020" }`, "/accessPatterns/recent/query/sk"},
		{"no sk condition", `{ begins_with: "SINCE#" }`, "{}", "/accessPatterns/recent/query/sk"},
		{"between one value", `{ begins_with: "SINCE#" }`, `{ between: ["SINCE#"] }`, "/accessPatterns/recent/query/sk"},
		{"between three values", `{ begins_with: "SINCE#" }`, `{ between: [A, B, C] }`, "/accessPatterns/recent/query/sk"},
		{"unknown direction", "direction: desc", "direction: descending", "/query/direction"},
		{"limit zero", "limit: 3", "limit: 0", "/query/limit"},
		{"query field misspelled", "direction: desc", "order: desc", "additional properties 'order' not allowed"},
		{"ordered as a word", "ordered: false", "ordered: no", "/accessPatterns/recent/ordered"},
		{"empty sql", "    sql: SELECT name FROM customers WHERE customer_id = @id\n  recent:", "    sql: \" \"\n  recent:", "/accessPatterns/customer/sql"},
		{"bucket of no values", "direction: desc, limit: 3 }", "direction: desc, limit: 3, buckets: { y: [] } }", "/accessPatterns/recent/query/buckets/y"},
		{"bucket range without to", "direction: desc, limit: 3 }", "direction: desc, limit: 3, buckets: { y: { from: 2024 } } }", "/accessPatterns/recent/query/buckets/y"},
		{"bucket named shard", "direction: desc, limit: 3 }", "direction: desc, limit: 3, buckets: { shard: [1] } }", "invalid propertyName 'shard'"},
		{"collection of no entity", "    sql: SELECT name FROM customers WHERE customer_id = @id\n  recent:", "    sql: {}\n  recent:", "/accessPatterns/customer/sql"},
		{"collection query not a string", "    sql: SELECT name FROM customers WHERE customer_id = @id\n  recent:", "    sql: { Customer: [SELECT 1] }\n  recent:", "/accessPatterns/customer/sql"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := edited(t, tc.old, tc.new)
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

// Each case is a variant the parser accepts, so the schema must too: the
// schema is never stricter than the language.
func TestSchemaAcceptsWhatTheParserAccepts(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, mappingSchemaFile)
	cases := []struct{ name, old, new string }{
		{"key attributes as names", "sort: { name: SK, type: S }", "sort: SK"},
		{"key attribute without type", "sort: { name: SK, type: S }", "sort: { name: SK }"},
		{"binary key", "{ name: GSI2PK, type: N }", "{ name: GSI2PK, type: B }"},
		{"global index declared local: false", "GSI1: { partition: GSI1PK,", "GSI1: { local: false, partition: GSI1PK,"},
		{"projection in lower case", "projection: KEYS_ONLY", "projection: keys_only"},
		{"projection ALL in mixed case", "projection: KEYS_ONLY", "projection: All"},
		{"copy used only by keys", "into: region, attributes: [region] }", "}"},
		{"copy into with only a nested copy", "into: region, attributes: [region] }", "into: region, copy: [{ from: countries, join: { country_id: country_id }, attributes: [country] }] }"},
		{"copy without into", "into: region, attributes: [region] }", "attributes: [region] }"},
		{"index entry empty: error", "empty: absent", "empty: error"},
		{"key template over a copied column", `GSI2: { pk: "{customer_id}"`, `GSI2: { pk: "{region.region_id}"`},
		{"quoted column in a template", `sk: "SINCE#{created_at}"`, `sk: 'SINCE#{"created_at"}'`},
		{"pattern with constant keys", "    params: { id: customers.customer_id }\n    get: { pk: \"CUSTOMER#{id}\", sk: PROFILE }\n    sql: SELECT name FROM customers WHERE customer_id = @id\n",
			"    get: { pk: \"CUSTOMER#1\", sk: PROFILE }\n    sql: SELECT name FROM customers WHERE customer_id = 1\n"},
		{"pattern with empty description", "description: a customer", `description: ""`},
		{"params over schema.table.column", "id: customers.customer_id", "id: public.customers.customer_id"},
		{"multi-line params query", `params: "SELECT customer_id AS id FROM customers"`, "params: |\n      SELECT customer_id AS id\n      FROM customers"},
		{"query sk as a template", `sk: { begins_with: "SINCE#" }`, `sk: "SINCE#2024"`},
		{"query sk between", `sk: { begins_with: "SINCE#" }`, `sk: { between: ["SINCE#2020", "SINCE#2024~"] }`},
		{"query sk eq", `sk: { begins_with: "SINCE#" }`, `sk: { eq: "SINCE#2024" }`},
		{"query sk lt, le, gt, ge", `sk: { begins_with: "SINCE#" }`, `sk: { ge: "SINCE#2024" }`},
		{"query on the table", "index: LSI1, ", ""},
		{"direction asc", "direction: desc", "direction: asc"},
		{"ordered: true", "ordered: false", "ordered: true"},
		{"buckets: a list and a range", `index: LSI1, pk: "CUSTOMER#{id}", `, `index: LSI1, pk: "CUSTOMER#{id}#{r}#{y}", buckets: { r: [EU, 2], y: { from: 2024, to: 2025 } }, `},
		{"item collection: sql per entity", "direction: desc, limit: 3 }\n    ordered: false\n    sql: SELECT name FROM customers WHERE customer_id = @id\n",
			"direction: desc }\n    sql:\n      Customer: SELECT name FROM customers WHERE customer_id = @id\n      Order: |\n        SELECT 1\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := edited(t, tc.old, tc.new)
			if _, err := mapping.Parse("m.yaml", []byte(src)); err != nil {
				t.Fatalf("the parser rejects it, so the case proves nothing: %v\n%s", err, src)
			}
			if err := sch.Validate(yamlToJSON(t, []byte(src))); err != nil {
				t.Errorf("the schema rejects what the parser accepts:\n%v\n%s", err, src)
			}
		})
	}
}
