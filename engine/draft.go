package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/draft"
	"github.com/pgdynamo/migrate/mapping"
)

// DraftConfig configures Draft: which tables to read (ReadConfig) and how
// to draft them (Options).
type DraftConfig struct {
	Postgres string // source database URL; never logged or stored
	draft.ReadConfig
	draft.Options
	// Name is the file name the draft is checked under, which its
	// diagnostics would name. Default "mapping.yaml".
	Name string
}

// Validate reports every problem with c's values at once, each a
// FieldError. Zero values mean the defaults.
func (c DraftConfig) Validate() error {
	errs := []error{checkName("init", "Table", "table", c.Table)}
	if c.EmbedMax < 0 {
		errs = append(errs, fieldf("init", "EmbedMax", "must be at least 1"))
	}
	if slices.Contains(c.Tables, "") {
		errs = append(errs, fieldf("init", "Tables", "has an empty name: %q", strings.Join(c.Tables, ",")))
	}
	errs = append(errs, CheckPostgres("init", c.Postgres))
	return errors.Join(errs...)
}

// DraftResult is a drafted mapping file and what it holds.
type DraftResult = draft.Draft

// Draft reads the source's catalog and the shape of its data, drafts a
// mapping from them, and checks the draft against that catalog as Validate
// would: a draft that does not pass is an error (a bug in the drafting),
// never a result. It writes nothing. Tables that do not exist, or none to
// draft, are ErrConfig errors.
func Draft(ctx context.Context, cfg DraftConfig) (*DraftResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conn, err := extract.Connect(ctx, cfg.Postgres)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	src, err := draft.Read(ctx, conn, cfg.ReadConfig)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, kinded(ErrInterrupted, err)
	case errors.Is(err, draft.ErrNoTables), errors.Is(err, draft.ErrUnknownTable):
		return nil, kinded(ErrConfig, err)
	case err != nil:
		return nil, err
	}
	d, err := draft.Make(src, cfg.Options)
	if err != nil {
		return nil, kinded(ErrConfig, err)
	}
	m, err := mapping.Parse(cmp.Or(cfg.Name, "mapping.yaml"), d.YAML)
	if err == nil {
		if ds := mapping.Check(m, src.Catalog); ds != nil {
			err = ds
		}
	}
	if err != nil {
		return nil, fmt.Errorf("init: the draft does not pass validate, which is a bug in init; please report it with the schema:\n%v", err)
	}
	return d, nil
}
