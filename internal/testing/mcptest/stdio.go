package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LegacyVersions are the protocol versions a legacy-only server speaks:
// every one before 2026-07-28.
var LegacyVersions = protocol.SessionVersions()

// NewLegacyServer returns a go-sdk server named name that speaks only
// LegacyVersions, with one tool, "echo": it answers a 2026-07-28
// server/discover with an error and stays up, as legacy servers that
// follow the spec do.
func NewLegacyServer(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ServerOptions{SupportedProtocolVersions: LegacyVersions})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a EchoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	return s
}

// ServeStrictLegacy serves, on in and out (a stdio server's stdin and
// stdout), a scripted server that speaks only 2025-11-25 and, as some
// legacy servers do, exits on any request before initialize but
// initialize: it returns an error then. After initialize it answers
// tools/list (one tool, "echo"), tools/call of echo and ping, and refuses
// anything else. It returns nil when in ends.
func ServeStrictLegacy(in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	lines.Buffer(nil, 1<<20)
	initialized := false
	for lines.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments EchoArgs `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(lines.Bytes(), &req); err != nil {
			return fmt.Errorf("reading a request: %v", err)
		}
		if req.ID == nil {
			continue // a notification
		}
		var result any
		switch {
		case req.Method == "initialize":
			initialized = true
			result = map[string]any{"protocolVersion": protocol.LatestSession, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "strict-legacy", "version": "1.0.0"}}
		case !initialized:
			return fmt.Errorf("%q before initialize", req.Method)
		case req.Method == "ping":
			result = map[string]any{}
		case req.Method == "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
		case req.Method == "tools/call":
			result = text("echo: " + req.Params.Arguments.Text)
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}
		if result == nil {
			msg = map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}}
		}
		data, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", data); err != nil {
			return err
		}
	}
	return lines.Err()
}
