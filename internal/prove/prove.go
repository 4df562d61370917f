// Package prove proves a mapping's access patterns against the migrated
// table: for each pattern it draws parameter values from the source, asks
// DynamoDB the way the pattern says (GetItem, or Query on the table or an
// index, fanning out over every shard of a sharded index and merging),
// asks the source the same question in the pattern's SQL, and compares the
// answers exactly: numbers as decimals, timestamps as instants, in order
// where the pattern has one.
//
// It reads DynamoDB with GetItem and Query only: the DynamoDB interface it
// declares has no other method, so a pattern that would need a Scan cannot
// be proven, by construction. The source is read through the caller's
// querier, which should be a read-only snapshot (extract.Snapshot) so that
// parameter draws and answers see one state of the data.
package prove

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgdynamo/migrate/mapping"
)

// Querier runs SQL against the source; pgx.Tx, *pgx.Conn, *pgxpool.Pool
// and *extract.Snapshot fit.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// DynamoDB is what prove asks of DynamoDB: one item by key, or one
// partition of the table or an index. There is deliberately no Scan.
type DynamoDB interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// Config configures Prove. Mapping and Catalog are required; the zero
// value of every other field means its documented default.
type Config struct {
	// Mapping is a parsed mapping that passed mapping.Check against
	// Catalog, the source's catalog.
	Mapping *mapping.Mapping
	Catalog *mapping.Catalog
	// Table is the DynamoDB table to ask. Default: the mapping's table.
	Table string
	// Patterns limits the run to these patterns, by name. Default: all.
	Patterns []string
	// Samples is how many parameter sets are tried per pattern when the
	// source has more; a smaller domain is tried whole. Default 100.
	Samples int
	// Seed chooses the sample: the same seed, the same parameter sets.
	// Default 1.
	Seed uint64
	// Missing is how many parameter sets per pattern are made up to not
	// exist in the source (both sides must answer nothing alike). Default 3;
	// -1 for none.
	Missing int
	// Shards gives the shard count of a sharded index by index name, for
	// a count: auto that the run computed. Default: fixed counts from the
	// mapping, and AutoShards.
	Shards map[string]int
	// AutoShards are the "count: auto" shard counts by entity and index,
	// as the run computed them (engine.Prove fills them in from the
	// source, the way Run computes them).
	AutoShards map[[2]string]int
	// ConsistentRead asks the table and local indexes with strongly
	// consistent reads (global indexes have none). Default false.
	ConsistentRead bool
	// MaxDetails is how many differences are kept per pattern. Default 1.
	MaxDetails int
}

// Defaults.
const (
	DefaultSamples = 100
	DefaultSeed    = 1
	DefaultMissing = 3
)

// WithDefaults returns c with unset fields defaulted.
func (c Config) WithDefaults() Config {
	if c.Mapping != nil {
		c.Table = cmp.Or(c.Table, c.Mapping.Table)
	}
	c.Samples = cmp.Or(c.Samples, DefaultSamples)
	c.Seed = cmp.Or(c.Seed, DefaultSeed)
	c.Missing = cmp.Or(c.Missing, DefaultMissing)
	if c.Missing < 0 {
		c.Missing = 0
	}
	c.MaxDetails = cmp.Or(c.MaxDetails, 1)
	return c
}

// ErrNoPatterns is returned when the mapping declares no access patterns
// (or none of those asked for).
var ErrNoPatterns = errors.New("prove: the mapping declares no access patterns")

// Validate reports every problem with c at once. Call it on WithDefaults().
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("prove: "+format, args...)) }
	if c.Mapping == nil {
		bad("a mapping is required")
	}
	if c.Catalog == nil {
		bad("the source catalog is required")
	}
	if c.Table == "" {
		bad("a table name is required")
	}
	if c.Samples < 1 {
		bad("samples must be at least 1, got %d", c.Samples)
	}
	if c.MaxDetails < 1 {
		bad("max details must be at least 1, got %d", c.MaxDetails)
	}
	for ix, n := range c.Shards {
		if n < 1 {
			bad("shard count of %s must be at least 1, got %d", ix, n)
		}
	}
	if c.Mapping != nil {
		for _, name := range c.Patterns {
			if patternNamed(c.Mapping, name) == nil {
				bad("the mapping has no access pattern %q", name)
			}
		}
	}
	return errors.Join(errs...)
}

func patternNamed(m *mapping.Mapping, name string) *mapping.AccessPattern {
	for _, ap := range m.AccessPatterns {
		if ap.Name == name {
			return ap
		}
	}
	return nil
}

// ResultSchema names the JSON document Result is written as.
const ResultSchema = "migrate.prove/v1"

// Result is what Prove found, pattern by pattern.
type Result struct {
	Schema  string `json:"schema"`
	Table   string `json:"table"`
	Samples int    `json:"samples"`
	Seed    uint64 `json:"seed"`
	// Proven is true when every pattern was tried with at least one
	// parameter set and every answer matched.
	Proven   bool            `json:"proven"`
	Patterns []PatternResult `json:"patterns"`
}

