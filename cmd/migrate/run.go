package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/load"
	"github.com/pgdynamo/migrate/transform"
)

func init() { register(newRunCmd) }

type runOpts struct {
	mapping     string
	pg          string
	table       string
	endpoint    string
	region      string
	createTable bool
	concurrency int
}

func (o *runOpts) validate() error {
	if o.mapping == "" {
		return usagef("run: --mapping is required")
	}
	if o.pg == "" {
		return usagef("run: --pg is required (or set MIGRATE_PG_URL or DATABASE_URL)")
	}
	if o.concurrency < 1 {
		return usagef("run: --concurrency must be at least 1")
	}
	return nil
}

func newRunCmd(g *globals) *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "run --mapping FILE --pg URL [--table NAME] [--endpoint URL] [--region R] [--create-table]",
		Short: "Migrate: read the source in one snapshot, transform, batch-write to DynamoDB",
		Long: `run validates the mapping against the source catalog, then reads every source
table in one read-only snapshot, turns rows into items and writes them with
BatchWriteItem (25 items a call, unprocessed items re-sent with backoff).

The DynamoDB client uses the standard AWS configuration (credential chain,
AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB); --endpoint and --region override it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.pg = pgURL(o.pg)
			if err := o.validate(); err != nil {
				return err
			}
			return runMigration(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.mapping, "mapping", "", "mapping file (YAML)")
	f.StringVar(&o.pg, "pg", "", "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)")
	f.StringVar(&o.table, "table", "", "target DynamoDB table (default: the mapping's table)")
	f.StringVar(&o.endpoint, "endpoint", "", "DynamoDB endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_DYNAMODB)")
	f.StringVar(&o.region, "region", "", "AWS region (default: AWS configuration, e.g. $AWS_REGION)")
	f.BoolVar(&o.createTable, "create-table", false, "create the table and its indexes (on-demand) if missing, and wait until it is ACTIVE")
	f.IntVar(&o.concurrency, "concurrency", 8, "parallel BatchWriteItem calls")
	return cmd
}

// entityStats counts one entity's progress; written is updated from the
// writer's acknowledgement callbacks, so it counts only acknowledged items.
type entityStats struct {
	name, source       string
	rows, errs         atomic.Int64
	written            atomic.Int64
	started, lastWrite atomic.Int64 // unix nanos
}

func (s *entityStats) touch(field *atomic.Int64) {
	now := time.Now().UnixNano()
	field.Store(now)
}

func runMigration(ctx context.Context, g *globals, o runOpts) error {
	start := time.Now()
	src, err := openSource(ctx, o.mapping, o.pg)
	if err != nil {
		return err
	}
	defer src.close(ctx)
	m := src.m
	for _, r := range src.shards {
		fmt.Fprintln(g.stdout, r)
	}
	table := cmp.Or(o.table, m.Table)

	client, err := load.NewClient(ctx, load.ClientConfig{Endpoint: o.endpoint, Region: o.region, Concurrency: o.concurrency})
	if err != nil {
		return err
	}
	cfg := load.Config{
		Table:        table,
		PartitionKey: m.PartitionKey,
		SortKey:      m.SortKey,
		Indexes:      src.indexes(),
		Concurrency:  o.concurrency,
		Logger:       g.logger,
	}
	if err := prepareTarget(ctx, client, cfg, o.createTable); err != nil {
		return err
	}
	w, err := load.NewWriter(client, cfg)
	if err != nil {
		return err
	}

	stats := map[string]*entityStats{}
	var order []*entityStats
	for _, s := range src.plan.Sources {
		for _, e := range m.Entities {
			if e.Schema+"."+e.From == s.Name {
				es := &entityStats{name: e.Name, source: s.Name}
				stats[e.Name] = es
				order = append(order, es)
			}
		}
	}

	grp, gctx := errgroup.WithContext(ctx)
	items := make(chan load.Item, 4*25*o.concurrency)
	grp.Go(func() error {
		defer close(items)
		return produce(gctx, src, stats, items)
	})
	var ls load.Stats
	grp.Go(func() error {
		var err error
		ls, err = w.Write(gctx, items)
		return err
	})
	err = grp.Wait()
	printSummary(g.stdout, order, ls, time.Since(start))
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return interruptedError{fmt.Errorf("run interrupted: %w", err)}
		}
		return err
	}
	return nil
}

// produce transforms every source row and sends the items to the writer.
func produce(ctx context.Context, src *source, stats map[string]*entityStats, out chan<- load.Item) error {
	current := ""
	return src.walk(ctx, nil, func(s *transform.Source, row extract.Row, items []transform.Item, rowErrs []*transform.RowError) error {
		if s.Name != current {
			current = s.Name
			for _, es := range stats {
				if es.source == s.Name {
					es.touch(&es.started)
				}
			}
		}
		for _, es := range stats {
			if es.source == s.Name {
				es.rows.Add(1)
			}
		}
		if len(rowErrs) > 0 {
			for _, re := range rowErrs {
				stats[re.Entity].errs.Add(1)
			}
			return rowErrs[0]
		}
		for _, it := range items {
			es := stats[it.Entity]
			li := load.Item{
				Attrs:  it.Attrs,
				Origin: load.Origin{Entity: it.Entity, Table: it.Table, SourceKey: it.SourceKey},
				Ack: func() {
					es.written.Add(1)
					es.touch(&es.lastWrite)
				},
			}
			select {
			case out <- li:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
}

var summaryMu sync.Mutex

func printSummary(w io.Writer, order []*entityStats, ls load.Stats, total time.Duration) {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ENTITY\tSOURCE\tROWS READ\tITEMS WRITTEN\tERRORS\tRETRIES\tTHROTTLED\tWCU\tSECONDS\t")
	var rows, written, errs int64
	for _, s := range order {
		secs := 0.0
		if st, lw := s.started.Load(), s.lastWrite.Load(); st > 0 && lw > st {
			secs = time.Duration(lw - st).Seconds()
		}
		es := ls.Entities[s.name]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t\n", s.name, s.source, s.rows.Load(), s.written.Load(), s.errs.Load(), es.Retries, es.Throttled, es.WCU, secs)
		rows += s.rows.Load()
		written += s.written.Load()
		errs += s.errs.Load()
	}
	fmt.Fprintf(tw, "TOTAL\t\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t\n", rows, written, errs, ls.Total.Retries, ls.Total.Throttled, ls.Total.WCU, total.Seconds())
	tw.Flush()
}
