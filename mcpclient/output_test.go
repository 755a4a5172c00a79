package mcpclient_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// outputServer has tools that declare an output schema ({"n": integer,
// required}) and return good, bad or missing structured content, and a
// failing one whose bad content is not checked (a tool error).
func outputServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "out", Version: "1"}, nil)
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 0}},
		"required":   []any{"n"},
	}
	add := func(name string, res *mcp.CallToolResult) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, OutputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })
	}
	text := []mcp.Content{&mcp.TextContent{Text: "result"}}
	add("good", &mcp.CallToolResult{Content: text, StructuredContent: map[string]any{"n": 3}})
	add("bad", &mcp.CallToolResult{Content: text, StructuredContent: map[string]any{"n": "three"}})
	add("negative", &mcp.CallToolResult{Content: text, StructuredContent: map[string]any{"n": -1}})
	add("missing", &mcp.CallToolResult{Content: text})
	add("failing", &mcp.CallToolResult{Content: text, StructuredContent: map[string]any{"n": "x"}, IsError: true})
	return srv
}

// TestOutputSchema: a result whose structuredContent breaks the tool's
// outputSchema, or is missing, fails the call with an *OutputSchemaError
// (ErrInvalidResult, carrying the result and naming the field), which is
// not a tool error, through CallTool and through aitools; a conforming
// result and a tool error pass; in warn mode the result comes back and a
// warning is logged. In-process, and over HTTP (our transport's direct
// decoding) in both eras.
func TestOutputSchema(t *testing.T) {
	srv := outputServer()
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) mcpclient.ServerOptions
	}{
		{"in-process", func(*testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return srv, nil }}
		}},
		{"2025-11-25", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv }).URL}
		}},
		{"2026-07-28", func(t *testing.T) mcpclient.ServerOptions {
			return mcpclient.ServerOptions{URL: mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv }).URL}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			m := newManager(t, nil)
			connectReady(t, m, "s", tc.opts(t))
			if res, err := m.CallTool(ctx, "s", "good", nil, nil); err != nil || res == nil {
				t.Errorf("conforming result: %v", err)
			}
			if res, err := m.CallTool(ctx, "s", "failing", nil, nil); err != nil || !res.IsError {
				t.Errorf("tool error: %+v, %v; want the result, isError", res, err)
			}
			for _, bad := range []struct{ tool, want string }{
				{"bad", `"n": got string, want integer`},
				{"negative", `"n": minimum: got -1, want 0`},
				{"missing", "structuredContent is missing"},
			} {
				res, err := m.CallTool(ctx, "s", bad.tool, nil, nil)
				var oerr *mcpclient.OutputSchemaError
				if !errors.As(err, &oerr) || !errors.Is(err, mcpclient.ErrInvalidResult) || res != nil {
					t.Fatalf("%s: %+v, %v; want an *OutputSchemaError", bad.tool, res, err)
				}
				if oerr.ServerID != "s" || oerr.Tool != bad.tool || oerr.Result == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("%s: %+v (%v); want it to name the server, the tool, carry the result and say %q", bad.tool, oerr, err, bad.want)
				}
				if errors.Is(err, aitools.ErrToolFailed) {
					t.Errorf("%s: an invalid result reads as a tool failure", bad.tool)
				}
			}
			// Through aitools: the same error, told apart from a tool error.
			set := m.AITools(mcpclient.Filter{})
			for tool := range set.All() {
				_, err := tool.Execute(ctx, nil)
				var oerr *mcpclient.OutputSchemaError
				var terr *aitools.ToolError
				switch tool.Name {
				case "bad", "negative", "missing":
					if !errors.As(err, &oerr) || errors.As(err, &terr) {
						t.Errorf("aitools %s: %v; want an *OutputSchemaError, not a *ToolError", tool.Name, err)
					}
				case "failing":
					if !errors.As(err, &terr) || errors.As(err, &oerr) {
						t.Errorf("aitools %s: %v; want a *ToolError", tool.Name, err)
					}
				}
			}
		})
	}

	t.Run("warn", func(t *testing.T) {
		var logs syncBuffer
		m := newManager(t, &mcpclient.Options{OutputValidation: mcpclient.OutputValidationWarn,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		connectReady(t, m, "s", mcpclient.ServerOptions{InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return srv, nil }})
		res, err := m.CallTool(testCtx(t), "s", "bad", nil, nil)
		if err != nil || res == nil || res.StructuredContent == nil {
			t.Fatalf("warn mode: %+v, %v; want the result", res, err)
		}
		if !strings.Contains(logs.String(), "does not match its output schema") || !strings.Contains(logs.String(), "tool=bad") {
			t.Errorf("warn mode logged %q", logs.String())
		}
	})
	t.Run("off", func(t *testing.T) {
		m := newManager(t, &mcpclient.Options{OutputValidation: mcpclient.OutputValidationOff})
		connectReady(t, m, "s", mcpclient.ServerOptions{InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return srv, nil }})
		if _, err := m.CallTool(testCtx(t), "s", "missing", nil, nil); err != nil {
			t.Errorf("off: %v", err)
		}
	})
}
