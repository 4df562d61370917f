package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/docker/go-units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/metrics"
	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/mapping"
)

func init() { register(newSyncCmd) }

type syncOpts struct {
	sourceFlags
	targetFlags
	cfg  engine.SyncConfig // what the flags set of it
	drop bool
	outputFlags
	metrics    metricsOpts
	maxSlotWAL string
}

func (o *syncOpts) validate(onlyDrop bool) error {
	if o.pg == "" {
		return errNoPG("sync")
	}
	if o.mapping == "" && !(onlyDrop && o.cfg.Slot != "" && o.cfg.Publication != "") {
		return usagef("sync: --mapping is required (--drop alone needs it, or both --slot and --publication)")
	}
	if err := o.metrics.validate("sync"); err != nil {
		return err
	}
	if _, err := o.maxSlotWALBytes(); err != nil {
		return err
	}
	c := o.config()
	// The flag shows its default: 0 there is a mistake, not a request
	// for the default.
	c.StatusEvery = cmp.Or(c.StatusEvery, -1)
	c.Writer = o.writer(c.Writer, true)
	return checks(
		flagProblemIn("sync", pgNames(o.pgFrom), c.Validate()),
		o.targetFlags.validate("sync"),
		checkOutput("sync", "--summary-json", o.summaryJSON),
	)
}

func newSyncCmd(g *globals) *cobra.Command {
	var o syncOpts
	cmd := &cobra.Command{
		Use:   "sync [MAPPING] --pg URL [--table NAME] [--until-caught-up] [--drop] [flags]",
		Short: "Keep the table converged with a live source: initial load, then logical replication",
		Long:  longHelp("sync"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			onlyDrop := o.drop && !o.cfg.UntilCaughtUp
			if err := o.validate(onlyDrop); err != nil {
				return err
			}
			return runSync(cmd.Context(), g, o, cmd.Flags(), onlyDrop)
		},
	}
	f, c := cmd.Flags(), &o.cfg
	o.sourceFlags.register(cmd)
	o.targetFlags.register(f, "")
	f.BoolVar(&c.CreateTable, "create-table", false, "create the table and its indexes (on-demand) if missing")
	o.registerWriter(f, &c.Writer, "parallel BatchWriteItem calls", "cap on write units per second (0 = no cap)",
		"floor below which throttling never slows the writer", "sync stops")
	f.StringVar(&c.StateFile, "state", "", "the initial load's state file (default .migrate/<table>.state.json)")
	f.StringVar(&c.Slot, "slot", "", "replication slot to create or reuse (default migrate_<table>)")
	f.StringVar(&c.Publication, "publication", "", "publication to create or reuse (default migrate_<table>)")
	f.IntVar(&c.MaxFanout, "max-fanout", 0, fmt.Sprintf("most items one change may affect before sync stops with an error naming it (0 = %d, -1 = no bound)", engine.DefaultMaxFanout))
	f.StringVar(&c.OnTruncate, "on-truncate", engine.OnTruncateFail, `TRUNCATE of a mapped table: "fail" (stop before it) or "delete" (delete its entities' items, re-render what embeds or copies it)`)
	f.BoolVar(&c.UntilCaughtUp, "until-caught-up", false, "exit 0 once every transaction committed when the check began is applied (the cutover step)")
	f.BoolVar(&o.drop, "drop", false, "remove the slot and the publication (after catching up, with --until-caught-up)")
	f.DurationVar(&c.StatusEvery, "status-every", engine.DefaultStatusEvery, "how often to print the stream's status")
	f.IntVar(&c.MaxBatch, "max-batch", engine.DefaultSyncBatch, "most changes one round applies: a backlog drains faster in large rounds, and a round's changes and items are held in memory")
	o.outputFlags.register(f, "no progress bars, no status lines (the slot's name and the end are still printed)", "also write the outcome as JSON to this file")
	o.metrics.register(f, true)
	cmd.AddCommand(newSyncStatusCmd(g))
	f.StringVar(&o.maxSlotWAL, "max-slot-wal", "", "guard the source's disk: warn at 80% and, once the slot holds this much WAL (e.g. 20GiB), stop and drop the slot (default: no limit)")
	return cmd
}

// config is the sync's configuration as the flags give it; the command
// adds the mapping, the client, the names and the observer.
func (o syncOpts) config() engine.SyncConfig {
	c := o.cfg
	c.Postgres, c.Table, c.Writer = o.pg, o.table, o.writer(c.Writer, false)
	c.MaxSlotWAL, _ = o.maxSlotWALBytes()
	return c
}

// syncNames are the slot and publication a sync of table uses: the
// engine's defaults for those not given.
func syncNames(slot, pub, table string) (string, string) {
	c := engine.SyncConfig{Table: table, Slot: slot, Publication: pub}.WithDefaults()
	return c.Slot, c.Publication
}

