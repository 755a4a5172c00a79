package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

func exposeCommand() command {
	return command{
		name:    "expose",
		summary: "show or set which servers and tools an agent's MCP endpoint exposes",
		usage: `Usage:
  agentmcp expose [flags]
  agentmcp expose [flags] --allow PATTERN ... --deny PATTERN ...
  agentmcp expose [flags] --clear

Every agent is also an MCP server, at /agents/{class}/{name}/mcp of agentmcp
serve (see agentmcp mcp-config). Its exposure rules choose what that endpoint
shows of the agent's servers. Without --allow, --deny or --clear, expose
prints the rules; with them, it replaces them all (give the whole set) and
prints the rules now in force. Connected clients are told (list_changed).

A PATTERN is SERVER (a server id: its tools, prompts and resources) or
SERVER/TOOL (tools by their MCP name), with * for any run of characters and
? for one. Deny wins: a tool is exposed when no --deny pattern matches it
and, if there are --allow patterns, one does. A server's prompts and
resources are exposed when no SERVER-only --deny pattern matches it and, if
there are --allow patterns, one names it. No rule exposes everything.

Flags:
  --allow PATTERN  expose only what these patterns match. Repeatable.
  --deny PATTERN   never expose what this matches. Repeatable.
  --clear          remove every rule: expose everything
  --json           print the rules as JSON, {"allow": [...], "deny": [...]}

` + targetFlagsUsage + `
Examples:
  agentmcp expose --deny '*/delete_*'
  agentmcp expose --allow docs --allow 'github/search_*'
  agentmcp expose --agent support/alice --deny scratch
  agentmcp expose --clear
`,
		run: runExpose,
	}
}

func runExpose(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("expose")
	var tf targetFlags
	tf.register(fs)
	var allow, deny rawHeaders // repeatable string flags
	var clear, asJSON bool
	fs.Var(&allow, "allow", "")
	fs.Var(&deny, "deny", "")
	fs.BoolVar(&clear, "clear", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s (patterns go after --allow or --deny)", quoteArg(positional[0]))
	}
	set := clear || len(allow) > 0 || len(deny) > 0
	if clear && (len(allow) > 0 || len(deny) > 0) {
		return usageErrorf("give --clear, or --allow and --deny, not both")
	}
	want := agent.Exposure{Allow: append([]string{}, allow...), Deny: append([]string{}, deny...)}
	if err := want.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	if !set {
		tf.access = reading
	}
	b, err := tf.open(ctx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	var e agent.Exposure
	if set {
		e, err = b.setExposure(ctx, want)
	} else {
		e, err = b.exposure(ctx)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		}{append([]string{}, e.Allow...), append([]string{}, e.Deny...)})
	}
	return printExposure(stdout, tf.agent, e)
}

// printExposure prints the rules one a line, "allow PATTERN" then "deny
// PATTERN", or says that everything is exposed.
func printExposure(w io.Writer, ref string, e agent.Exposure) error {
	if e.IsZero() {
		_, err := fmt.Fprintf(w, "agent %s exposes all its servers and tools (no rules)\n", ref)
		return err
	}
	for _, p := range e.Allow {
		if _, err := fmt.Fprintf(w, "allow %s\n", oneLine(p)); err != nil {
			return err
		}
	}
	for _, p := range e.Deny {
		if _, err := fmt.Fprintf(w, "deny  %s\n", oneLine(p)); err != nil {
			return err
		}
	}
	return nil
}

func (r *remote) exposure(ctx context.Context) (agent.Exposure, error) {
	e, err := r.c.Exposure(ctx)
	return agent.Exposure(e), r.explain(err)
}

func (r *remote) setExposure(ctx context.Context, e agent.Exposure) (agent.Exposure, error) {
	set, err := r.c.SetExposure(ctx, api.Exposure(e))
	return agent.Exposure(set), r.explain(err)
}

func (d *direct) exposure(ctx context.Context) (agent.Exposure, error) { return d.a.Exposure(), nil }

func (d *direct) setExposure(ctx context.Context, e agent.Exposure) (agent.Exposure, error) {
	if err := d.a.SetExposure(ctx, e); err != nil {
		return agent.Exposure{}, err
	}
	return d.a.Exposure(), nil
}
