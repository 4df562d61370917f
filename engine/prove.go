package engine

import (
	"cmp"
	"context"
	"errors"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/mapping"
)

// ProveConfig configures Prove: its Config (ProveOptions: the patterns to ask
// and how; its Catalog and AutoShards are filled in here), the source and the
// table's client.
type ProveConfig struct {
	prove.Config
	Postgres string // source database URL; never logged or stored
	// DynamoDB is asked with GetItem and Query only; *dynamodb.Client fits.
	DynamoDB prove.DynamoDB
	// StateFile is the state file of the run or sync that wrote the table:
	// when AutoShards is nil, Prove takes the "count: auto" shard counts
	// from it (see WrittenShards). Default: StatePath(table), when it
	// exists.
	StateFile string
}

// Validate reports every problem with the values c's caller sets, each
// wrapping ErrConfig; the problems with a value are FieldErrors. Zero
// values mean the defaults. (It checks what prove.Config.Validate cannot
// yet: Prove fills in the catalog and shard counts from the source.)
func (c ProveConfig) Validate() error {
	var errs []error
	if c.Mapping == nil || c.DynamoDB == nil || c.Postgres == "" {
		errs = append(errs, configErrorf("prove: a mapping, a source database URL and a DynamoDB client are required"))
	}
	field := func(name, format string, args ...any) { errs = append(errs, fieldf("prove", name, format, args...)) }
	if c.Samples < 0 {
		field("Samples", "must be at least 1")
	}
	if c.Missing < -1 {
		field("Missing", "must be -1 (none), 0 (the default, %d) or more", prove.DefaultMissing)
	}
	if c.MaxDetails < 0 {
		field("MaxDetails", "must not be negative")
	}
	for ix, n := range c.Shards {
		if n < 1 {
			field("Shards", "of %s must be at least 1, not %d", ix, n)
		}
	}
	errs = append(errs, checkName("prove", "Table", "table", c.Table), CheckPostgres("prove", c.Postgres))
	return errors.Join(errs...)
}

// Prove answers the mapping's access patterns on the migrated table and
// compares each answer with the pattern's SQL on the source, in one
// read-only snapshot that has passed the catalog check. "count: auto"
// shard counts neither given nor in the state file are computed from the
// source as Run computes them.
func Prove(ctx context.Context, cfg ProveConfig) (*ProveResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.AutoShards == nil {
		st, err := WrittenShards("prove", cfg.Mapping, cfg.StateFile, cmp.Or(cfg.Table, cfg.Mapping.Table))
		if err != nil {
			return nil, err
		}
		cfg.AutoShards = st.Map()
	}
	src, err := openSource(ctx, cfg.Mapping, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)
	pc := cfg.Config
	pc.Catalog = src.cat
	if pc.AutoShards == nil {
		if err := src.computeShards(ctx, nil); err != nil {
			return nil, err
		}
		pc.AutoShards = map[[2]string]int{}
		for _, s := range src.shards {
			pc.AutoShards[[2]string{s.Entity, s.Index}] = s.Inputs.Count
		}
	}
	if err := pc.WithDefaults().Validate(); err != nil {
		return nil, kinded(ErrConfig, err)
	}
	return prove.Prove(ctx, src.snap, cfg.DynamoDB, pc)
}

// ShardCounts computes a mapping's "count: auto" shard counts from the
// source, as Run computes them, in a read-only snapshot.
func ShardCounts(ctx context.Context, m *mapping.Mapping, pgURL string) ([]contract.ShardCount, error) {
	src, err := openSource(ctx, m, pgURL)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)
	if err := src.computeShards(ctx, nil); err != nil {
		return nil, err
	}
	return publicShards(src.shards), nil
}
