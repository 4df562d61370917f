// Command migrate moves a normalized PostgreSQL database into an Amazon
// DynamoDB single-table design, driven by a declarative mapping file.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)

	// First SIGINT/SIGTERM cancels ctx so the pipeline can drain and
	// checkpoint (execute says so, in the log's format); a second one
	// exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(interruptSignal{sig})
		<-sigs
		os.Exit(exitInterrupted)
	}()

	paceGC(ctx)
	return execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// interruptSignal is the cause of a context a signal cancelled.
type interruptSignal struct{ sig os.Signal }

func (e interruptSignal) Error() string { return "interrupted by " + e.sig.String() }
