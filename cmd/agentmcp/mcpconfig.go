package main

import (
	"context"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/server"
)

func mcpConfigCommand() command {
	return command{
		name:    "mcp-config",
		summary: "print the config that connects Claude Code, VS Code or Cursor to an agent's MCP endpoint",
		usage: `Usage:
  agentmcp mcp-config [--agent C/N] [--for claude|vscode|cursor] [flags]

Every agent of agentmcp serve is also an MCP server (streamable HTTP) at
/agents/{class}/{name}/mcp: one endpoint for all its servers, their sign-ins
kept by serve. mcp-config prints the JSON that adds it to an MCP host, with
the access token as a bearer header when there is one. Nothing is contacted.

  --for claude   Claude Code: the "mcpServers" of .mcp.json (project) or
                 ~/.claude.json, {"type": "http", "url", "headers"}; or pass
                 the entry to: claude mcp add-json NAME 'ENTRY'
  --for vscode   VS Code: .vscode/mcp.json, {"servers": {...}} with
                 {"type": "http", "url", "headers"}; the token is asked once
                 and kept by VS Code ("inputs", a password prompt)
  --for cursor   Cursor: .cursor/mcp.json or ~/.cursor/mcp.json,
                 {"mcpServers": {...}} with {"url", "headers"}

The entry is named CLASS-NAME (agentmcp-default for the default agent).
Without a token no header is printed: when serve protects the endpoint with
OAuth (serve --oauth-issuer), the host then signs in through the
authorization server itself.

Flags:
  --agent C/N   the agent, class/name (default agentmcp/default)
  --for HOST    claude (default), vscode or cursor
  --server URL  the agentmcp serve as the host reaches it (default
                $AGENTMCP_SERVER, else http://127.0.0.1:8787)
  --token T     its access token (default $AGENTMCP_TOKEN); printed in the
                config, except for vscode

Examples:
  agentmcp mcp-config > .mcp.json
  agentmcp mcp-config --for vscode --agent support/alice > .vscode/mcp.json
  claude mcp add-json agentmcp "$(agentmcp mcp-config | jq -c '.mcpServers[]')"
`,
		run: runMCPConfig,
	}
}

func runMCPConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp-config")
	var ref, host, base, token string
	fs.StringVar(&ref, "agent", server.DefaultAgent, "")
	fs.StringVar(&host, "for", "claude", "")
	fs.StringVar(&base, "server", "", "")
	fs.StringVar(&token, "token", "", "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	class, name, ok := strings.Cut(ref, "/")
	if !ok || !server.ValidClass(class) || !server.ValidName(name) {
		return usageErrorf("--agent %q: want class/name, the class in kebab-case (agentmcp/default)", ref)
	}
	if base == "" {
		base = os.Getenv(envServer)
	}
	if base == "" {
		base = defaultServer
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return usageErrorf("--server %q: want the http(s) address of agentmcp serve (http://127.0.0.1:8787)", redactURL(base))
	}
	if token == "" {
		token = os.Getenv(envToken)
	}
	cfg, err := mcpConfig(host, MCPEndpoint(base, class, name), class+"-"+name, token)
	if err != nil {
		return err
	}
	return writeJSON(stdout, cfg)
}

// MCPEndpoint is the URL of the MCP endpoint of agent class/name of the
// agentmcp serve at base.
func MCPEndpoint(base, class, name string) string {
	return client.AgentURL(base, class, name) + "/mcp"
}

// redactURL drops what a URL may carry of secrets (userinfo, query) from a
// message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// hostEntry is one server entry, its keys in the order each host's
// documentation shows them.
type hostEntry struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// vscodeInput is a VS Code input variable: the token, asked once.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

// mcpConfig returns the config document of host for one remote server.
func mcpConfig(host, endpoint, key, token string) (any, error) {
	entryKey := key
	switch host {
	case "claude":
		e := hostEntry{Type: "http", URL: endpoint}
		if token != "" {
			e.Headers = map[string]string{"Authorization": "Bearer " + token}
		}
		return struct {
			MCPServers map[string]hostEntry `json:"mcpServers"`
		}{map[string]hostEntry{entryKey: e}}, nil
	case "cursor":
		e := hostEntry{URL: endpoint}
		if token != "" {
			e.Headers = map[string]string{"Authorization": "Bearer " + token}
		}
		return struct {
			MCPServers map[string]hostEntry `json:"mcpServers"`
		}{map[string]hostEntry{entryKey: e}}, nil
	case "vscode":
		e := hostEntry{Type: "http", URL: endpoint}
		var inputs []vscodeInput
		if token != "" {
			id := entryKey + "-token"
			e.Headers = map[string]string{"Authorization": "Bearer ${input:" + id + "}"}
			inputs = []vscodeInput{{Type: "promptString", ID: id, Description: "agentmcp access token (AGENTMCP_TOKEN of agentmcp serve)", Password: true}}
		}
		return struct {
			Inputs  []vscodeInput        `json:"inputs,omitempty"`
			Servers map[string]hostEntry `json:"servers"`
		}{inputs, map[string]hostEntry{entryKey: e}}, nil
	}
	return nil, usageErrorf("--for %q: want claude, vscode or cursor", host)
}
