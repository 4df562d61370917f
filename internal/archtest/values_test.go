package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// valueRules mark code that re-implements DynamoDB's value rules, which
// belong to internal/ddbvalue (number canonical form and comparison, key
// order, sizes, DynamoDB JSON): two copies of one rule will disagree one
// day, as query's big.Float and prove's big.Rat did. Each rule lists the
// files allowed to match it, with the reason.
var valueRules = []struct {
	name  string
	re    *regexp.Regexp
	allow map[string]string // file -> why
}{
	{
		name: "imports math/big (numbers compared or parsed outside ddbvalue)",
		re:   regexp.MustCompile(`(?m)^\s*(?:\w+\s+)?"math/big"`),
		allow: map[string]string{
			"extract/rows.go":           "decodes PostgreSQL numeric (pgtype's big.Int digits)",
			"internal/seed/generate.go": "builds PostgreSQL numeric values for test data",
			"internal/diff/hash.go":     "Sum.Int shows a 256-bit hash sum as a number",
			"internal/prove/params.go":  "arithmetic on SQL parameter values (one past the largest), PostgreSQL's domain",
			"transform/value.go":        "epoch microseconds of a timestamp, exact before ddbvalue.Number",
			"transform/where.go":        "a mapping's where filter compares SQL values by PostgreSQL's rules",
		},
	},
	{
		name: "handles number or binary sets (a walk over every value type)",
		re:   regexp.MustCompile(`AttributeValueMember(NS|BS)\b`),
		allow: map[string]string{
			"transform/value.go":      "produces sets from arrays",
			"internal/diff/record.go": "diff's binary spill records, not a DynamoDB format",
		},
	},
	{
		name:  "parses decimal text into big.Float (inexact, and not DynamoDB's syntax)",
		re:    regexp.MustCompile(`big\.ParseFloat`),
		allow: map[string]string{},
	},
	{
		name:  "writes JSON type tags by hand",
		re:    regexp.MustCompile("`\\{\"(S|N|B|BOOL|NULL|SS|NS|BS|L|M)\":"),
		allow: map[string]string{},
	},
}

// sources lists the module's non-test Go files outside internal/ddbvalue,
// by path from the module root.
func sources(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	files := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/ddbvalue" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d Go files under %s", len(files), root)
	}
	return files
}

// violations applies the rules to files.
func violations(files map[string]string) []string {
	var out []string
	for _, r := range valueRules {
		for path, src := range files {
			if _, ok := r.allow[path]; ok {
				continue
			}
			if r.re.MatchString(src) {
				out = append(out, path+" "+r.name)
			}
		}
	}
	return out
}

func TestValueRulesLiveInDdbvalue(t *testing.T) {
	files := sources(t)
	for _, v := range violations(files) {
		t.Errorf("%s: DynamoDB's value rules live in internal/ddbvalue; use it, or allow the file with a reason", v)
	}
	// An allowed file that no longer matches is a stale exception.
	for _, r := range valueRules {
		for path := range r.allow {
			if src, ok := files[path]; !ok || !r.re.MatchString(src) {
				t.Errorf("%s is allowed to match %q but does not: drop the exception", path, r.name)
			}
		}
	}
}

// TestValueRulesCanFail runs the rules on copies the code once held.
func TestValueRulesCanFail(t *testing.T) {
	for path, src := range map[string]string{
		"engine/query.go":   "import (\n\t\"math/big\"\n)\nxf, _, errX := big.ParseFloat(x.Value, 10, 256, big.ToNearestEven)",
		"load/size.go":      "case *types.AttributeValueMemberNS:\n\tfor _, s := range v.Value { n += numberSize(s) }",
		"internal/x/enc.go": "dst = append(dst, `{\"NULL\":`...)",
	} {
		if len(violations(map[string]string{path: src})) == 0 {
			t.Errorf("the rules pass %s:\n%s", path, src)
		}
	}
}
