// Command assistant is the assistant service: one binary that serves the
// HTTP API (serve), prepares its database (migrate) and reports its version.
// Run it with --help for the subcommands; docs/operations.md lists every
// setting.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "assistant:", err)
		os.Exit(exitCode(err))
	}
}
