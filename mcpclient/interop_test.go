package mcpclient_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func command(c peers.Command) *mcpclient.CommandOptions {
	return &mcpclient.CommandOptions{Path: c.Path, Args: c.Args, Env: c.Env}
}

// TestEverything runs the reference server, as a separate process, over
// stdio, SSE and streamable HTTP: all four catalogs, a tool call,
// list_changed, and progress from the long-running tool.
func TestEverything(t *testing.T) {
	peers.Require(t)
	tests := []struct {
		name      string
		opts      func(t *testing.T) mcpclient.ServerOptions
		transport mcpclient.TransportType
	}{
		{"stdio", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{Command: command(peers.EverythingCommand(t))}
		}, mcpclient.TransportStdio},
		{"sse", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: peers.StartEverything(t, "sse").URL}
		}, mcpclient.TransportSSE},
		{"streamable-http", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: peers.StartEverything(t, "streamableHttp").URL}
		}, mcpclient.TransportStreamableHTTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			rec := record(m)
			opts := tt.opts(t)
			opts.Name = "Everything"
			connectReady(t, m, "ev", opts)
			// The server registers a tool after initialisation, which it
			// announces with tools/list_changed.
			rec.waitFor(t, "tools/list_changed", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventToolsChanged && ev.ServerID == "ev"
			})
			ctx := testCtx(t)
			m.WaitForConnections(ctx)

			info, _ := m.Server("ev")
			if info.Transport != tt.transport || info.ServerInfo == nil || info.ServerInfo.Name != "mcp-servers/everything" {
				t.Errorf("transport %s, server %+v", info.Transport, info.ServerInfo)
			}
			t.Logf("%s: protocol %s, %d tools, %d prompts, %d resources, %d templates", tt.name, info.ProtocolVersion,
				len(m.ListTools(mcpclient.Filter{})), len(m.ListPrompts(mcpclient.Filter{})),
				len(m.ListResources(mcpclient.Filter{})), len(m.ListResourceTemplates(mcpclient.Filter{})))
			tools := toolNames(m.ListTools(mcpclient.Filter{}))
			for _, want := range []string{"ev/echo", "ev/get-sum", "ev/trigger-long-running-operation", "ev/simulate-research-query"} {
				if !contains(tools, want) {
					t.Errorf("tool %s missing from %v", want, tools)
				}
			}
			if len(m.ListPrompts(mcpclient.Filter{})) == 0 || len(m.ListResources(mcpclient.Filter{})) == 0 || len(m.ListResourceTemplates(mcpclient.Filter{})) == 0 {
				t.Errorf("a catalog is empty")
			}

			res, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hello"}, nil)
			if err != nil || textOf(t, res) != "Echo: hello" {
				t.Fatalf("echo: %v", err)
			}
			var steps atomic.Int32
			res, err = m.CallTool(ctx, "ev", "trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 2},
				&mcpclient.CallOptions{Progress: func(*mcp.ProgressNotificationParams) { steps.Add(1) }})
			if err != nil || res.IsError {
				t.Fatalf("long-running operation: %v %+v", err, res)
			}
			if n := steps.Load(); n != 2 {
				t.Errorf("%d progress notifications, want 2", n)
			}
			if _, err := m.ReadResource(ctx, "ev", m.ListResources(mcpclient.Filter{})[0].URI); err != nil {
				t.Errorf("read: %v", err)
			}
			if _, err := m.GetPrompt(ctx, "ev", "simple-prompt", nil); err != nil {
				t.Errorf("prompt: %v", err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestMemoryAndFilesystem runs two more reference servers over stdio.
func TestMemoryAndFilesystem(t *testing.T) {
	peers.Require(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	m := newManager(t, nil)
	connectReady(t, m, "memory", mcpclient.ServerOptions{Command: command(peers.MemoryCommand(t, memFile))})
	connectReady(t, m, "fs", mcpclient.ServerOptions{Command: command(peers.FilesystemCommand(t, dir))})
	ctx := testCtx(t)

	if n := len(m.ListTools(mcpclient.Filter{ServerID: []string{"memory"}})); n < 5 {
		t.Errorf("memory server lists %d tools", n)
	}
	res, err := m.CallTool(ctx, "memory", "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "agentmcp", "entityType": "program", "observations": []string{"speaks MCP"}}}}, nil)
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %+v", err, res)
	}
	data, err := os.ReadFile(memFile)
	if err != nil || !strings.Contains(string(data), "agentmcp") {
		t.Errorf("memory file: %q, %v", data, err)
	}

	if n := len(m.ListTools(mcpclient.Filter{ServerID: []string{"fs"}})); n < 10 {
		t.Errorf("filesystem server lists %d tools", n)
	}
	res, err = m.CallTool(ctx, "fs", "read_text_file", map[string]any{"path": filepath.Join(dir, "hello.txt")}, nil)
	if err != nil || res.IsError || textOf(t, res) != "hello from a file" {
		t.Fatalf("read_text_file: %v %+v", err, res)
	}
	// Closing stops the processes cleanly.
	if err := m.CloseAllConnections(ctx); err != nil {
		t.Errorf("closing stdio servers: %v", err)
	}
}
