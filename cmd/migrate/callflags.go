package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/load"
)

// callFlags bound the DynamoDB calls of a command: each attempt
// (--call-timeout) and, for the commands that only read, how long one
// call may keep retrying (--max-batch-elapsed; run and sync have their
// own, which bounds a batch and each of their calls alike).
type callFlags struct {
	callTimeout time.Duration
	maxElapsed  time.Duration
}

const callTimeoutUsage = "how long one DynamoDB call may go without a complete answer before it is sent again " +
	"(real DynamoDB answers in milliseconds; raise it for a local engine on a busy machine, e.g. 1m)"

// register adds --call-timeout and, withElapsed, --max-batch-elapsed.
func (c *callFlags) register(f *pflag.FlagSet, withElapsed bool) {
	f.DurationVar(&c.callTimeout, "call-timeout", load.DefaultCallTimeout, callTimeoutUsage)
	if withElapsed {
		f.DurationVar(&c.maxElapsed, "max-batch-elapsed", 0, fmt.Sprintf(
			"how long one DynamoDB call (a Scan or Query page, a batch of gets) may keep retrying timeouts, 5xx and throttling before the command fails (0 = %v)", load.DefaultMaxBatchElapsed))
	}
}

// problems are the client configuration's problems with these flags and
// endpoint and region.
func (c callFlags) problems(endpoint, region string) error {
	cc := c.client(endpoint, region, 0, nil)
	if cc.CallTimeout == 0 {
		// The flag shows its default: 0 there is a mistake, not a
		// request for the default.
		cc.CallTimeout = -1
	}
	return cc.Validate()
}

// client is the configuration of the command's DynamoDB client.
func (c callFlags) client(endpoint, region string, concurrency int, logger *slog.Logger) load.ClientConfig {
	return load.ClientConfig{Endpoint: endpoint, Region: region, Concurrency: concurrency, Logger: logger,
		CallTimeout: c.callTimeout, MaxCallElapsed: c.maxElapsed}
}

// retryHint is what to do about a command that gave up retrying DynamoDB
// calls, in flags; "" for other errors.
func retryHint(err error) string {
	if !errors.Is(err, load.ErrBatchTimeout) && !errors.Is(err, load.ErrRetryLimit) {
		return ""
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return "the last calls got no answer within --call-timeout: if DynamoDB (or a local engine on a busy machine) is this slow, " +
			"raise --call-timeout and --max-batch-elapsed"
	}
	return "DynamoDB kept refusing or failing the calls for --max-batch-elapsed: raise it, or lower --concurrency " +
		"(and --max-wcu when writing) if it kept throttling"
}
