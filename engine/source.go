package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/tableconf"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// LoadMapping reads and parses a mapping file. Syntax problems come back as
// mapping.Diagnostics, every one of them; an unreadable file wraps
// ErrConfig.
func LoadMapping(path string) (*mapping.Mapping, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, kinded(ErrConfig, fmt.Errorf("read mapping: %w", err))
	}
	return mapping.Parse(path, data)
}

// Validate checks a mapping against the live catalog of the database at
// pgURL, inside a read-only snapshot, reading nothing but the catalog; the
// SQL of its access patterns is prepared there, never executed. The
// problems come back as mapping.Diagnostics; so do the warnings of a valid
// mapping (mapping.Warnings: a key template that reads a nullable column),
// which are advice, never a failure.
func Validate(ctx context.Context, m *mapping.Mapping, pgURL string) (warnings mapping.Diagnostics, err error) {
	_, warnings, err = ValidateKeys(ctx, m, pgURL)
	return warnings, err
}

// ValidateKeys is Validate that also says, for a valid mapping, which
// entities' keys are proven unique (mapping.ProveUniqueKeys): a run keeps
// no record of their keys; it checks the others' keys for duplicates,
// on disk.
func ValidateKeys(ctx context.Context, m *mapping.Mapping, pgURL string) (proof mapping.KeyProof, warnings mapping.Diagnostics, err error) {
	conn, snap, err := openSnapshot(ctx, pgURL)
	if err != nil {
		return mapping.KeyProof{}, nil, err
	}
	defer closeSnapshot(ctx, conn, snap)
	cat, err := checkAgainst(ctx, snap, m)
	if err != nil {
		return mapping.KeyProof{}, nil, err
	}
	ds, err := checkPatternSQL(ctx, conn, m)
	if err != nil {
		return mapping.KeyProof{}, nil, err
	}
	if len(ds) > 0 {
		return mapping.KeyProof{}, nil, ds
	}
	return mapping.ProveUniqueKeys(m, cat), mapping.Warnings(m, cat), nil
}

// LoadMappingWithCatalog is LoadMapping that, when the file has problems
// and the source (pgURL) can be read, reports the catalog's problems with
// them, as ValidateFile does: a run shows every problem in one pass too.
// If the source cannot be read, the file's problems alone are reported.
func LoadMappingWithCatalog(ctx context.Context, path, pgURL string) (*mapping.Mapping, error) {
	m, err := LoadMapping(path)
	var ds mapping.Diagnostics
	if err == nil || pgURL == "" || !errors.As(err, &ds) {
		return m, err
	}
	if _, _, _, all := ValidateFile(ctx, path, pgURL); errors.As(all, &ds) {
		return nil, all
	}
	return nil, err
}

// ValidateFile is ValidateKeys for a mapping file, reporting every problem
// in one pass: what the file says wrong (an undeclared index, an unknown
// field) and what the catalog says wrong of the rest (a misspelled column),
// together, as mapping.Diagnostics. Without a database, LoadMapping
// reports the file's problems alone.
func ValidateFile(ctx context.Context, path, pgURL string) (m *mapping.Mapping, proof mapping.KeyProof, warnings mapping.Diagnostics, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, mapping.KeyProof{}, nil, kinded(ErrConfig, fmt.Errorf("read mapping: %w", err))
	}
	m, parsed := mapping.ParsePartial(path, data)
	if m == nil {
		return nil, mapping.KeyProof{}, nil, parsed
	}
	conn, snap, err := openSnapshot(ctx, pgURL)
	if err != nil {
		return nil, mapping.KeyProof{}, nil, err
	}
	defer closeSnapshot(ctx, conn, snap)
	cat, err := snap.Catalog(ctx, schemasOf(m))
	if err != nil {
		return nil, mapping.KeyProof{}, nil, err
	}
	// Pattern SQL is prepared against the catalog too, whatever else is
	// wrong: every problem in one report.
	sqlDs, err := checkPatternSQL(ctx, conn, m)
	if err != nil {
		return nil, mapping.KeyProof{}, nil, err
	}
	if ds := mapping.MergeDiagnostics(parsed, mapping.Check(m, cat), sqlDs); ds != nil {
		return nil, mapping.KeyProof{}, nil, ds
	}
	return m, mapping.ProveUniqueKeys(m, cat), mapping.Warnings(m, cat), nil
}

// source is a validated mapping, compiled against the catalog, with the
// snapshot every read of a verb goes through. Run, Plan, Verify and Prune
// all start here, so they see and validate the source the same way.
type source struct {
	m    *mapping.Mapping
	plan *transform.Plan
	snap *extract.Snapshot
	conn *pgx.Conn
	cat  *mapping.Catalog
	// url and snapshotID are how more readers join the snapshot (see
	// readers.go); snapshotID is empty unless the snapshot was given.
	url, snapshotID string
	// shards holds the computed "count: auto" shard counts and their inputs.
	shards []autoShard
	// keys says which entities' keys are proven unique.
	keys mapping.KeyProof
	// began and held time the snapshot: from its BEGIN until close.
	began time.Time
	held  time.Duration
	// overrides are the user's timeouts the snapshot turned off for itself.
	overrides []extract.Setting
}

