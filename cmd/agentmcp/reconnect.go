package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
)

func reconnectCommand() command {
	return command{
		name:    "reconnect",
		summary: "connect to an agent's MCP server again now",
		usage: `Usage:
  agentmcp reconnect [flags] SERVER

Connects again, now, to the server (an id, or a name only one server has)
and lists what it offers: for a server that failed, without waiting for
the next retry in the background. Its OAuth grant is kept. Prints the
server's new state; a server that wants sign-in prints the URL to open.

` + targetFlagsUsage,
		run: runReconnect,
	}
}

func runReconnect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runOnServer(ctx, "reconnect", args, stderr, func(ctx context.Context, b backend, st agent.MCPServersState, id string) error {
		res, err := b.reconnect(ctx, id)
		if err != nil {
			if ierr := interrupted(ctx); ierr != nil {
				return ierr
			}
			if msg, ok := failureText("reconnecting", st.Servers[id].Name, b, err); ok {
				return errors.New(msg)
			}
			return fmt.Errorf("reconnecting %s: %s (%v)", id, explain.Summary(err), err)
		}
		name := oneLine(strings.TrimSpace(st.Servers[id].Name))
		if res.State == mcpclient.StateAuthenticating && res.AuthURL != "" {
			_, err = fmt.Fprintf(stdout, "%s (%s): sign-in needed; open %s\n", id, name, res.AuthURL)
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s (%s): %s\n", id, name, res.State)
		return err
	})
}
