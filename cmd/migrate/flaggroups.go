package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/load"
)

// Flag groups: the flags several commands share, each registered and
// checked in one place so that a flag means and says the same everywhere.

const pgUsage = "source database URL (default $MIGRATE_PG_URL, then $DATABASE_URL)"

// errNoPG is the usage error of a command run without a source URL.
func errNoPG(cmd string) error {
	return usagef("%s: --pg is required (or set MIGRATE_PG_URL or DATABASE_URL)", cmd)
}

// sourceFlags are the mapping file and the source database.
type sourceFlags struct {
	mapping, pg string
	pgFrom      string // where pg came from: "flag" or the environment variable's name
}

func (o *sourceFlags) register(cmd *cobra.Command) {
	addMappingFlag(cmd, &o.mapping)
	cmd.Flags().StringVar(&o.pg, "pg", "", pgUsage)
}

// resolve takes the mapping from the argument or the environment, and the
// URL from the environment when --pg is not given.
func (o *sourceFlags) resolve(cmd *cobra.Command, args []string) error {
	if err := resolveMapping(cmd, args, &o.mapping); err != nil {
		return err
	}
	o.pg, o.pgFrom = pgURLFrom(o.pg)
	return nil
}

// targetFlags name the DynamoDB table and how to reach it.
type targetFlags struct {
	table, endpoint, region string
}

const (
	tableUsage    = "target DynamoDB table (default: the mapping's table)"
	endpointUsage = "DynamoDB endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_DYNAMODB)"
	regionUsage   = "AWS region (default: AWS configuration, e.g. $AWS_REGION)"
)

// register adds --table (with its help, tableHelp, or the usual one when
// "") and --endpoint and --region.
func (o *targetFlags) register(f *pflag.FlagSet, tableHelp string) {
	if tableHelp == "" {
		tableHelp = tableUsage
	}
	f.StringVar(&o.table, "table", "", tableHelp)
	f.StringVar(&o.endpoint, "endpoint", "", endpointUsage)
	f.StringVar(&o.region, "region", "", regionUsage)
}

// validate checks the DynamoDB client's flags, calls among them, and
// without --endpoint the endpoint the SDK would take from the
// environment. (--table is the verb's Config's.)
func (o targetFlags) validate(cmd string, calls callFlags) error {
	return flagProblem(cmd, calls.problems(o.endpoint, o.region))
}

// client opens the DynamoDB client of a command making up to concurrency
// calls at once (0: the SDK's default connection pool).
func (o targetFlags) client(ctx context.Context, calls callFlags, concurrency int, logger *slog.Logger) (*dynamodb.Client, error) {
	return load.NewClient(ctx, calls.client(o.endpoint, o.region, concurrency, logger))
}

// writerFlags are the BatchWriteItem writer's flags of run and sync.
type writerFlags struct {
	concurrency     int
	sdkCalls        bool
	maxWCU, minWCU  float64
	maxBatchElapsed time.Duration
	calls           callFlags // --call-timeout
}

// register adds the writer's flags; verb says who stops when a batch
// keeps failing ("the run stops with a resumable checkpoint").
func (o *writerFlags) register(f *pflag.FlagSet, concurrencyHelp, maxWCUHelp, minWCUHelp, verb string) {
	f.IntVar(&o.concurrency, "concurrency", load.DefaultConcurrency, concurrencyHelp)
	f.BoolVar(&o.sdkCalls, "sdk-middleware", false, sdkMiddlewareUsage)
	f.Float64Var(&o.maxWCU, "max-wcu", 0, maxWCUHelp)
	f.Float64Var(&o.minWCU, "min-wcu", 0, minWCUHelp+fmt.Sprintf(" (0 = %d)", load.DefaultMinWCU))
	f.DurationVar(&o.maxBatchElapsed, "max-batch-elapsed", 0, fmt.Sprintf("how long one batch may keep retrying before %s (0 = %v)", verb, load.DefaultMaxBatchElapsed))
	o.calls.register(f, false)
}

// checked is w, the writer's configuration for these flags, as the
// command checks it: the flag shows its default, so its 0 is a mistake,
// not a request for the engine's default.
func (o writerFlags) checked(w load.Config) load.Config {
	w.Concurrency = cmp.Or(w.Concurrency, -1)
	return w
}

// config is the writer's configuration for these flags.
func (o writerFlags) config() load.Config {
	return load.Config{
		Concurrency:     o.concurrency,
		SDKMiddleware:   o.sdkCalls,
		MaxWCU:          o.maxWCU,
		MinWCU:          o.minWCU,
		MaxBatchElapsed: o.maxBatchElapsed,
		CallTimeout:     o.calls.callTimeout,
	}
}

// client opens the writer's DynamoDB client: its calls retry for as long
// as a batch may.
func (o writerFlags) client(ctx context.Context, t targetFlags, logger *slog.Logger) (*dynamodb.Client, error) {
	calls := o.calls
	calls.maxElapsed = o.maxBatchElapsed
	return t.client(ctx, calls, o.concurrency, logger)
}

// outputFlags are the long commands' --quiet and --summary-json.
type outputFlags struct {
	quiet       bool
	summaryJSON string
}

func (o *outputFlags) register(f *pflag.FlagSet, quietHelp, summaryHelp string) {
	f.BoolVar(&o.quiet, "quiet", false, quietHelp)
	f.StringVar(&o.summaryJSON, "summary-json", "", summaryHelp)
}

// register adds --cpuprofile and --memprofile; what is "run" or "export".
func (p *profiles) register(f *pflag.FlagSet, what string) {
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the "+what+" to this file (go tool pprof)")
	f.StringVar(&p.mem, "memprofile", "", "write a memory profile to this file at the end of the "+what+" (go tool pprof)")
}
