package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/diff"
	"github.com/pgdynamo/migrate/report"
	"github.com/pgdynamo/migrate/transform"
)

func init() { register(newVerifyCmd) }

type verifyOpts struct {
	compareFlags
	sample float64
}

func (o *verifyOpts) validate(cmd *cobra.Command) error {
	if o.sample <= 0 || o.sample > 1 {
		return usagef("verify: --sample must be in (0, 1], e.g. 0.01 for 1%%")
	}
	// A sample is cheap only if only the sampled keys are read.
	if o.sample < 1 && !cmd.Flags().Changed("compare") {
		o.compare = compareGet
	}
	return o.compareFlags.validate("verify")
}

// errDifferent is returned when verify found differences; they are
// already printed, so the message is short.
var errDifferent = errors.New("verify: the table differs from the source")

func newVerifyCmd(g *globals) *cobra.Command {
	var o verifyOpts
	cmd := &cobra.Command{
		Use:   "verify --mapping FILE --pg URL [--table T] [--endpoint URL] [--sample P] [--format text|markdown|json]",
		Short: "Check a loaded table against the source: per-entity counts and content hashes, every differing item",
		Long: `verify recomputes the expected items from the source in one snapshot, exactly
as run produces them, and compares them with the target table by primary key:

  missing     expected, not in the table
  different   in both, with different attributes (listed old -> new)
  unexpected  in the table, of an entity of this mapping (by its entity
              attribute), not expected; other items are ignored ("foreign")

For every entity it prints the expected and actual item counts and content
hashes: the sum modulo 2^256 of the SHA-256 of each item's canonical JSON
(sorted attribute names, canonical numbers, sorted sets), which does not
depend on order. Equal hashes mean equal contents.

--sample P checks only the fraction P of the keys, chosen by a hash of the
key, so the same keys are checked every time and on both sides. With
--sample below 1, --compare defaults to get, so that only sampled keys are
read (unexpected items are then not looked for).

Reads are strongly consistent by default (--consistent=false halves their
cost), so that a verify right after a run sees every write.

` + compareReadCostHelp + `

Exit codes: 0 identical; 1 any difference (printed) or failure; 2 usage or
mapping errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.pg = pgURL(o.pg)
			if err := o.validate(cmd); err != nil {
				return err
			}
			return runVerify(cmd.Context(), g, &o)
		},
	}
	f := cmd.Flags()
	o.register(f, compareScan, true)
	f.Float64Var(&o.sample, "sample", 1, "check this fraction of the keys (0 < P <= 1), chosen by a hash of the key")
	return cmd
}

// verifyBuilder accumulates the verification.
type verifyBuilder struct {
	v        *report.Verify
	owns     func(string) bool
	max      int
	entities map[string]*entityHashes
	order    []string
}

type entityHashes struct {
	expected, actual int64
	expSum, actSum   diff.Sum
}

func runVerify(ctx context.Context, g *globals, o *verifyOpts) error {
	start := time.Now()
	src, tgt, err := openBoth(ctx, &o.compareFlags)
	if err != nil {
		return err
	}
	defer src.close(ctx)
	b := &verifyBuilder{
		v: &report.Verify{
			Schema:      report.VerifySchema,
			GeneratedAt: time.Now().UTC().Truncate(time.Second),
			Mapping:     o.mapping,
			Table:       tableInfo(src, tgt),
			Sample:      o.sample,
			MaxDetails:  o.maxDetails,
		},
		owns:     ownedBy(src),
		max:      o.maxDetails,
		entities: map[string]*entityHashes{},
	}
	for _, e := range src.m.Entities {
		b.entity(e.Name)
	}
	c := &comparison{src: src, target: tgt, mode: o.compare, opts: &o.compareFlags, sample: o.sample,
		expected: func(transform.Item, []byte) {}, rowError: b.problem, visit: b.visit}
	if !tgt.exists {
		c.mode = "none"
	}
	g.logger.Info("verify: comparing", "table", tgt.name, "exists", tgt.exists, "mode", c.mode, "sample", o.sample)
	if err := c.run(ctx, g.logger); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return interruptedError{fmt.Errorf("verify interrupted: %w", err)}
		}
		return err
	}
	b.finish()
	b.v.Reads = readsInfo(c, start)

	v := b.v
	err = writeReport(g.stdout, o.format,
		func(w io.Writer) error {
			return report.VerifyText(w, v, report.TextOptions{Color: wantColor(g.stdout, o.color)})
		},
		func(w io.Writer) error { return report.VerifyMarkdown(w, v) },
		func(w io.Writer) error { return report.VerifyJSON(w, v) })
	if err != nil {
		return fmt.Errorf("verify: write report: %w", err)
	}
	if !v.Identical {
		return errDifferent
	}
	return nil
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
		if !b.owns(r.Entity) {
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
