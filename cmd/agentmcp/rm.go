package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func rmCommand() command {
	return command{
		name:    "rm",
		summary: "remove an MCP server from an agent",
		usage: `Usage:
  agentmcp rm [flags] SERVER

Removes the server (an id, or a name only one server has) from the agent:
its connection is closed and it is forgotten with its OAuth tokens.

` + targetFlagsUsage,
		run: runRm,
	}
}

func runRm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rm")
	var tf targetFlags
	tf.register(fs)
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageErrorf("want one SERVER (an id or a name), got %d arguments", len(positional))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	b, err := tf.open(ctx, stderr, false)
	if err != nil {
		return err
	}
	defer b.close()
	st, err := b.state(ctx)
	if err != nil {
		return err
	}
	id, err := resolveServer(st, positional[0])
	if err != nil {
		return err
	}
	if err := b.remove(ctx, id); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "removed %s (%s)\n", id, oneLine(strings.TrimSpace(st.Servers[id].Name)))
	return err
}
