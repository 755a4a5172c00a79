package main

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
)

func inspectCommand() command {
	return command{
		name:    "inspect",
		summary: "connect to a server and print what it offers, as JSON",
		usage:   inspectUsage,
		run:     runInspect,
	}
}

const inspectUsage = `Usage:
  agentmcp inspect [flags] URL
  agentmcp inspect [flags] -- COMMAND [ARG...]

Connects to the MCP server at URL, or to the stdio server that COMMAND
starts, and prints one JSON document: the server's info, the negotiated
protocol version, the transport used, the session id (if any), its
instructions and capabilities, and its tools, prompts, resources and
resource templates. It then ends the session (a server that keeps sessions
gets a DELETE), as call does.

Examples:
  agentmcp inspect https://example.com/mcp
  agentmcp inspect --header 'Authorization: Bearer TOKEN' https://example.com/mcp
  agentmcp inspect --transport sse http://localhost:3001/sse
  agentmcp inspect -- npx -y @modelcontextprotocol/server-everything
  agentmcp inspect --trace https://example.com/mcp

Flags:
` + traceUsage + `
` + connFlagsUsage

// inspectOutput is what inspect prints. Every key is always present, in
// this order; lists are [] when empty.
type inspectOutput struct {
	ServerInfo        *mcp.Implementation     `json:"serverInfo"`
	ProtocolVersion   string                  `json:"protocolVersion"`
	Transport         mcpclient.TransportType `json:"transport"`
	SessionID         string                  `json:"sessionId"`
	Instructions      string                  `json:"instructions"`
	Capabilities      *mcp.ServerCapabilities `json:"capabilities"`
	Tools             []mcp.Tool              `json:"tools"`
	Prompts           []mcp.Prompt            `json:"prompts"`
	Resources         []mcp.Resource          `json:"resources"`
	ResourceTemplates []mcp.ResourceTemplate  `json:"resourceTemplates"`
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("inspect")
	var cf connFlags
	cf.register(fs)
	var traceFlag bool
	fs.BoolVar(&traceFlag, "trace", false, "")
	positional, command, hasCommand, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	spec, rest, err := cf.server(positional, command, hasCommand)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0 && hasCommand:
		return usageErrorf("unexpected argument %s: give a URL or a command after --, not both", quoteArg(rest[0]))
	case len(rest) > 0:
		return usageErrorf("unexpected argument %s after the URL", quoteArg(rest[0]))
	}

	var tr *cmdTrace
	if traceFlag {
		ctx, tr = startTrace(ctx, "agentmcp inspect")
		defer func() { tr.finish(stderr, err) }()
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	s, err := connectWith(ctx, spec, cf.timeout, nil, tr.provider())
	if err != nil {
		return err
	}
	defer s.close()
	return writeJSON(stdout, s.inspect())
}

// inspect collects what the session found.
func (s *session) inspect() *inspectOutput {
	info := s.info()
	f := mcpclient.Filter{ServerID: []string{s.id}}
	out := &inspectOutput{
		ServerInfo:        info.ServerInfo,
		ProtocolVersion:   info.ProtocolVersion,
		Transport:         info.Transport,
		SessionID:         info.SessionID,
		Instructions:      info.Instructions,
		Capabilities:      info.Capabilities,
		Tools:             []mcp.Tool{},
		Prompts:           []mcp.Prompt{},
		Resources:         []mcp.Resource{},
		ResourceTemplates: []mcp.ResourceTemplate{},
	}
	if out.ServerInfo == nil {
		out.ServerInfo = &mcp.Implementation{}
	}
	if out.Capabilities == nil {
		out.Capabilities = &mcp.ServerCapabilities{}
	}
	for _, t := range s.m.ListTools(f) {
		out.Tools = append(out.Tools, t.Tool)
	}
	for _, p := range s.m.ListPrompts(f) {
		out.Prompts = append(out.Prompts, p.Prompt)
	}
	for _, r := range s.m.ListResources(f) {
		out.Resources = append(out.Resources, r.Resource)
	}
	for _, t := range s.m.ListResourceTemplates(f) {
		out.ResourceTemplates = append(out.ResourceTemplates, t.ResourceTemplate)
	}
	return out
}
