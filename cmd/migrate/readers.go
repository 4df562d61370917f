package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

// registerRead adds the flags run and export read the source with alike,
// setting c: what to do with bad rows, the state file, the readers. what
// is "run" or "export", ext what its state and reject files add to the
// table's name ("" or ".export").
func registerRead(f *pflag.FlagSet, c *engine.RunConfig, what, ext, freshHelp string) {
	f.StringVar(&c.OnError, "on-error", engine.OnErrorFail, `bad rows: "fail" (stop at the first) or "reject" (write them to the reject file and go on)`)
	f.StringVar(&c.RejectFile, "reject-file", "", "reject file, JSON lines (default <table>"+ext+".rejects.jsonl; with --on-error reject)")
	f.IntVar(&c.MaxRejects, "max-rejects", 0, "rejects allowed before the "+what+" exits 1 (it still runs to the end; -1 = no limit; with --on-error reject)")
	f.StringVar(&c.StateFile, "state", "", "state file for checkpoints and --resume (default .migrate/<table>"+ext+".state.json)")
	f.BoolVar(&c.Resume, "resume", false, "continue the "+what+" recorded in the state file")
	f.BoolVar(&c.Fresh, "fresh", false, freshHelp)
	f.IntVar(&c.Readers, "readers", 1, "connections reading the source at once, in one snapshot; tables over --range-rows rows are split into key ranges")
	f.Int64Var(&c.RangeRows, "range-rows", engine.DefaultRangeRows, "with --readers: rows per key range of a large table (by the planner's estimate: analyzed tables only)")
}

// checkRejectFlags checks what the engine's Config cannot tell: whether
// the reject flags were given without --on-error reject.
func checkRejectFlags(cmd string, f *pflag.FlagSet, c engine.RunConfig) error {
	if c.OnError == engine.OnErrorFail && (f.Changed("reject-file") || f.Changed("max-rejects")) {
		return usagef("%s: --reject-file and --max-rejects apply only with --on-error reject", cmd)
	}
	return nil
}

// endRead sets the exit code of a finished run or export and, when rows
// were rejected within --max-rejects, says so.
func endRead(g *globals, c engine.RunConfig, res *engine.RunResult, err error) {
	switch {
	case res.Status == engine.StatusInterrupted:
		res.ExitCode = exitInterrupted
	case err != nil:
		res.ExitCode = exitFailure
	case res.AllRuns.Rejects > 0 && c.OnError == engine.OnErrorReject:
		fmt.Fprintf(g.stderr, "migrate: %s (no more than --max-rejects allows), see %s\n", render.Plural(int(res.AllRuns.Rejects), "reject"), res.RejectFile)
	}
}
