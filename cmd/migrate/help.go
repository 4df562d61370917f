package main

import (
	"embed"
	"strings"
	"text/template"
)

// The commands' long help, one text file a command under help/: prose
// reads and diffs better there than in Go string literals. A file may
// take in text several commands share with {{include "NAME"}}.
//
//go:embed help/*.txt
var helpFiles embed.FS

var helpTexts = template.New("")

func init() {
	helpTexts.Funcs(template.FuncMap{"include": longHelp})
	template.Must(helpTexts.ParseFS(helpFiles, "help/*.txt"))
}

// longHelp is the long help of command name: help/NAME.txt without its
// last newline, its includes expanded. It panics when the file is
// missing: every test that builds the command tree would fail.
func longHelp(name string) string {
	var b strings.Builder
	if err := helpTexts.ExecuteTemplate(&b, name+".txt", nil); err != nil {
		panic("help text of " + name + ": " + err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
