package archtest

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// marker precedes a README code block that must be the code of runnable
// examples: "<!-- example: FILE NAME... -->" names a test file and the
// declarations the block shows, in order. An Example function is shown by
// its body (without its Output comment), anything else whole.
var marker = regexp.MustCompile(`^<!-- example: (\S+) (.+) -->$`)

// snippet is the code of decls in file, as the README shows it.
func snippet(t *testing.T, file string, decls []string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	text := func(from, to token.Pos) string {
		return string(src[fset.Position(from).Offset:fset.Position(to).Offset])
	}
	var parts []string
	for _, name := range decls {
		found := ""
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				full := d.Name.Name
				if d.Recv != nil {
					full = receiverName(d.Recv.List[0].Type) + "." + full
				}
				if full != name {
					continue
				}
				if !strings.HasPrefix(name, "Example") {
					found = text(d.Pos(), d.End())
					continue
				}
				body := text(d.Body.Lbrace+1, d.Body.Rbrace)
				if i := strings.Index(body, "\t// Output:"); i >= 0 {
					body = body[:i]
				}
				var lines []string
				for _, l := range strings.Split(strings.Trim(body, "\n"), "\n") {
					lines = append(lines, strings.TrimPrefix(l, "\t"))
				}
				found = strings.Join(lines, "\n")
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == name {
						found = text(d.Pos(), d.End())
					}
				}
			}
		}
		if found == "" {
			t.Errorf("README: %s has no declaration %s", file, name)
		}
		parts = append(parts, strings.TrimSpace(found))
	}
	return strings.Join(parts, "\n\n")
}

var update = flag.Bool("update", false, "rewrite the README's example blocks from the examples")

// TestReadmeShowsTheExamples: the library section's code is the
// examples' code, which go test runs and checks. -update rewrites the
// blocks.
func TestReadmeShowsTheExamples(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	blocks := 0
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		at := i + 1
		if i+1 >= len(lines) || lines[i+1] != "```go" {
			t.Errorf("README.md:%d: the example marker is not followed by a ```go block", at)
			continue
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		blocks++
		want := snippet(t, filepath.Join("..", "..", m[1]), strings.Fields(m[2]))
		if got := strings.TrimSpace(strings.Join(lines[i+2:end], "\n")); got != want && !*update {
			t.Errorf("README.md:%d: the block differs from %s %s (go test ./internal/archtest -run Readme -update rewrites it); it should read:\n%s", at, m[1], m[2], want)
		}
		out = append(out, "```go", want, "```")
		i = end
	}
	if blocks < 4 {
		t.Errorf("README.md shows %d examples, want the library section's 4 or more", blocks)
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
