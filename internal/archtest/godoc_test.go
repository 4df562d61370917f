package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// public are the packages a library user imports: every exported name in
// them has a doc comment.
var public = []string{"contract", "mapping", "extract", "transform", "load", "engine", "migratetest", "sql"}

// undocumented lists the exported names of one file that have no doc
// comment, as "file:line:col: name". A name in a grouped declaration
// (const ( ... )) counts as documented by the group's comment, as go doc
// shows it; a method counts only when its receiver type is exported.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(pos token.Pos, name string) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(pos), name))
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := receiverName(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			report(d.Pos(), name)
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid() && d.Doc != nil
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
						report(s.Pos(), s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil && !grouped {
							report(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiverName is the type name of a method's receiver: T, *T, T[P].
func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

func TestPublicNamesHaveDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range public {
		dir := filepath.Join(root, pkg)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("public package %s: %v", pkg, err)
		}
		fset := token.NewFileSet()
		files, hasDoc := 0, false
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files++
			hasDoc = hasDoc || f.Doc != nil
			for _, u := range undocumented(fset, f) {
				t.Errorf("%s has no doc comment", u)
			}
		}
		if files == 0 {
			t.Errorf("public package %s has no Go files", pkg)
		}
		if !hasDoc {
			t.Errorf("public package %s has no package doc", pkg)
		}
	}
}

// TestDocCheckCanFail checks the checker on names without docs.
func TestDocCheckCanFail(t *testing.T) {
	const src = `package p

// Documented is fine.
func Documented() {}

func Bare() {}

type T struct{}

func (T) M() {}

// Doc'd method.
func (T) N() {}

func (t *hidden) X() {}

type hidden struct{}

var V, w = 1, 2

// Group doc covers its members.
const (
	A = 1
	B = 2
)

const (
	C = 1 // a line comment counts
	D = 2
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range undocumented(fset, f) {
		names = append(names, u[strings.LastIndex(u, " ")+1:])
	}
	if want := []string{"Bare", "T", "T.M", "V", "D"}; !slices.Equal(names, want) {
		t.Errorf("undocumented found %q, want %q", names, want)
	}
}
