package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/agentmcp/agentmcp/mcpclient"
)

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the version",
		usage: `Usage:
  agentmcp version

Prints the version of agentmcp and of the Go toolchain that built it.
`,
		run: runVersion,
	}
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	positional, _, hasCommand, err := parseArgs(newFlagSet("version"), args)
	if err != nil {
		return err
	}
	if len(positional) > 0 || hasCommand {
		return usageErrorf("takes no arguments")
	}
	_, err = fmt.Fprintf(stdout, "agentmcp %s %s %s/%s\n", mcpclient.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
