package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
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
	return runOnServer(ctx, "rm", args, stderr, func(ctx context.Context, b backend, st agent.MCPServersState, id string) error {
		if err := b.remove(ctx, id); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "removed %s (%s)\n", id, oneLine(strings.TrimSpace(st.Servers[id].Name)))
		return err
	})
}