// PatternResult is one access pattern's outcome.
type PatternResult struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Operation   string `json:"operation"`       // GetItem or Query
	Index       string `json:"index,omitempty"` // "" for the table
	// Request describes the DynamoDB request: key condition, direction,
	// limit.
	Request string `json:"request"`
	// Shards is the number of shards a sharded pattern queried and merged
	// per parameter set; 0 when it is not sharded.
	Shards int `json:"shards,omitempty"`
	// Domain is how many parameter sets the source has (distinct values,
	// or rows of the params query); Sampled when fewer were tried.
	Domain  int64 `json:"domain"`
	Sampled bool  `json:"sampled"`
	// Tried parameter sets were asked of both sides and compared: Matched
	// plus Mismatched. Missing of them were made up to not exist. Skipped
	// sets could not be asked (a NULL parameter cannot build a key).
	Tried      int `json:"tried"`
	Matched    int `json:"matched"`
	Mismatched int `json:"mismatched"`
	Missing    int `json:"missing"`
	Skipped    int `json:"skipped"`
	// Items and Rows are the answers compared, in total.
	Items int64 `json:"items"`
	Rows  int64 `json:"rows"`
	// Differences are the first mismatches (Config.MaxDetails).
	Differences []Difference `json:"differences,omitempty"`
	// SkipReason is why the first skipped set could not be asked.
	SkipReason string `json:"skipReason,omitempty"`
	// Error is why the pattern could not be proven at all (its SQL failed,
	// no parameter values, ...); it is then neither matched nor mismatched.
	Error string `json:"error,omitempty"`
}

// Proven reports whether the pattern was tried and every answer matched.
func (p PatternResult) Proven() bool {
	return p.Error == "" && p.Mismatched == 0 && p.Matched > 0
}

// Difference is one parameter set whose answers differ.
type Difference struct {
	Params  []Param `json:"params"`
	Message string  `json:"message"`
}

// Param is one parameter's value, as text.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Failed reports whether some pattern could not be run at all (an error,
// not a difference).
func (r *Result) Failed() bool {
	for _, p := range r.Patterns {
		if p.Error != "" {
			return true
		}
	}
	return false
}

// Prove runs every access pattern of the mapping (or those in
// cfg.Patterns). The error is for failures that stop the whole proof
// (DynamoDB unreachable, the context canceled); a pattern that cannot run
// is reported in its PatternResult.Error, a difference in its counts.
func Prove(ctx context.Context, db Querier, ddb DynamoDB, cfg Config) (*Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var patterns []*mapping.AccessPattern
	for _, ap := range cfg.Mapping.AccessPatterns {
		if len(cfg.Patterns) == 0 || slices.Contains(cfg.Patterns, ap.Name) {
			patterns = append(patterns, ap)
		}
	}
	if len(patterns) == 0 {
		return nil, ErrNoPatterns
	}
	shards, err := ShardCounts(cfg.Mapping, patterns, cfg.Shards, cfg.AutoShards)
	if err != nil {
		return nil, err
	}
	if err := schemaFirst(ctx, db, cfg.Mapping.Schema); err != nil {
		return nil, err
	}
	res := &Result{Schema: ResultSchema, Table: cfg.Table, Samples: cfg.Samples, Seed: cfg.Seed, Proven: true}
	for _, ap := range patterns {
		p := &prover{cfg: cfg, ap: ap, db: db, ddb: ddb, shards: shards[ap.Index]}
		sp, err := savepoint(ctx, db)
		if err != nil {
			return nil, err
		}
		pr, err := p.run(ctx)
		if err != nil {
			return nil, fmt.Errorf("prove %s: %w", ap.Name, err)
		}
		if err := sp.end(ctx); err != nil {
			return nil, fmt.Errorf("prove %s: %w", ap.Name, err)
		}
		res.Proven = res.Proven && pr.Proven()
		res.Patterns = append(res.Patterns, pr)
	}
	return res, nil
}

// schemaFirst puts the mapping's schema first on the search path of the
// querier's transaction, so that pattern SQL names tables as the mapping
// does: "FROM employees" means hr.employees under schema: hr. It is local
// to the transaction (a Snapshot); outside one it has no effect.
func schemaFirst(ctx context.Context, db Querier, schema string) error {
	if schema == "" {
		return nil
	}
	err := exec(ctx, db, "SELECT set_config('search_path', $1 || ', ' || current_setting('search_path'), true)",
		pgx.Identifier{schema}.Sanitize())
	if err != nil {
		return fmt.Errorf("prove: put schema %s on the search path: %w", schema, err)
	}
	return nil
}

// patternSavepoint isolates one pattern's SQL: a failing statement aborts
// the transaction, and without it every later pattern would fail with
// "current transaction is aborted".
type patternSavepoint struct {
	db Querier // nil: not in a transaction, nothing to undo
}

const savepointName = "migrate_prove_pattern"

// savepoint starts one, when the querier is in a transaction.
func savepoint(ctx context.Context, db Querier) (patternSavepoint, error) {
	err := exec(ctx, db, "SAVEPOINT "+savepointName, pgx.QueryExecModeSimpleProtocol)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "25P01": // no_active_sql_transaction
		return patternSavepoint{}, nil // each statement is its own transaction
	case err != nil:
		return patternSavepoint{}, fmt.Errorf("prove: savepoint: %w", err)
	}
	return patternSavepoint{db: db}, nil
}

// end rolls back to the savepoint (the pattern only read; an error in it
// is undone) and releases it.
func (sp patternSavepoint) end(ctx context.Context) error {
	if sp.db == nil {
		return nil
	}
	if err := exec(ctx, sp.db, "ROLLBACK TO SAVEPOINT "+savepointName, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("rollback to savepoint: %w", err)
	}
	if err := exec(ctx, sp.db, "RELEASE SAVEPOINT "+savepointName, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// exec runs a statement through Query, the one method a Querier has.
func exec(ctx context.Context, db Querier, sql string, args ...any) error {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}
