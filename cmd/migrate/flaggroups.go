package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

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

// targetFlags name the DynamoDB table and how to reach it: --endpoint,
// --region and the calls' bounds (registerCalls) set dynamo.
type targetFlags struct {
	table  string
	dynamo load.ClientConfig
}

const (
	tableUsage    = "target DynamoDB table (default: the mapping's table)"
	endpointUsage = "DynamoDB endpoint URL (default: AWS configuration, e.g. $AWS_ENDPOINT_URL_DYNAMODB)"
	regionUsage   = "AWS region (default: AWS configuration, e.g. $AWS_REGION)"
)

// register adds --table (with its help, tableHelp, or the usual one when
// "") and --endpoint and --region.
func (o *targetFlags) register(f *pflag.FlagSet, tableHelp string) {
	f.StringVar(&o.table, "table", "", cmp.Or(tableHelp, tableUsage))
	f.StringVar(&o.dynamo.Endpoint, "endpoint", "", endpointUsage)
	f.StringVar(&o.dynamo.Region, "region", "", regionUsage)
}

const callTimeoutUsage = "how long one DynamoDB call may go without a complete answer before it is sent again " +
	"(real DynamoDB answers in milliseconds; raise it for a local engine on a busy machine, e.g. 1m)"

// registerCalls adds --call-timeout and, withElapsed, --max-batch-elapsed
// for the commands that only read: how long one call may keep retrying
// (run and sync have their own, which bounds a batch and each call alike).
func (o *targetFlags) registerCalls(f *pflag.FlagSet, withElapsed bool) {
	f.DurationVar(&o.dynamo.CallTimeout, "call-timeout", load.DefaultCallTimeout, callTimeoutUsage)
	if withElapsed {
		f.DurationVar(&o.dynamo.MaxCallElapsed, "max-batch-elapsed", 0, fmt.Sprintf(
			"how long one DynamoDB call (a Scan or Query page, a batch of gets) may keep retrying timeouts, 5xx and throttling before the command fails (0 = %v)", load.DefaultMaxBatchElapsed))
	}
}

// validate checks the DynamoDB client's flags and, without --endpoint,
// the endpoint the SDK would take from the environment. (--table is the
// verb's Config's.)
func (o targetFlags) validate(cmd string) error {
	c := o.dynamo
	// The flag shows its default: 0 there is a mistake, not a request for
	// the default.
	c.CallTimeout = cmp.Or(c.CallTimeout, -1)
	return flagProblem(cmd, c.Validate())
}

// client opens the DynamoDB client of a command making up to concurrency
// calls at once (0: the SDK's default connection pool).
func (o targetFlags) client(ctx context.Context, concurrency int, logger *slog.Logger) (*dynamodb.Client, error) {
	c := o.dynamo
	c.Concurrency, c.Logger = concurrency, logger
	return load.NewClient(ctx, c)
}

// registerWriter adds the BatchWriteItem writer's flags of run and sync,
// setting w; verb says who stops when a batch keeps failing ("the run
// stops with a resumable checkpoint").
func (o *targetFlags) registerWriter(f *pflag.FlagSet, w *load.Config, concurrencyHelp, maxWCUHelp, minWCUHelp, verb string) {
	f.IntVar(&w.Concurrency, "concurrency", load.DefaultConcurrency, concurrencyHelp)
	f.BoolVar(&w.SDKMiddleware, "sdk-middleware", false, sdkMiddlewareUsage)
	f.Float64Var(&w.MaxWCU, "max-wcu", 0, maxWCUHelp)
	f.Float64Var(&w.MinWCU, "min-wcu", 0, minWCUHelp+fmt.Sprintf(" (0 = %d)", load.DefaultMinWCU))
	f.DurationVar(&w.MaxBatchElapsed, "max-batch-elapsed", 0, fmt.Sprintf("how long one batch may keep retrying before %s (0 = %v)", verb, load.DefaultMaxBatchElapsed))
	o.registerCalls(f, false)
}

// writer is w, the writer's configuration, with the flags' call timeout;
// checked, as the command checks it: the flag shows its default, so its
// 0 is a mistake, not a request for the engine's default.
func (o targetFlags) writer(w load.Config, checked bool) load.Config {
	w.CallTimeout = o.dynamo.CallTimeout
	if checked {
		w.Concurrency = cmp.Or(w.Concurrency, -1)
	}
	return w
}

// writerClient opens the writer's DynamoDB client: its calls retry for as
// long as a batch may.
func (o targetFlags) writerClient(ctx context.Context, w load.Config, logger *slog.Logger) (*dynamodb.Client, error) {
	o.dynamo.MaxCallElapsed = w.MaxBatchElapsed
	return o.client(ctx, w.Concurrency, logger)
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
	f.StringVar(&p.CPU, "cpuprofile", "", "write a CPU profile of the "+what+" to this file (go tool pprof)")
	f.StringVar(&p.Mem, "memprofile", "", "write a memory profile to this file at the end of the "+what+" (go tool pprof)")
}
