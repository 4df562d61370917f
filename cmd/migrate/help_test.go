package main

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every help file is some command's long help or included by one, and
// every command but the generated ones (help, completion) has a long help.
func TestHelpFilesAreUsed(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&globals{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	longs := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		longs[c.Long] = true
		if c.Long == "" && c.Name() != "help" && c.Name() != "completion" && !strings.HasPrefix(c.Parent().Name(), "completion") && c.Name() != "up" && c.Name() != "down" {
			t.Errorf("%s has no long help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, sub := range root.Commands() {
		walk(sub)
	}
	longs[root.Long] = true
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	var all strings.Builder
	for _, f := range files {
		data, _ := fs.ReadFile(helpFiles, f)
		all.Write(data)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		if !longs[longHelp(name)] && !strings.Contains(all.String(), `{{include "`+name+`"}}`) {
			t.Errorf("%s is neither a command's help nor included by another file", f)
		}
	}
}
