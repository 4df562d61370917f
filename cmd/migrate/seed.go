package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/internal/render"
	"github.com/pgdynamo/migrate/internal/seed"
)

type seedOpts struct {
	pg  string
	cfg seed.Config
}

// newSampleSeedCmd is `migrate sample seed`.
func newSampleSeedCmd(g *globals) *cobra.Command {
	var o seedOpts
	cmd := &cobra.Command{
		Use:   "seed --pg URL [--scale N] [--seed S] [--replace]",
		Short: "Fill the sample bookstore with deterministic data",
		Long:  longHelp("seed"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.pg, _ = pgURLFrom(o.pg); o.pg == "" {
				return errNoPG("sample seed")
			}
			if err := o.cfg.Validate(); err != nil {
				return usageError(err)
			}
			if err := checkPostgres("sample seed", o.pg, ""); err != nil {
				return err
			}
			return runSeed(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.pg, "pg", "", "postgres:// URL of the database (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	f.IntVar(&o.cfg.Scale, "scale", seed.DefaultScale, "number of customers; every other table is sized from it")
	f.Int64Var(&o.cfg.Seed, "seed", 0, "random seed: the same seed and scale give the same rows")
	f.BoolVar(&o.cfg.Replace, "replace", false, "truncate the bookstore tables first if they have rows")
	return cmd
}

func runSeed(ctx context.Context, g *globals, o seedOpts) error {
	conn, err := pgx.Connect(ctx, o.pg)
	if err != nil {
		return fmt.Errorf("seed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	g.logger.Debug("seeding", "scale", o.cfg.Scale, "seed", o.cfg.Seed, "replace", o.cfg.Replace)
	start := time.Now()
	counts, err := seed.Load(ctx, conn, o.cfg)
	switch {
	case err != nil && ctx.Err() != nil:
		g.logger.Debug("seed aborted", "err", err)
		return interruptedError(fmt.Errorf("seed: %w; rolled back, the tables are as they were", context.Cause(ctx)))
	case errors.Is(err, seed.ErrNotEmpty):
		return fmt.Errorf("%w; pass --replace to truncate the bookstore tables first", err)
	case errors.Is(err, seed.ErrNoSchema):
		return fmt.Errorf("%w; run \"migrate sample schema up\" first", err)
	case err != nil:
		return err
	}
	return render.Seed(g.stdout, o.cfg, counts, time.Since(start))
}
