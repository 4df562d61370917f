package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/export"
	"github.com/pgdynamo/migrate/internal/jsonlines"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
)

// Exit codes. They are part of the CLI's contract and documented in README.md.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2 // bad flags, bad mapping file
	exitChanges     = 2 // plan --detailed-exitcode: the plan has changes
	exitDiffers     = 3 // verify: the table differs from the source
	exitInterrupted = 130
)

// exitError ends a command with a chosen exit code; its message, if any,
// is printed like any other error's.
type exitError struct {
	code int
	err  error // nil: nothing more to say
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e exitError) Unwrap() error { return e.err }

// usageError marks an error that is the caller's fault (flags, mapping
// file): it exits with code 2.
func usageError(err error) error { return exitError{exitUsage, err} }

func usagef(format string, args ...any) error {
	return usageError(fmt.Errorf(format, args...))
}

// interruptedError ends a command that stopped on a signal after draining.
func interruptedError(err error) error { return exitError{exitInterrupted, err} }

// globals are the flags every command shares.
type globals struct {
	stdout, stderr io.Writer
	verbose        bool
	logFormat      string
	logger         *slog.Logger
}

// newLogger returns a logger writing to w in the chosen --log-format.
func (g *globals) newLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if g.verbose {
		opts.Level = slog.LevelDebug
	}
	if g.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// execute builds the command tree, runs it and maps the outcome to an exit
// code. It is what tests call in-process.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	stopNotice := context.AfterFunc(ctx, func() {
		if sig, ok := interruptedBy.Load().(string); ok {
			fmt.Fprintf(g.stderr, "interrupted (%s): finishing in-flight work (press Ctrl-C again to exit now)\n", sig)
		}
	})
	defer stopNotice()
	err := root.ExecuteContext(ctx)
	errOut := g.stderr
	if jl, ok := g.stderr.(*jsonlines.Writer); ok {
		jl.SetLevel("ERROR")
		defer jl.Flush()
	} else if g.logFormat == "json" {
		// Parsing failed before the command started: its error is JSON too.
		jl := jsonlines.New(stderr)
		jl.SetLevel("ERROR")
		defer jl.Flush()
		errOut = jl
	}
	code := outcome(root, args, err, errOut)
	var ee exitError
	if code == exitUsage && !(errors.As(err, &ee) && ee.err == nil) && detailedExitCode(args) {
		// plan --detailed-exitcode says "changes" with 2: an error is 1.
		return exitFailure
	}
	return code
}

// detailedExitCode reports whether args ask plan for --detailed-exitcode.
func detailedExitCode(args []string) bool {
	for _, a := range args {
		if a == "--detailed-exitcode" || a == "--detailed-exitcode=true" {
			return true
		}
	}
	return false
}

// outcome prints err, if any, and maps it to an exit code.
func outcome(root *cobra.Command, args []string, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "migrate: %v\n", ee.err)
		}
		return ee.code
	}
	var ds mapping.Diagnostics
	switch {
	case errors.As(err, &ds):
		// One problem a line, file:line:col: message, for editors.
		fmt.Fprintln(stderr, ds.Error())
		fmt.Fprintf(stderr, "migrate: %s in the mapping; nothing was read or written\n", render.Plural(len(ds), "problem"))
		return exitUsage
	case errors.Is(err, engine.ErrNothingToResume):
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitOK
	case errors.Is(err, load.ErrNoRegion), errors.Is(err, export.ErrNoRegion):
		// The packages name their Go option; a CLI user needs the flag.
		// Nothing was called yet: clients are made before the first call.
		service, endpoint := "DynamoDB", "--endpoint"
		if errors.Is(err, export.ErrNoRegion) {
			service, endpoint = "S3", "--s3-endpoint"
		}
		fmt.Fprintf(stderr, "migrate: no AWS region for %s: pass --region, or set AWS_REGION (or a region in the AWS config profile); a local engine (%s) needs none\n", service, endpoint)
		return exitUsage
	case errors.Is(err, engine.ErrConfig), errors.Is(err, engine.ErrState):
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitUsage
	case errors.Is(err, engine.ErrInterrupted):
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return exitInterrupted
	case isFlagError(err):
		fmt.Fprintf(stderr, "migrate: %v\n\n%s", err, usageOf(root, args))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		if hint := retryHint(err); hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", hint)
		}
		return exitFailure
	}
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "migrate",
		Short:         "Move a normalized PostgreSQL database into a DynamoDB single-table design",
		Long:          longHelp("migrate"),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if g.logFormat != "text" && g.logFormat != "json" {
				return usagef("--log-format must be text or json, not %q", g.logFormat)
			}
			if g.logFormat == "json" {
				if _, ok := g.stderr.(*jsonlines.Writer); !ok {
					g.stderr = jsonlines.New(g.stderr)
				}
			}
			g.logger = g.newLogger(g.stderr)
			return nil
		},
	}
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log debug details to stderr")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log lines on stderr as text or json (one object a line)")
	_ = root.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
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
