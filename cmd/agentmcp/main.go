package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default handling, so that a
	// second Ctrl-C ends the process even if cleaning up hangs.
	context.AfterFunc(ctx, stop)
	err := run(withStdin(ctx, os.Stdin), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}
