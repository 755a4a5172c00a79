package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server"
)

func addCommand() command {
	return command{
		name:    "add",
		summary: "add an MCP server to an agent, connect to it and keep it",
		usage:   addUsage,
		run:     runAdd,
	}
}

const addUsage = `Usage:
  agentmcp add [flags] NAME URL

Adds the MCP server at URL to the agent under the display name NAME,
connects to it and lists what it offers; the agent keeps it across restarts.
Adding the same NAME and URL again changes nothing. Prints the server's id
and state; a server that wants OAuth prints the URL to authorize at (or use
the dashboard's Authorize button).

Flags:
  --id ID          a stable server id (normalised: lower case, [a-z0-9_-]);
                   the default is a random one
  --transport T    auto (default), streamable-http or sse
  --header 'K: V'  an HTTP header for every request, e.g.
                   --header 'Authorization: Bearer TOKEN'. Repeatable. Values
                   are stored (encrypted when AGENTMCP_SECRET_KEY is set) and
                   never printed.
  --keep-awake     keep the agent awake while it has this server: agentmcp
                   serve wakes it at start and never hibernates it, so that
                   it hears the server's list_changed notifications and
                   requests (an agent otherwise sleeps when idle). Adding an
                   existing server with --keep-awake marks it.

Examples:
  agentmcp add github https://api.example.com/mcp --id github
  agentmcp add --db ./agentmcp.db docs https://docs.example.com/mcp

` + targetFlagsUsage

func runAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("add")
	var tf targetFlags
	tf.register(fs)
	var id, transport string
	var headers rawHeaders
	var keepAwake bool
	fs.StringVar(&id, "id", "", "")
	fs.BoolVar(&keepAwake, "keep-awake", false, "")
	fs.StringVar(&transport, "transport", string(mcpclient.TransportAuto), "")
	fs.Var(&headers, "header", "")
	positional, _, hasCommand, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if hasCommand {
		return usageErrorf("agents keep URL servers only; a command after -- (stdio) cannot be added")
	}
	if len(positional) != 2 {
		return usageErrorf("want NAME and URL, got %d arguments", len(positional))
	}
	name, rawURL := positional[0], positional[1]
	u, err := checkServerURL(rawURL, nil)
	if err != nil {
		return err
	}
	switch mcpclient.TransportType(transport) {
	case mcpclient.TransportAuto, mcpclient.TransportStreamableHTTP, mcpclient.TransportSSE:
	default:
		return usageErrorf("unknown transport %q (want auto, streamable-http or sse)", transport)
	}
	h, secrets, err := parseHeaders(headers)
	if err != nil {
		return err
	}
	req := server.AddRequest{Name: name, URL: rawURL, ID: id, Transport: &server.TransportRequest{Type: transport}, KeepAwake: keepAwake}
	if len(h) > 0 {
		req.Transport.Headers = map[string]string{}
		for k := range h {
			req.Transport.Headers[k] = h.Get(k)
		}
	}
	spec := &serverSpec{display: redactedURL(u), secrets: append(secrets, urlSecrets(rawURL, u)...), options: mcpclient.ServerOptions{URL: rawURL}}

	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	b, err := tf.open(ctx, stderr, background)
	if err != nil {
		return spec.redact(err)
	}
	defer b.close()
	stop := startProgress(stderr, fmt.Sprintf("adding %s: connecting to %s", name, spec.display))
	res, err := b.add(ctx, req)
	stop()
	if err != nil {
		if ierr := interrupted(ctx); ierr != nil {
			return ierr
		}
		return spec.redact(err)
	}
	return printAdded(stdout, name, res.ID, string(res.State), res.AuthURL)
}

func printAdded(w io.Writer, name, id, state, authURL string) error {
	if state == string(mcpclient.StateAuthenticating) {
		_, err := fmt.Fprintf(w, "added %s as %s: authorization needed; open %s\n", oneLine(name), id, authURL)
		return err
	}
	_, err := fmt.Fprintf(w, "added %s as %s: %s\n", oneLine(name), id, state)
	return err
}
