//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// messages is a slog.Handler that sends the message of every record to a
// channel, dropping them when nobody reads.
type messages chan string

func (messages) Enabled(context.Context, slog.Level) bool { return true }
func (h messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h messages) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h messages) WithGroup(string) slog.Handler      { return h }

// waitLog waits for a log message.
func waitLog(t *testing.T, logs messages, msg string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		select {
		case got := <-logs:
			if got == msg {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no log %q", msg)
		}
	}
}

// TestEverythingClientFeatures: server-everything's elicitation (form, URL
// by request and by -32042) and sampling tools are answered through the
// handlers, and its roots tool sees the application's roots, also after
// they change; over stdio and streamable HTTP.
func TestEverythingClientFeatures(t *testing.T) {
	peers.Require(t)
	for _, tt := range []struct {
		name string
		opts func(t *testing.T) mcpclient.ServerOptions
	}{
		{"stdio", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{Command: command(peers.EverythingCommand(t))}
		}},
		{"streamable-http", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: peers.StartEverything(t, "streamableHttp").URL}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := make(messages, 64)
			m := newManager(t, &mcpclient.Options{Logger: slog.New(logs)})
			var forms, urls atomic.Int32
			m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
				Form: func(_ context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
					forms.Add(1)
					if serverID != "ev" || req.Mode != "form" || !strings.Contains(string(req.RequestedSchema), "firstLine") {
						t.Errorf("form request %+v from %s", req, serverID)
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}}, nil
				},
				URL: func(_ context.Context, req *input.ElicitationRequest, _ string) (*mcp.ElicitResult, error) {
					urls.Add(1)
					if req.Mode != "url" || req.URL == "" || req.ElicitationID == "" {
						t.Errorf("url request %+v", req)
					}
					return &mcp.ElicitResult{Action: "accept"}, nil
				},
				// server-everything never announces completion.
				URLCompletionWait: -1,
			})
			m.ConfigureSampling(func(_ context.Context, req *mcp.CreateMessageParams, serverID string) (*mcp.CreateMessageResult, error) {
				if req.MaxTokens != 7 || len(req.Messages) != 1 {
					t.Errorf("sampling request %+v", req)
				}
				return &mcp.CreateMessageResult{Model: "go-test-model", Role: "assistant", Content: &mcp.TextContent{Text: "hello from " + serverID}}, nil
			})
			m.ConfigureRoots([]*mcp.Root{{URI: "file:///work/one", Name: "One"}})
			opts := tt.opts(t)
			connectReady(t, m, "ev", opts)
			info, _ := m.Server("ev")
			t.Logf("protocol %s", info.ProtocolVersion)
			ctx := testCtx(t)
			call := func(tool string, args map[string]any) string {
				t.Helper()
				res, err := m.CallTool(ctx, "ev", tool, args, nil)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				var b strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						b.WriteString(tc.Text + "\n")
					}
				}
				if res.IsError {
					t.Fatalf("%s: tool error %s", tool, b.String())
				}
				return b.String()
			}

			got := call("trigger-elicitation-request", map[string]any{})
			for _, want := range []string{"- Name: Ada", "- Agreed to terms: true", "- Favorite Integer: 42", "- Favorite Number: 3.14"} {
				if !strings.Contains(got, want) {
					t.Errorf("elicitation result lacks %q (defaults filled in?):\n%s", want, got)
				}
			}
			got = call("trigger-url-elicitation", map[string]any{"url": "https://example.com/connect"})
			if !strings.Contains(got, "User completed the URL elicitation flow") {
				t.Errorf("URL elicitation:\n%s", got)
			}
			// The error path: -32042, the handler, one retry, which asks
			// again by request.
			got = call("trigger-url-elicitation", map[string]any{"url": "https://example.com/prereq", "errorPath": true})
			if !strings.Contains(got, "User completed the URL elicitation flow") || urls.Load() != 3 {
				t.Errorf("URL elicitation by error (%d handler calls):\n%s", urls.Load(), got)
			}
			got = call("trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 7})
			if !strings.Contains(got, "go-test-model") || !strings.Contains(got, "hello from ev") {
				t.Errorf("sampling:\n%s", got)
			}
			if got = call("get-roots-list", map[string]any{}); !strings.Contains(got, "file:///work/one") {
				t.Errorf("roots:\n%s", got)
			}

			// A change is announced; the server asks again and keeps the
			// answer, which it stores after replying.
			m.ConfigureRoots([]*mcp.Root{{URI: "file:///work/two", Name: "Two"}})
			waitLog(t, logs, "mcp server listed the roots")
			for got = call("get-roots-list", map[string]any{}); !strings.Contains(got, "file:///work/two"); got = call("get-roots-list", map[string]any{}) {
				if ctx.Err() != nil {
					t.Fatalf("the server never saw the new roots:\n%s", got)
				}
			}
			if strings.Contains(got, "file:///work/one") {
				t.Errorf("roots after the change:\n%s", got)
			}
			if forms.Load() != 1 {
				t.Errorf("%d form requests", forms.Load())
			}
		})
	}
}