// autoShard is the shard count of one sharded index of one entity with
// "count: auto", and how it was found.
type autoShard struct {
	Entity, Index string
	Inputs        transform.ShardInputs
	// Preset says the count was taken from the state file of the run being
	// resumed, not computed: only Inputs.Count is set.
	Preset bool
}

// public is the count as observers and results show it.
func (r autoShard) public() contract.ShardCount {
	c := contract.ShardCount{Entity: r.Entity, Index: r.Index, Count: r.Inputs.Count, Preset: r.Preset}
	if !r.Preset {
		c.Basis = r.Inputs.String()
	}
	return c
}

// publicShards converts shards for observers and results.
func publicShards(shards []autoShard) []contract.ShardCount {
	var out []contract.ShardCount
	for _, s := range shards {
		out = append(out, s.public())
	}
	return out
}

// openSource opens the snapshot, checks the mapping against the catalog
// and compiles it. It reads nothing but the catalog; shard counts come
// later (computeShards), once the target is known to fit. Close it with
// close.
func openSource(ctx context.Context, m *mapping.Mapping, pgURL string) (*source, error) {
	return openSourceAt(ctx, m, pgURL, "")
}

// openSourceAt is openSource inside an exported snapshot (see
// extract.BeginAt); "" takes a new one.
func openSourceAt(ctx context.Context, m *mapping.Mapping, pgURL, snapshotID string) (*source, error) {
	conn, snap, err := openSnapshotAt(ctx, pgURL, snapshotID)
	if err != nil {
		return nil, err
	}
	src := &source{m: m, snap: snap, conn: conn, url: pgURL, snapshotID: snapshotID, began: snap.Began(), overrides: snap.Overrides()}
	cat, err := checkAgainst(ctx, snap, m)
	if err != nil {
		src.close(ctx)
		return nil, err
	}
	src.cat = cat
	if src.plan, err = transform.Compile(m, cat); err != nil {
		src.close(ctx)
		return nil, err
	}
	src.keys = mapping.ProveUniqueKeys(m, cat)
	return src, nil
}

// close ends the snapshot and the connection. It may be called more than
// once: a run releases the snapshot as soon as the last row is read.
func (s *source) close(ctx context.Context) {
	if s.conn == nil {
		return
	}
	closeSnapshot(ctx, s.conn, s.snap)
	s.conn, s.snap = nil, nil
	s.held = time.Since(s.began)
}

// heldFor is how long the snapshot was held: until close, or until now
// while it is open.
func (s *source) heldFor() time.Duration {
	if s.conn != nil {
		return time.Since(s.began)
	}
	return s.held
}

// logOverrides says which of the user's settings the snapshot's
// transaction overrides (extract.Setting), once per command: parallel
// readers' sessions override the same ones.
func (s *source) logOverrides(log *slog.Logger) {
	for _, o := range s.overrides {
		log.Info("source timeout turned off for the snapshot's own transaction, which waits for the writer as long as writing takes",
			"setting", o.Name, "was", o.Value, "from", o.Source)
	}
}

// indexes are the mapping's secondary indexes in the loader's terms.
func (s *source) indexes() []load.Index { return tableconf.Indexes(s.m) }

// rowVisitor sees every source row with the items it produced and the row
// errors of entities that could not build theirs. Returning an error stops
// the walk.
type rowVisitor func(src *transform.Source, row extract.Row, items []transform.Item, errs []*transform.RowError) error

// walk reads every source table in the snapshot, in key order, and
// transforms each row (transform.Source.Apply: items with their SourceKey).
func (s *source) walk(ctx context.Context, visit rowVisitor) error {
	return s.walkSources(ctx, s.plan.Sources, nil, (*transform.Source).Apply, visit)
}

// walkSources is walk over some of the plan's sources only (a resumed run
// skips the ones already done), each starting after the given position
// (by source name; nil = from the start), transforming rows with build.
func (s *source) walkSources(ctx context.Context, sources []*transform.Source, after map[string][]any,
	build func(*transform.Source, extract.Row) ([]transform.Item, []*transform.RowError), visit rowVisitor) error {
	for _, src := range sources {
		q := src.Query
		q.After = after[src.Name]
		for row, err := range s.snap.Rows(ctx, q) {
			if err != nil {
				return err
			}
			items, errs := build(src, row)
			if err := visit(src, row, items, errs); err != nil {
				return err
			}
		}
	}
	return nil
}

