package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentmcp/agentmcp/api"
)

func getCommand() command {
	return command{
		name:    "get",
		summary: "show one MCP server of an agent: state, capabilities, instructions, session",
		usage: `Usage:
  agentmcp get [flags] SERVER

Shows one server of the agent (its id, or a name only one server has):
its name and id, state, transport and protocol version, URL or command,
the name and version it gave in its handshake, its session (live,
resumable: resumed without a handshake at the next connection, or none),
how many tools it lists, its capabilities, what failed (and the URL to
sign in at), and its instructions. Through a running agentmcp serve this
is GET /agents/{class}/{name}/servers/{id}, what the dashboard's server
panel shows; with --db or --postgres the agent's servers are connected
first, as for tools.

Flags:
  --json           print it as JSON (the API's ServerState)

` + targetFlagsUsage,
		run: runGet,
	}
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("get")
	var tf targetFlags
	tf.register(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageErrorf("want one SERVER (an id or a name), got %d arguments", len(positional))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	b, st, id, err := tf.openServer(ctx, stderr, connected, positional[0])
	if err != nil {
		return err
	}
	defer b.close()
	if r, ok := b.(*remote); ok {
		r.settle(ctx, st) // a woken agent's servers are connecting
	}
	srv, err := b.server(ctx, id)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, srv)
	}
	return printServer(stdout, srv)
}

// printServer writes the one-server view.
func printServer(w io.Writer, s api.ServerState) error {
	var b strings.Builder
	title := oneLine(s.Name)
	if title != s.ID {
		title += " (id " + s.ID + ")"
	}
	b.WriteString(title + "\n")
	field := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "  %-13s %s\n", label+":", value)
		}
	}
	field("state", s.State)
	transport := s.Transport
	if s.ProtocolVersion != "" {
		transport += ", protocol " + s.ProtocolVersion
	}
	field("transport", transport)
	if len(s.Command) > 0 {
		field("command", oneLine(strings.Join(s.Command, " ")))
		field("cwd", oneLine(s.Cwd))
		if len(s.EnvNames) > 0 {
			field("env", strings.Join(s.EnvNames, ", ")+" (values not shown)")
		}
	} else {
		field("url", oneLine(s.ServerURL))
	}
	if si := s.ServerInfo; si != nil {
		field("server", oneLine(strings.TrimSpace(si.Name+" "+si.Version)))
	}
	field("session", s.Session)
	field("tools", fmt.Sprint(s.ToolCount))
	field("capabilities", capabilities(s.Capabilities))
	if s.KeepAwake {
		field("keep-awake", "yes")
	}
	if s.ErrorSummary != nil {
		field("failed", oneLine(*s.ErrorSummary))
	}
	if s.Error != nil {
		field("error", oneLine(*s.Error))
	}
	if s.AuthURL != nil {
		field("sign in at", oneLine(*s.AuthURL))
	}
	if s.Instructions != nil && strings.TrimSpace(*s.Instructions) != "" {
		b.WriteString("  instructions:\n")
		for _, line := range strings.Split(strings.TrimSpace(*s.Instructions), "\n") {
			b.WriteString("    " + oneLine(line) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// capabilities lists what a server offers, with each capability's
// options: "prompts (listChanged), tools".
func capabilities(raw json.RawMessage) string {
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return ""
	}
	var out []string
	for name, v := range caps {
		var opts map[string]json.RawMessage
		json.Unmarshal(v, &opts)
		var set []string
		for k, o := range opts {
			if string(o) != "false" && string(o) != "null" {
				set = append(set, k)
			}
		}
		slices.Sort(set)
		if len(set) > 0 {
			name += " (" + strings.Join(set, ", ") + ")"
		}
		out = append(out, oneLine(name))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
