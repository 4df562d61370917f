package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/mapping"
)

// Exit codes. They are part of the CLI's contract and documented in README.md.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2 // bad flags, bad mapping file
	exitInterrupted = 130
)

// usageError marks errors that are the caller's fault (flags, mapping file);
// they exit with code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// interruptedError is returned when a run stopped on a signal after draining.
type interruptedError struct{ err error }

func (e interruptedError) Error() string { return e.err.Error() }
func (e interruptedError) Unwrap() error { return e.err }

// globals are the flags every command shares.
type globals struct {
	stdout, stderr io.Writer
	verbose        bool
	logger         *slog.Logger
}

// execute builds the command tree, runs it and maps the outcome to an exit
// code. It is what tests call in-process.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ue usageError
	var ie interruptedError
	switch {
	case errors.As(err, &ue):
		var ds mapping.Diagnostics
		if errors.As(err, &ds) {
			// One problem a line, file:line:col: message, for editors.
			fmt.Fprintln(stderr, ds.Error())
			fmt.Fprintf(stderr, "migrate: %s in the mapping; nothing was read or written\n", plural(len(ds), "problem"))
			return exitUsage
		}
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitInterrupted
	case isFlagError(err):
		fmt.Fprintf(stderr, "migrate: %v\n\n%s", err, usageOf(root, args))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitFailure
	}
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "migrate",
		Short: "Move a normalized PostgreSQL database into a DynamoDB single-table design",
		Long: `migrate reads PostgreSQL tables in one consistent snapshot, transforms rows
into single-table DynamoDB items as a mapping file describes, and batch-writes
them to DynamoDB.

Exit codes: 0 success, 1 failure, 2 usage or mapping error, 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			level := slog.LevelInfo
			if g.verbose {
				level = slog.LevelDebug
			}
			g.logger = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
		},
	}
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log debug details to stderr")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	for _, add := range subcommands {
		root.AddCommand(add(g))
	}
	setVersion(root)
	return root
}

// subcommands is filled by each command's file in init, so that commands can
// be added without touching this file.
var subcommands []func(*globals) *cobra.Command

func register(f func(*globals) *cobra.Command) { subcommands = append(subcommands, f) }

type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe flagError
	if errors.As(err, &fe) {
		return true
	}
	// cobra reports unknown commands and wrong argument counts as plain errors.
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func usageOf(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		cmd = root
	}
	return cmd.UsageString()
}