// syncCommand renders the command that continues this sync (or, with
// drop, removes its slot): the flags given, minus --pg's value,
// --create-table, --until-caught-up and --drop, plus the slot and
// publication. Like the resume command of run, it never holds the URL.
func syncCommand(flags *pflag.FlagSet, pgFrom, slot, pub string, drop bool) string {
	c := render.Again{
		Words:   []string{"migrate", "sync"},
		First:   []string{"mapping", "table"},
		Skip:    []string{"create-table", "until-caught-up", "drop", "slot", "publication", "summary-json"},
		AfterPG: []string{"--slot", slot, "--publication", pub},
	}
	if drop {
		c.Words, c.OnlyFirst = append(c.Words, "--drop"), true
	}
	return c.Command(flags, pgFrom)
}

func runSync(ctx context.Context, g *globals, o syncOpts, flags *pflag.FlagSet, onlyDrop bool) error {
	if onlyDrop {
		table := o.table
		if o.mapping != "" {
			m, err := engine.LoadMapping(o.mapping)
			if err != nil {
				return err
			}
			table = cmp.Or(table, m.Table)
		}
		slot, pub := syncNames(o.cfg.Slot, o.cfg.Publication, table)
		return dropSync(ctx, g, o.pg, slot, pub)
	}
	m, err := engine.LoadMapping(o.mapping)
	if err != nil {
		return err
	}
	table := cmp.Or(o.table, m.Table)
	slot, pub := syncNames(o.cfg.Slot, o.cfg.Publication, table)
	again := syncCommand(flags, o.pgFrom, slot, pub, false)
	dropCmd := syncCommand(flags, o.pgFrom, slot, pub, true)
	client, err := o.writerClient(ctx, o.cfg.Writer, g.logger)
	if err != nil {
		return err
	}
	prog := newProgress(g, o.quiet)
	var obs engine.SyncObserver = &render.SyncObserver{RunProgress: prog, Stderr: g.stderr, DropCmd: dropCmd}
	mst, stopMetrics, err := o.metrics.serve(g, metrics.Config{Command: "sync", StatusEvery: o.cfg.StatusEvery})
	if err != nil {
		return err
	}
	defer stopMetrics()
	if mst != nil {
		obs = metrics.WrapSync(obs, mst)
	}
	cfg := o.config()
	cfg.Mapping, cfg.DynamoDB, cfg.Table, cfg.Slot, cfg.Publication = m, client, table, slot, pub
	cfg.ResumeCommand, cfg.Observer, cfg.Logger = again, obs, prog.Logger()
	res, err := engine.Sync(ctx, cfg)
	prog.Stop(res != nil && res.Load != nil && res.Load.Status == engine.StatusComplete)
	if res != nil && res.Load != nil {
		_ = render.RunSummary(g.stdout, res.Load)
	}
	if res != nil && (res.Final.Changes > 0 || res.CaughtUp) {
		_ = render.SyncEnd(g.stdout, res.Final)
	}
	if o.summaryJSON != "" && res != nil {
		if werr := render.WriteJSONFile(o.summaryJSON, render.SyncSummary(res, err)); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	switch {
	case err == nil && res.CaughtUp && o.drop:
		fmt.Fprintf(g.stdout, "sync: caught up with the source at %s\n", res.CaughtUpAt)
		return dropSync(ctx, g, o.pg, slot, pub)
	case errors.Is(err, engine.ErrNotReplicable):
		return usageError(err)
	}
	_ = render.SyncLeft(g.stdout, g.stderr, res, err, render.SyncCommands{Table: table, Slot: slot, Again: again, DropCmd: dropCmd})
	if errors.Is(err, engine.ErrInterrupted) {
		if res != nil && res.Load != nil && res.Load.Status != engine.StatusComplete {
			return interruptedError(errors.New("sync interrupted during the initial load; run it again to resume the load, then stream"))
		}
		return interruptedError(errors.New("sync interrupted; every change up to the confirmed position is in the table"))
	}
	return err
}

func dropSync(ctx context.Context, g *globals, pg, slot, pub string) error {
	res, err := engine.DropSync(ctx, engine.DropSyncConfig{Postgres: pg, Slot: slot, Publication: pub})
	if res != nil {
		_ = render.DropSync(g.stdout, res, err == nil)
	}
	return err
}

// checkForSync prints what keeps the source from feeding sync: notes, or
// with strict a usage error (exit 2).
func checkForSync(ctx context.Context, g *globals, m *mapping.Mapping, url string, strict bool) error {
	problems, err := engine.ReplicationProblems(ctx, m, url)
	if err != nil {
		return err
	}
	_ = render.SyncReadiness(g.stdout, m.File, problems, strict)
	if strict && len(problems) > 0 {
		return usagef("%s keep the source from feeding sync", render.Plural(len(problems), "problem"))
	}
	return nil
}

// maxSlotWALBytes reads --max-slot-wal: a size such as 20GiB (binary
// units: 20GB means the same), 0 when not given.
func (o *syncOpts) maxSlotWALBytes() (int64, error) {
	if o.maxSlotWAL == "" {
		return 0, nil
	}
	n, err := units.RAMInBytes(o.maxSlotWAL)
	if err != nil || n <= 0 {
		return 0, usagef("sync: --max-slot-wal must be a size such as 512MiB or 20GiB, not %q", o.maxSlotWAL)
	}
	return n, nil
}
