//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServers returns the reference server over stdio and
// streamable HTTP.
func everythingServers() []struct {
	name string
	opts func(t *testing.T) mcpclient.ServerOptions
} {
	return []struct {
		name string
		opts func(t *testing.T) mcpclient.ServerOptions
	}{
		{"stdio", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{Command: command(peers.EverythingCommand(t))}
		}},
		{"streamable-http", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: peers.StartEverything(t, "streamableHttp").URL}
		}},
	}
}

// TestEverythingTaskTool calls the reference server's
// simulate-research-query, whose taskSupport is required, with a plain
// CallTool: it runs as a task (created, polled, its result fetched with
// tasks/result), its status messages come as progress, and the ambiguous
// query's input_required is answered through the elicitation handler.
func TestEverythingTaskTool(t *testing.T) {
	peers.Require(t)
	for _, srv := range everythingServers() {
		for _, ambiguous := range []bool{false, true} {
			name := srv.name
			if ambiguous {
				name += "/ambiguous"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m := newManager(t, nil)
				var asked atomic.Int32
				m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
					Form: func(_ context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
						asked.Add(1)
						if !strings.Contains(req.Message, "multiple interpretations") {
							t.Errorf("elicitation message %q", req.Message)
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
					},
				})
				connectReady(t, m, "ev", srv.opts(t))
				ctx := testCtx(t)

				var (
					mu       sync.Mutex
					messages []string
					handles  []*mcpclient.TaskHandle
				)
				res, err := m.CallTool(ctx, "ev", "simulate-research-query", map[string]any{"topic": "go", "ambiguous": ambiguous},
					&mcpclient.CallOptions{
						Progress: func(p *mcp.ProgressNotificationParams) {
							mu.Lock()
							messages = append(messages, p.Message)
							mu.Unlock()
						},
						TaskStarted: func(h *mcpclient.TaskHandle) {
							mu.Lock()
							handles = append(handles, h)
							mu.Unlock()
						},
					})
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				text := textOf(t, res)
				if !strings.Contains(text, "# Research Report: go") {
					t.Fatalf("result %q", text)
				}
				if got := strings.Contains(text, "(historical)"); got != ambiguous {
					t.Errorf("clarification in the report = %v, want %v: %q", got, ambiguous, text)
				}
				if got := asked.Load() == 1; got != ambiguous {
					t.Errorf("elicitation handler called %d times", asked.Load())
				}
				mu.Lock()
				defer mu.Unlock()
				if len(handles) != 1 || handles[0].TaskID == "" || handles[0].Tool != "simulate-research-query" || handles[0].ServerID != "ev" ||
					handles[0].Protocol != "2025-11-25" || len(handles[0].ArgumentsHash) != 64 {
					t.Errorf("handles %+v", handles)
				}
				if len(messages) == 0 {
					t.Errorf("no status message came as progress")
				}
				t.Logf("status messages: %q", messages)
			})
		}
	}
}

// TestEverythingClientTasks runs the reference server's tools that send
// the client elicitation and sampling requests as tasks: the client, which
// declares tasks for both, answers with a task, runs the handler, and
// answers the server's tasks/get and tasks/result.
func TestEverythingClientTasks(t *testing.T) {
	peers.Require(t)
	for _, srv := range everythingServers() {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, nil)
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
				Form: func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "favoriteColor": "Blue"}}, nil
				},
			})
			m.ConfigureSampling(func(_ context.Context, p *mcp.CreateMessageParams, _ string) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "sampled answer"}}, nil
			})
			connectReady(t, m, "ev", srv.opts(t))
			ctx := testCtx(t)

			res, err := m.CallTool(ctx, "ev", "trigger-elicitation-request-async", nil, nil)
			if err != nil {
				t.Fatalf("elicitation: %v", err)
			}
			text := allText(res)
			if !strings.Contains(text, "[COMPLETED] User provided the requested information!") || !strings.Contains(text, "- Name: Ada") {
				t.Errorf("elicitation result %q", text)
			}

			res, err = m.CallTool(ctx, "ev", "trigger-sampling-request-async", map[string]any{"prompt": "hi"}, nil)
			if err != nil {
				t.Fatalf("sampling: %v", err)
			}
			text = allText(res)
			if !strings.Contains(text, "[COMPLETED] Async sampling completed!") || !strings.Contains(text, "sampled answer") {
				t.Errorf("sampling result %q", text)
			}
		})
	}
}

// allText joins the text items of a result.
func allText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}
