package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/pgdynamo/migrate"

// imports lists the direct imports of every package of the module (tests
// excluded), by import path.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkgs[f[0]] = f[1:]
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// stdlib reports whether path is in the standard library.
func stdlib(path string) bool { return !strings.Contains(strings.Split(path, "/")[0], ".") }

// impure are standard packages that reach the outside world: a pure
// package (parse, validate, compute) imports none of them.
var impure = []string{"os", "os/exec", "os/signal", "net", "net/http", "net/url", "syscall", "io/fs", "io/ioutil", "database/sql", "log", "log/slog", "time/tzdata", "unsafe"}

// A rule constrains the direct imports of one package.
type rule struct {
	pkg string
	// allow says whether pkg may import imp.
	allow func(imp string) bool
	why   string
}

func within(prefixes ...string) func(string) bool {
	return func(imp string) bool {
		for _, p := range prefixes {
			if imp == p || strings.HasPrefix(imp, p+"/") {
				return true
			}
		}
		return false
	}
}

func pure(extra ...string) func(string) bool {
	ok := within(extra...)
	return func(imp string) bool {
		if stdlib(imp) {
			return !within(impure...)(imp)
		}
		return ok(imp)
	}
}

// rules are the house's import rules.
func rules() []rule {
	return []rule{
		{module + "/mapping", pure(module+"/internal/pgkind", "go.yaml.in/yaml/v3"),
			"mapping is pure: parse and validate, no I/O"},
		{module + "/transform", pure(module+"/mapping", module+"/internal/pgkind", module+"/extract", module+"/internal/ddbvalue",
			"github.com/aws/aws-sdk-go-v2/service/dynamodb/types", "golang.org/x/text/unicode/norm"),
			"transform is pure: rows to items (it uses extract's value types, never its reads)"},
		{module + "/internal/mapdoc", pure(module + "/mapping"), "mapdoc is pure: a mapping to markdown"},
		{module + "/contract", pure("github.com/aws/aws-sdk-go-v2/service/dynamodb/types"),
			"contract holds interfaces and value types only: the standard library and DynamoDB's attribute values"},
		{module + "/load", func(imp string) bool {
			return stdlib(imp) || within("github.com/aws", module+"/contract", module+"/internal/ddbvalue", module+"/internal/peakrate")(imp)
		}, "load imports only the AWS SDK, the contracts, ddbvalue (DynamoDB's value rules) and peakrate (on-demand's previous peak)"},
		{module + "/internal/peakrate", pure(), "peakrate is pure: a sliding-window peak, nothing else"},
		{module + "/internal/ddbvalue", pure("github.com/aws/aws-sdk-go-v2/service/dynamodb/types"),
			"ddbvalue is pure: DynamoDB's value rules, over the SDK's value types only"},
		{module + "/extract", func(imp string) bool {
			return stdlib(imp) || within("github.com/jackc/pgx/v5", module+"/mapping", module+"/internal/pgkind", module+"/internal/pgurl")(imp)
		}, "extract reads PostgreSQL and knows nothing of DynamoDB"},
		{module + "/internal/replicate", func(imp string) bool {
			return stdlib(imp) || within("github.com/jackc/pgx/v5", "github.com/jackc/pglogrepl", module+"/internal/pgurl")(imp)
		}, "replicate streams PostgreSQL's changes and knows nothing of mappings or DynamoDB"},
		{module + "/internal/affect", func(imp string) bool {
			return stdlib(imp) || within("github.com/jackc/pgx/v5", module+"/mapping", module+"/internal/pgkind", module+"/extract",
				module+"/transform", module+"/internal/replicate", "github.com/aws/aws-sdk-go-v2/service/dynamodb/types")(imp)
		}, "affect reads the source to find and render affected items; it writes nothing"},
		{module + "/internal/export", func(imp string) bool {
			return !within("github.com/jackc", module+"/extract", module+"/transform", module+"/engine")(imp)
		}, "export is a target and a source: it stores and reads items through the contracts, and the engine drives it (the source side and the export verb are the engine's)"},
		{module + "/load", func(imp string) bool { return !within(module + "/engine")(imp) },
			"load is a target: it implements the contracts, never imports the engine that drives it"},
		{module + "/engine", func(imp string) bool { return !within(module + "/internal/render")(imp) },
			"render prints the engine's results for the command: the engine returns values and never renders them"},
	}
}

// ruleFor returns the first rule of pkg whose reason contains why.
func ruleFor(t *testing.T, pkg, why string) rule {
	t.Helper()
	for _, r := range rules() {
		if r.pkg == pkg && strings.Contains(r.why, why) {
			return r
		}
	}
	t.Fatalf("no rule for %s about %q", pkg, why)
	return rule{}
}

func TestDependencies(t *testing.T) {
	pkgs := imports(t)
	for _, r := range rules() {
		imps, ok := pkgs[r.pkg]
		if !ok {
			t.Errorf("package %s not found", r.pkg)
			continue
		}
		for _, imp := range imps {
			if !r.allow(imp) {
				t.Errorf("%s imports %s, but %s", r.pkg, imp, r.why)
			}
		}
	}
	// Nothing imports the command.
	for pkg, imps := range pkgs {
		for _, imp := range imps {
			if within(module + "/cmd")(imp) {
				t.Errorf("%s imports %s: nothing imports cmd", pkg, imp)
			}
		}
	}
}

// TestRulesCanFail checks the checker itself on imports that break the rules.
func TestRulesCanFail(t *testing.T) {
	for _, c := range []struct {
		allow func(string) bool
		imp   string
	}{
		{pure(), "os"},
		{pure(), "net/http"},
		{pure(module + "/mapping"), "github.com/jackc/pgx/v5"},
		{pure(module + "/mapping"), module + "/load"},
	} {
		if c.allow(c.imp) {
			t.Errorf("the rule allows %s", c.imp)
		}
	}
	if !pure(module+"/mapping")(module+"/mapping") || !pure()("strings") {
		t.Error("the rule refuses allowed imports")
	}
	// The house's own rules: targets never import the engine, the
	// contracts import no stage, the engine never imports its renderer.
	for _, c := range []struct{ pkg, why, imp string }{
		{module + "/internal/export", "target", module + "/engine"},
		{module + "/load", "target", module + "/engine"},
		{module + "/contract", "interfaces", module + "/load"},
		{module + "/contract", "interfaces", module + "/engine"},
		{module + "/engine", "never renders", module + "/internal/render"},
	} {
		if ruleFor(t, c.pkg, c.why).allow(c.imp) {
			t.Errorf("the rule for %s allows %s", c.pkg, c.imp)
		}
	}
	if !ruleFor(t, module+"/internal/export", "target").allow(module+"/contract") || !ruleFor(t, module+"/load", "contracts").allow(module+"/contract") {
		t.Error("the rules refuse the contracts to targets")
	}
}
