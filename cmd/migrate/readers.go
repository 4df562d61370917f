package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

// readerFlags are run's and export's parallel reading flags.
type readerFlags struct {
	readers   int
	rangeRows int64
}

func (o *readerFlags) register(f *pflag.FlagSet) {
	f.IntVar(&o.readers, "readers", 1, "connections reading the source at once, in one snapshot; tables over --range-rows rows are split into key ranges")
	f.Int64Var(&o.rangeRows, "range-rows", engine.DefaultRangeRows, "with --readers: rows per key range of a large table (by the planner's estimate: analyzed tables only)")
}

// readFlags are what run and export read the source with alike: what to
// do with bad rows, the state file, the readers.
type readFlags struct {
	onError, rejectFile string
	maxRejects          int
	state               string
	resume, fresh       bool
	par                 readerFlags

	// Set by the command from the flags, not flags themselves.
	rejectFileSet, maxRejectsSet bool
}

// register adds the flags; what is "run" or "export", ext what its state
// and reject files add to the table's name ("" or ".export").
func (o *readFlags) register(f *pflag.FlagSet, what, ext, freshHelp string) {
	f.StringVar(&o.onError, "on-error", engine.OnErrorFail, `bad rows: "fail" (stop at the first) or "reject" (write them to the reject file and go on)`)
	f.StringVar(&o.rejectFile, "reject-file", "", "reject file, JSON lines (default <table>"+ext+".rejects.jsonl; with --on-error reject)")
	f.IntVar(&o.maxRejects, "max-rejects", 0, "rejects allowed before the "+what+" exits 1 (it still runs to the end; -1 = no limit; with --on-error reject)")
	f.StringVar(&o.state, "state", "", "state file for checkpoints and --resume (default .migrate/<table>"+ext+".state.json)")
	f.BoolVar(&o.resume, "resume", false, "continue the "+what+" recorded in the state file")
	f.BoolVar(&o.fresh, "fresh", false, freshHelp)
	o.par.register(f)
}

// given notes which of the flags were given.
func (o *readFlags) given(f *pflag.FlagSet) {
	o.rejectFileSet, o.maxRejectsSet = f.Changed("reject-file"), f.Changed("max-rejects")
}

// validate checks what the engine's Config cannot tell: whether the
// reject flags were given without --on-error reject.
func (o readFlags) validate(cmd string) error {
	if o.onError == engine.OnErrorFail && (o.rejectFileSet || o.maxRejectsSet) {
		return usagef("%s: --reject-file and --max-rejects apply only with --on-error reject", cmd)
	}
	return nil
}

// apply sets the reading's fields of c.
func (o readFlags) apply(c *engine.RunConfig) {
	c.OnError, c.RejectFile, c.MaxRejects = o.onError, o.rejectFile, o.maxRejects
	c.StateFile, c.Resume, c.Fresh = o.state, o.resume, o.fresh
	c.Readers, c.RangeRows = o.par.readers, o.par.rangeRows
}

// end sets the exit code of a finished run or export and, when rows were
// rejected within --max-rejects, says so.
func (o readFlags) end(g *globals, res *engine.RunResult, err error) {
	switch {
	case res.Status == engine.StatusInterrupted:
		res.ExitCode = exitInterrupted
	case err != nil:
		res.ExitCode = exitFailure
	case res.AllRuns.Rejects > 0 && o.onError == engine.OnErrorReject:
		fmt.Fprintf(g.stderr, "migrate: %s (no more than --max-rejects allows), see %s\n", render.Plural(int(res.AllRuns.Rejects), "reject"), res.RejectFile)
	}
}
