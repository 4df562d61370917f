package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/pgdynamo/migrate/internal/diff"
	"github.com/pgdynamo/migrate/internal/report"
	"github.com/pgdynamo/migrate/transform"
)

// VerifyConfig configures Verify.
type VerifyConfig struct {
	CompareConfig
	// Sample is the fraction of keys checked (0 < Sample <= 1), chosen by a
	// hash of the key, so the same keys are checked on every run and on
	// both sides. Default 1. Below 1 the default Mode is CompareGet, so
	// that only sampled keys are read.
	Sample float64
	// StateFile is the state file of the run or sync that wrote the table:
	// when Shards is nil, Verify takes the "count: auto" shard counts from
	// it (see WrittenShards). Default: StatePath(Table), when it exists;
	// without one the counts are computed from the source as it is now.
	StateFile string
}

// WithDefaults returns c with every unset field set to its default.
func (c VerifyConfig) WithDefaults() VerifyConfig {
	if c.Sample == 0 {
		c.Sample = 1
	}
	if c.Sample < 1 && c.Mode == "" {
		c.Mode = CompareGet
	}
	c.CompareConfig = c.CompareConfig.withDefaults(ConsistencyStrong)
	return c
}

// Validate reports every problem with c, each wrapping ErrConfig. Call it
// on WithDefaults().
func (c VerifyConfig) Validate() error {
	if !(c.Sample > 0 && c.Sample <= 1) { // NaN too
		return fieldf("verify", "Sample", "must be in (0, 1], e.g. 0.01 for 1%%")
	}
	return c.CompareConfig.validate("verify")
}

// Verify checks a loaded table against the source: it recomputes the
// expected items from a new snapshot, exactly as Run produces them, and
// compares them with the table by primary key, with per-entity counts and
// content hashes. The table differs when the result's Identical is false;
// that is not an error.
func Verify(ctx context.Context, cfg VerifyConfig) (*VerifyResult, error) {
	start := time.Now()
	cfg = cfg.WithDefaults()
	err := cfg.Validate()
	if err == nil && cfg.Shards == nil {
		var st *StateShards
		st, err = WrittenShards("verify", cfg.Mapping, cfg.StateFile, cfg.Table)
		cfg.Shards = st.Map()
	}
	src, tgt, err := openBoth(ctx, err, &cfg.CompareConfig)
	if err != nil {
		return nil, err
	}
	defer src.close(ctx)
	m := cfg.Mapping
	b := &verifyBuilder{
		v: &report.Verify{
			Schema:      report.VerifySchema,
			GeneratedAt: time.Now().UTC().Truncate(time.Second),
			Mapping:     m.File,
			Table:       tableInfo(m, tgt),
			Sample:      cfg.Sample,
			MaxDetails:  cfg.MaxDetails,
		},
		owns:     ownedBy(src),
		max:      cfg.MaxDetails,
		entities: map[string]*entityHashes{},
	}
	for _, e := range m.Entities {
		b.entity(e.Name)
	}
	c := &comparison{src: src, target: tgt, mode: cfg.Mode, cfg: &cfg.CompareConfig, sample: cfg.Sample,
		expected: func(transform.Item, []byte) {}, rowError: b.problem, visit: b.visit}
	if !tgt.exists {
		c.mode = "none"
	}
	// A table that cannot serve the mapping is not identical to what it
	// needs, whatever items it holds.
	for _, p := range tgt.tableProblems() {
		b.problem(p)
	}
	cfg.Logger.Debug("verify: comparing", "table", tgt.name, "exists", tgt.exists, "mode", c.mode, "sample", cfg.Sample)
	if err := c.run(ctx); err != nil {
		return nil, interrupted(ctx, "verify", err)
	}
	b.finish()
	b.v.Reads = readsInfo(c, start)
	return b.v, nil
}

// verifyBuilder accumulates the verification.
type verifyBuilder struct {
	v        *VerifyResult
	owns     func(r diff.Record, key []byte) bool
	max      int
	entities map[string]*entityHashes
	order    []string
}

type entityHashes struct {
	expected, actual int64
	expSum, actSum   diff.Sum
}

func (b *verifyBuilder) entity(name string) *entityHashes {
	e := b.entities[name]
	if e == nil {
		e = &entityHashes{}
		b.entities[name] = e
		b.order = append(b.order, name)
	}
	return e
}

func (b *verifyBuilder) problem(p report.Problem) {
	b.v.Summary.Problems++
	if len(b.v.Problems) < b.max {
		b.v.Problems = append(b.v.Problems, p)
	}
}

func (b *verifyBuilder) visit(pr diff.Pair) error {
	for i, r := range pr.Expected {
		h, err := diff.Hash(r.Attrs)
		if err != nil {
			return err
		}
		e := b.entity(r.Entity)
		e.expected++
		e.expSum.Add(h)
		b.v.Summary.Expected++
		if i > 0 {
			k := reportKey(pr.Key)
			b.problem(report.Problem{Kind: "duplicate-key", Entity: r.Entity, Origin: r.Origin, Key: &k,
				Message: fmt.Sprintf("same primary key as %s (%s)", pr.Expected[0].Origin, pr.Expected[0].Entity)})
		}
	}
	for _, r := range pr.Target {
		if !b.owns(r, pr.Key) {
			continue
		}
		h, err := diff.Hash(r.Attrs)
		if err != nil {
			return err
		}
		e := b.entity(r.Entity)
		e.actual++
		e.actSum.Add(h)
		b.v.Summary.Actual++
	}
	kind, changes := diff.Classify(pr, b.owns)
	s := &b.v.Summary
	switch kind {
	case diff.KindUnchanged:
		s.Matching++
	case diff.KindCreate:
		s.Missing++
		if len(b.v.Missing) < b.max {
			exp := pr.Expected[0]
			b.v.Missing = append(b.v.Missing, report.ItemRef{Key: reportKey(pr.Key), Entity: exp.Entity, Origin: exp.Origin})
		}
	case diff.KindChange:
		s.Different++
		if len(b.v.Different) < b.max {
			exp := pr.Expected[0]
			b.v.Different = append(b.v.Different, report.ItemChange{
				ItemRef:    report.ItemRef{Key: reportKey(pr.Key), Entity: exp.Entity, Origin: exp.Origin},
				Attributes: attributeChanges(changes),
			})
		}
	case diff.KindStale:
		s.Unexpected++
		if len(b.v.Unexpected) < b.max {
			b.v.Unexpected = append(b.v.Unexpected, report.ItemRef{Key: reportKey(pr.Key), Entity: pr.Target[0].Entity})
		}
	case diff.KindForeign:
		s.Foreign++
	}
	return nil
}

func (b *verifyBuilder) finish() {
	allMatch := true
	for _, name := range b.order {
		e := b.entities[name]
		ev := report.EntityVerify{Entity: name, Expected: e.expected, Actual: e.actual,
			ExpectedHash: e.expSum.String(), ActualHash: e.actSum.String()}
		ev.Match = ev.Expected == ev.Actual && ev.ExpectedHash == ev.ActualHash
		allMatch = allMatch && ev.Match
		b.v.Entities = append(b.v.Entities, ev)
	}
	s := b.v.Summary
	b.v.Identical = allMatch && s.Missing == 0 && s.Different == 0 && s.Unexpected == 0 && s.Problems == 0
}
