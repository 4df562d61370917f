package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxCLIShare is the most of the module's non-test Go lines cmd/migrate
// may hold: the CLI parses flags, calls one engine verb and renders. A
// command that needs more work belongs in the engine, where a library
// caller gets it too.
const maxCLIShare = 0.06

func TestCLIShare(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var total, cli int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		n := goLines(t, dir)
		total += n
		if path == module+"/cmd/migrate" {
			cli = n
		}
	}
	if cli == 0 || total < 10*cli {
		t.Fatalf("counted %d lines in cmd/migrate of %d: the count is broken", cli, total)
	}
	share := float64(cli) / float64(total)
	t.Logf("cmd/migrate: %d of %d non-test Go lines (%.2f%%)", cli, total, 100*share)
	if share > maxCLIShare {
		t.Errorf("cmd/migrate holds %d of %d non-test Go lines (%.2f%%), more than %.0f%%: move the work it does into the engine",
			cli, total, 100*share, 100*maxCLIShare)
	}
}

// goLines counts the lines of the non-test Go files in dir.
func goLines(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}
