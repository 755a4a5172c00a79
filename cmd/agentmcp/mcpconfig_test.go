package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPConfig checks the exact document printed for each host: the
// shape each one documents for a remote streamable HTTP server, with the
// token as a bearer header (VS Code: asked once, as a password input).
func TestMCPConfig(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"claude", []string{"--token", "T0K"}, `{
  "mcpServers": {
    "agentmcp-default": {
      "type": "http",
      "url": "http://127.0.0.1:8787/agents/agentmcp/default/mcp",
      "headers": {
        "Authorization": "Bearer T0K"
      }
    }
  }
}
`},
		{"claude without a token", []string{"--for", "claude", "--agent", "support/alice", "--server", "https://agents.example.com/"}, `{
  "mcpServers": {
    "support-alice": {
      "type": "http",
      "url": "https://agents.example.com/agents/support/alice/mcp"
    }
  }
}
`},
		{"cursor", []string{"--for", "cursor", "--token", "T0K"}, `{
  "mcpServers": {
    "agentmcp-default": {
      "url": "http://127.0.0.1:8787/agents/agentmcp/default/mcp",
      "headers": {
        "Authorization": "Bearer T0K"
      }
    }
  }
}
`},
		{"vscode", []string{"--for", "vscode", "--token", "T0K", "--agent", "support/alice"}, `{
  "inputs": [
    {
      "type": "promptString",
      "id": "support-alice-token",
      "description": "agentmcp access token (AGENTMCP_TOKEN of agentmcp serve)",
      "password": true
    }
  ],
  "servers": {
    "support-alice": {
      "type": "http",
      "url": "http://127.0.0.1:8787/agents/support/alice/mcp",
      "headers": {
        "Authorization": "Bearer ${input:support-alice-token}"
      }
    }
  }
}
`},
		{"vscode without a token", []string{"--for", "vscode"}, `{
  "servers": {
    "agentmcp-default": {
      "type": "http",
      "url": "http://127.0.0.1:8787/agents/agentmcp/default/mcp"
    }
  }
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"mcp-config"}, tt.args...)...)
			r.mustSucceed(t)
			if r.stdout != tt.want {
				t.Errorf("mcp-config %q:\n%s\nwant:\n%s", tt.args, r.stdout, tt.want)
			}
			if strings.Contains(tt.name, "vscode") && strings.Contains(r.stdout, "T0K") {
				t.Errorf("the vscode config holds the token itself")
			}
		})
	}

	t.Run("environment", func(t *testing.T) {
		t.Setenv(envServer, "http://127.0.0.1:9999")
		t.Setenv(envToken, "FROM-ENV")
		r := runCmd(t, "mcp-config", "--for", "cursor")
		r.mustSucceed(t)
		if !strings.Contains(r.stdout, `"url": "http://127.0.0.1:9999/agents/agentmcp/default/mcp"`) || !strings.Contains(r.stdout, `"Bearer FROM-ENV"`) {
			t.Errorf("mcp-config with the environment:\n%s", r.stdout)
		}
	})

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--for", "zed"}, `--for "zed": want claude, vscode or cursor`},
		{[]string{"--agent", "nope"}, `--agent "nope": want class/name`},
		{[]string{"--server", "ftp://x"}, `--server "ftp://x"`},
		{[]string{"--server", "http://u:SECRET@x/?k=SECRET"}, `--server "http://x/"`},
	} {
		line := runCmd(t, append([]string{"mcp-config"}, bad.args...)...).errorLine(t, exitUsage)
		if !strings.Contains(line, bad.want) || strings.Contains(line, "SECRET") {
			t.Errorf("mcp-config %q: %s, want %q and no secret", bad.args, line, bad.want)
		}
	}
}

// TestServePrintsMCPEndpoints: serve prints the MCP endpoint of the
// dashboard's agent and of the agents kept awake, and where the others
// are.
func TestServePrintsMCPEndpoints(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	s := startServe(t, "--db", db, "--agent", "support/alice", "--keep-awake", "ops/bot")
	out := s.stop().stdout
	for _, want := range []string{
		"agentmcp serve: MCP endpoint of agent support/alice at " + s.base + "/agents/support/alice/mcp\n",
		"agentmcp serve: MCP endpoint of agent ops/bot at " + s.base + "/agents/ops/bot/mcp\n",
		"agentmcp serve: every agent's MCP endpoint is " + s.base + "/agents/{class}/{name}/mcp; agentmcp mcp-config --agent C/N prints the config",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("serve's output lacks %q:\n%s", want, out)
		}
	}
}

// TestServeOAuthFlags: --oauth-audience needs --oauth-issuer, which must
// be an http(s) URL, and off a loopback --addr --public-url or
// --oauth-audience.
func TestServeOAuthFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-audience", "x"}, "--oauth-audience needs --oauth-issuer"},
		{[]string{"--oauth-issuer", "ftp://auth.example"}, `--oauth-issuer "ftp://auth.example": want the authorization server's issuer URL`},
		// Off loopback, the tokens' audience comes from configuration only.
		{[]string{"--addr", "0.0.0.0:0", "--token", "t", "--oauth-issuer", "https://auth.example"}, "--oauth-issuer with --addr 0.0.0.0:0 needs --public-url"},
	} {
		line := runCmd(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, tt.args...)...).errorLine(t, exitUsage)
		if !strings.Contains(line, tt.want) {
			t.Errorf("serve %q: %s, want %q", tt.args, line, tt.want)
		}
	}
}
