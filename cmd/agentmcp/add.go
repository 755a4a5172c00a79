package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
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
  agentmcp add [flags] NAME -- COMMAND [ARGS...]

Adds the MCP server at URL to the agent under the display name NAME,
connects to it and lists what it offers; the agent keeps it across restarts.
Adding the same NAME and URL again changes nothing; NAME with another URL is
refused (see --replace). Prints the server's id
and state; a server that wants OAuth prints the URL to authorize at (or use
the dashboard's Authorize button).

With -- COMMAND, the server is a stdio server: a program the agent runs
(the one agentmcp serve runs, in serve's environment plus --env) and speaks
to over its stdin and stdout. It is started when its agent wakes and
stopped when it hibernates (a restart and a handshake at each wake:
--keep-awake avoids them), restarted with backoff when it exits, and killed
with serve, even by kill -9 (on Linux with every process it started). The same NAME, COMMAND, ARGS and --cwd is the same server. Add
stdio servers with --db (or to a serve started with --allow-stdio-servers,
which the API otherwise refuses). The command and its arguments are shown
(keep secrets in --env); --env values are stored like header values and
never shown, only their names.

Flags:
  --id ID          a stable server id (normalised: lower case, [a-z0-9_-]);
                   the default is NAME, normalised (with -2, -3, ... when
                   another server has that id)
  --keep-if-unreachable
                   keep the server when it cannot be reached now: stored,
                   and retried in the background. Without it a server whose
                   first connection fails is not saved. A URL that answers
                   404, 405 or 501 (no MCP endpoint there) is never saved
  --replace        replace the server that already has NAME (with another
                   URL or command); without it such an add is refused
  --transport T    auto (default), streamable-http or sse
  --header 'K: V'  an HTTP header for every request, e.g.
                   --header 'Authorization: Bearer TOKEN'. Repeatable. Values
                   are stored (encrypted when AGENTMCP_SECRET_KEY is set) and
                   never printed.
  --env K=V        an environment variable of a stdio server. Repeatable.
  --cwd DIR        the working directory of a stdio server (made absolute;
                   default: serve's)
  --keep-awake     keep the agent awake while it has this server: agentmcp
                   serve wakes it at start and never hibernates it, so that
                   it hears the server's list_changed notifications and
                   requests (an agent otherwise sleeps when idle). Adding an
                   existing server with --keep-awake marks it.

Examples:
  agentmcp add github https://api.example.com/mcp --id github
  agentmcp add --db ./agentmcp.db docs https://docs.example.com/mcp
  agentmcp add --db ./agentmcp.db --env GITHUB_TOKEN=... github -- \
      npx -y @modelcontextprotocol/server-github

` + targetFlagsUsage

func runAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("add")
	var tf targetFlags
	tf.register(fs)
	var id, transport string
	var headers, envs rawHeaders
	var keepAwake, keepUnreachable, replace bool
	var cwd string
	fs.BoolVar(&keepUnreachable, "keep-if-unreachable", false, "")
	fs.BoolVar(&replace, "replace", false, "")
	fs.StringVar(&id, "id", "", "")
	fs.Var(&envs, "env", "")
	fs.StringVar(&cwd, "cwd", "", "")
	fs.BoolVar(&keepAwake, "keep-awake", false, "")
	fs.StringVar(&transport, "transport", string(mcpclient.TransportAuto), "")
	fs.Var(&headers, "header", "")
	positional, command, hasCommand, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	pol := addPolicy{keepUnreachable: keepUnreachable, replace: replace}
	if hasCommand {
		return addCommandServer(ctx, tf, positional, command, envs, cwd, id, keepAwake, pol, headers, stdout, stderr)
	}
	if len(envs) > 0 || cwd != "" {
		return usageErrorf("--env and --cwd are for a stdio server (NAME -- COMMAND ARGS...)")
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
	req := api.AddRequest{Name: name, URL: rawURL, ID: id, Transport: &api.TransportRequest{Type: transport}, KeepAwake: keepAwake,
		KeepIfUnreachable: pol.keepUnreachable, Replace: pol.replace}
	if len(h) > 0 {
		req.Transport.Headers = map[string]string{}
		for k := range h {
			req.Transport.Headers[k] = h.Get(k)
		}
	}
	spec := &serverSpec{display: redactedURL(u), secrets: append(secrets, urlSecrets(rawURL, u)...), options: mcpclient.ServerOptions{URL: rawURL}}

	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.access = handing
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
		if pol.keepUnreachable {
			handOver(ctx, &tf, stdout) // kept
		}
		if msg, ok := failureText("adding", name, b, err); ok {
			return spec.redact(errors.New(msg))
		}
		return spec.redact(pol.explain(err))
	}
	if err := printAdded(stdout, name, res.ID, string(res.State), res.AuthURL); err != nil {
		return err
	}
	handOver(ctx, &tf, stdout)
	return nil
}

func printAdded(w io.Writer, name, id, state, authURL string) error {
	if state == string(mcpclient.StateAuthenticating) {
		_, err := fmt.Fprintf(w, "added %s as %s: authorization needed; open %s\n", oneLine(name), id, authURL)
		return err
	}
	_, err := fmt.Fprintf(w, "added %s as %s: %s\n", oneLine(name), id, state)
	return err
}

// addCommandServer is agentmcp add NAME -- COMMAND ARGS...
func addCommandServer(ctx context.Context, tf targetFlags, positional, command []string, envs []string, cwd, id string, keepAwake bool, pol addPolicy, headers []string, stdout, stderr io.Writer) error {
	switch {
	case len(positional) != 1:
		return usageErrorf("want NAME before -- COMMAND, got %d arguments", len(positional))
	case len(command) == 0:
		return usageErrorf("want a COMMAND after --")
	case len(headers) > 0:
		return usageErrorf("--header is for a URL server; give a stdio server --env")
	}
	req := api.AddRequest{Name: positional[0], ID: id, Command: command[0], Args: command[1:], KeepAwake: keepAwake,
		KeepIfUnreachable: pol.keepUnreachable, Replace: pol.replace}
	var secrets []string
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			// Never quoted: it may be a secret.
			return usageErrorf("an --env value is not NAME=VALUE")
		}
		if req.Env == nil {
			req.Env = map[string]string{}
		}
		req.Env[k] = v
		if v != "" {
			secrets = append(secrets, v)
		}
	}
	if cwd != "" {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return err
		}
		req.Cwd = abs
	}
	spec := &serverSpec{display: fmt.Sprintf("command %q", command[0]), secrets: secrets}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.access = handing
	b, err := tf.open(ctx, stderr, background)
	if err != nil {
		return spec.redact(err)
	}
	defer b.close()
	stop := startProgress(stderr, fmt.Sprintf("adding %s: starting %s", req.Name, spec.display))
	res, err := b.add(ctx, req)
	stop()
	if err != nil {
		if ierr := interrupted(ctx); ierr != nil {
			return ierr
		}
		if pol.keepUnreachable {
			handOver(ctx, &tf, stdout) // kept
		}
		if msg, ok := failureText("adding", req.Name, b, err); ok {
			return spec.redact(errors.New(msg))
		}
		return spec.redact(pol.explain(err))
	}
	if err := printAdded(stdout, req.Name, res.ID, string(res.State), res.AuthURL); err != nil {
		return err
	}
	handOver(ctx, &tf, stdout)
	return nil
}

// addPolicy is what add does with a server that fails or whose name is
// taken (--keep-if-unreachable, --replace).
type addPolicy struct {
	keepUnreachable, replace bool
}

// explain adds to an add's error the way to another outcome: the
// flag, or the command, that changes it.
func (p addPolicy) explain(err error) error {
	var (
		named *agent.NameInUseError
		aerr  *api.APIError
	)
	switch {
	case errors.As(err, &named):
		return fmt.Errorf("%w: remove it first (agentmcp rm %s) or add --replace to replace it", err, named.ID)
	case errors.As(err, &aerr) && aerr.Code == api.CodeNameInUse:
		return fmt.Errorf("%s: remove it first (agentmcp rm %s) or add --replace to replace it", aerr.Message, aerr.ServerID)
	case errors.Is(err, agent.ErrNotMCPEndpoint), errors.As(err, &aerr) && aerr.Code == api.CodeNotMCPEndpoint:
		if aerr != nil {
			return errors.New(aerr.Message)
		}
		return err
	case errors.Is(err, agent.ErrNotSaved), errors.As(err, &aerr) && aerr.Code == api.CodeConnectFailed && aerr.ServerID == "":
		msg := err.Error()
		if aerr != nil {
			msg = aerr.Message
		}
		return fmt.Errorf("%s (add --keep-if-unreachable to keep it and retry it in the background)", msg)
	case errors.As(err, &aerr):
		return errors.New(aerr.Message)
	}
	return err
}