// estimates returns the planner's row estimate (pg_class.reltuples) of each
// source table, read inside the snapshot; tables never analyzed are left
// out. Call it before walking: the snapshot's connection serves one query
// at a time.
func (s *source) estimates(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, src := range s.plan.Sources {
		var n float64
		err := s.conn.QueryRow(ctx, `SELECT c.reltuples::float8 FROM pg_catalog.pg_class c
			JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
			WHERE ns.nspname = $1 AND c.relname = $2`, src.Query.Schema, src.Query.Table).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("row estimate of %s: %w", src.Name, err)
		}
		if n >= 0 { // -1: never vacuumed or analyzed
			out[src.Name] = int64(n)
		}
	}
	return out, nil
}

// shardSampleRows is how many rows of a table count: auto measures.
const shardSampleRows = 10_000

// computeShards resolves "count: auto" shard counts: it transforms the
// first shardSampleRows rows (in key order) of the tables concerned,
// inside the same snapshot and writing nothing, to measure the real
// average item size, then applies the formula of rule 7. A prefix in key
// order is the same on every run, plan and verify over the same data, and
// rows added later (at the end of the key order, as a rule) do not change
// it.
//
// Counts given in preset (by entity, then index) are set as they are,
// without reading anything, e.g. from a resumed run's state file, so that a
// resumed run puts items in the same shards as the run it continues.
func (s *source) computeShards(ctx context.Context, preset map[[2]string]int) error {
	var auto []transform.ShardSetting
	for _, a := range s.plan.AutoShards() {
		if n, ok := preset[[2]string{a.Entity, a.Index}]; ok && n > 0 {
			s.plan.SetShardCount(a.Entity, a.Index, n)
			s.shards = append(s.shards, autoShard{Entity: a.Entity, Index: a.Index, Inputs: transform.ShardInputs{Count: n}, Preset: true})
			continue
		}
		auto = append(auto, a)
	}
	if len(auto) == 0 {
		return nil
	}
	sizes := map[string]*[2]int64{} // entity -> bytes, items
	for _, a := range auto {
		s.plan.SetShardCount(a.Entity, a.Index, 1) // provisional, for sizing
		sizes[a.Entity] = new([2]int64)
	}
	for _, src := range s.plan.Sources {
		needed := false
		for _, a := range auto {
			needed = needed || src.HasEntity(a.Entity)
		}
		if !needed {
			continue
		}
		q := src.Query
		q.Limit = shardSampleRows
		for row, err := range s.snap.Rows(ctx, q) {
			if err != nil {
				return err
			}
			items, _ := src.Build(row) // row errors are reported by the real pass
			for _, it := range items {
				if sz := sizes[it.Entity]; sz != nil {
					sz[0] += int64(load.ItemSize(it.Attrs))
					sz[1]++
				}
			}
		}
	}
	for _, a := range auto {
		sz := sizes[a.Entity]
		avg := 0.0
		if sz[1] > 0 {
			avg = float64(sz[0]) / float64(sz[1])
		}
		in := transform.ShardCount(avg, a.ReadRate)
		in.SampleItems = int(sz[1])
		s.plan.SetShardCount(a.Entity, a.Index, in.Count)
		s.shards = append(s.shards, autoShard{Entity: a.Entity, Index: a.Index, Inputs: in})
	}
	return nil
}

// schemasOf lists the source schemas a mapping reads.
func schemasOf(m *mapping.Mapping) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range m.Entities {
		if !seen[e.Schema] {
			seen[e.Schema] = true
			out = append(out, e.Schema)
		}
	}
	return out
}

// checkAgainst reads the catalog through the snapshot and validates the
// mapping against it; problems come back as mapping.Diagnostics.
func checkAgainst(ctx context.Context, snap *extract.Snapshot, m *mapping.Mapping) (*mapping.Catalog, error) {
	cat, err := snap.Catalog(ctx, schemasOf(m))
	if err != nil {
		return nil, err
	}
	if ds := mapping.Check(m, cat); ds != nil {
		return nil, ds
	}
	return cat, nil
}

// openSnapshot connects and starts the read-only snapshot transaction.
func openSnapshot(ctx context.Context, url string) (*pgx.Conn, *extract.Snapshot, error) {
	return openSnapshotAt(ctx, url, "")
}

// openSnapshotAt is openSnapshot in an exported snapshot; "" takes a new
// one.
func openSnapshotAt(ctx context.Context, url, snapshotID string) (*pgx.Conn, *extract.Snapshot, error) {
	if url == "" {
		return nil, nil, configErrorf("no source database URL")
	}
	conn, err := extract.Connect(ctx, url)
	if errors.Is(err, extract.ErrBadURL) {
		return nil, nil, kinded(ErrConfig, err)
	}
	if err != nil {
		return nil, nil, err
	}
	snap, err := extract.BeginAt(ctx, conn, snapshotID)
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return conn, snap, nil
}

func closeSnapshot(ctx context.Context, conn *pgx.Conn, snap *extract.Snapshot) {
	ctx = context.WithoutCancel(ctx)
	_ = snap.Close(ctx)
	_ = conn.Close(ctx)
}

// isInterrupt reports whether err only follows from ctx having ended.
func isInterrupt(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
}
