// Command migrate moves a normalized PostgreSQL database into an Amazon
// DynamoDB single-table design, driven by a declarative mapping file.
package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/pgdynamo/migrate/internal/gcpace"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// First SIGINT/SIGTERM cancels ctx so the pipeline can drain and
	// checkpoint (execute says so, in the log's format); a second one
	// exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		// The engine tells an interruption by context.Canceled: the
		// signal itself goes beside the context, for the notice.
		interruptedBy.Store(sig.String())
		cancel()
		<-sigs
		os.Exit(exitInterrupted)
	}()

	gcpace.Start(ctx)
	return execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// interruptedBy names the signal that cancelled the command's context.
var interruptedBy atomic.Value
