package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/buildinfo"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/migratetest"
	sqlschema "github.com/pgdynamo/migrate/sql"
)

func TestInitUsage(t *testing.T) {
	t.Parallel()
	existing := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := os.WriteFile(existing, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg := "postgres://x@127.0.0.1:1/db"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no pg", []string{"init"}, "init: --pg is required"},
		{"bad table name", []string{"init", "--pg", pg, "--table", "a b"}, `init: --table: table name "a b"`},
		{"embed max zero", []string{"init", "--pg", pg, "--embed-max", "0"}, "--embed-max must be at least 1"},
		{"existing file", []string{"init", "--pg", pg, "-o", existing}, existing + " exists; pass --force"},
		{"arguments", []string{"init", "--pg", pg, "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "mine\n" {
		t.Errorf("init touched an existing file: %q", data)
	}
}

func TestJSONSchemaURL(t *testing.T) {
	t.Parallel()
	for version, ref := range map[string]string{"v1.2.3": "v1.2.3", "(devel)": "main"} {
		want := "https://raw.githubusercontent.com/pgdynamo/migrate/" + ref + "/docs/schema/mapping.schema.json"
		if got := jsonSchemaURL(buildinfo.Info{Version: version}); got != want {
			t.Errorf("version %s: %s, want %s", version, got, want)
		}
	}
}

// --tables drafts only the tables named (foreign keys to others ignored),
// -o - writes to stdout, --json-schema names another schema, and an
// unknown table or an empty schema is a usage error that writes nothing.
func TestInitOptions(t *testing.T) {
	t.Parallel()
	pg := migratetest.PostgresURL(t)
	if err := sqlschema.Up(t.Context(), pg); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "init", "--pg", pg, "-o", "-", "--tables", "orders,customers", "--json-schema", "schema/mapping.json")
	if code != exitOK || !strings.HasPrefix(out, "# yaml-language-server: $schema=schema/mapping.json\n") || !strings.Contains(errOut, "init: wrote stdout") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	m, err := mapping.Parse("stdout.yaml", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	for _, e := range m.Entities {
		froms = append(froms, e.From)
	}
	if strings.Join(froms, ",") != "customers,orders" {
		t.Errorf("entities read %v, want customers and orders", froms)
	}
	if strings.Contains(out, "SHIPPING_ADDRESS") {
		t.Errorf("a foreign key to a table not drafted was used:\n%s", out)
	}

	path := filepath.Join(t.TempDir(), "m.yaml")
	_, errOut, code = runCLI(t, "init", "--pg", pg, "-o", path, "--tables", "orders,custmers")
	if code != exitUsage || !strings.Contains(errOut, "no such table: custmers in schema public") {
		t.Errorf("unknown table: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "init", "--pg", pg, "-o", path, "--schema", "nothing_here")
	if code != exitUsage || !strings.Contains(errOut, "no tables in schema nothing_here") {
		t.Errorf("empty schema: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a failed init wrote %s", path)
	}
}
