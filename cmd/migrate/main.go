// Command migrate moves a normalized PostgreSQL database into an Amazon
// DynamoDB single-table design, driven by a declarative mapping file.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// First SIGINT/SIGTERM cancels ctx so the pipeline can drain and
	// checkpoint; a second one exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "interrupted: finishing in-flight work (press Ctrl-C again to exit now)")
		cancel()
		<-sigs
		os.Exit(exitInterrupted)
	}()

	paceGC(ctx)
	return execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}
