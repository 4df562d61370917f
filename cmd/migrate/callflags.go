package main

import (
	"errors"

	"github.com/pgdynamo/migrate/load"
)

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
