package mcpclient

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTelemetryMiddleware measures what the per-request telemetry
// middleware adds to a tool call with the default providers (OpenTelemetry's
// global ones, no-op unless a program sets them): "noop" runs a call through
// it, "bare" the same call without it. agentmcp-bench reads the difference
// against a real call's CPU (telemetry_noop_cpu_ratio_derived): a ratio the
// calls' own noise on a shared machine cannot hide or fake.
func BenchmarkTelemetryMiddleware(b *testing.B) {
	m := New(nil)
	defer m.Close(context.Background())
	ctx := context.Background()
	if _, err := m.RegisterServer(ctx, "s", ServerOptions{URL: "http://127.0.0.1:9/mcp"}); err != nil {
		b.Fatal(err)
	}
	m.mu.Lock()
	c := m.servers["s"]
	m.mu.Unlock()
	h := &sessionHooks{c: c, s: &session{transport: TransportStreamableHTTP}, calls: map[*call]struct{}{}}
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return result, nil }
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo"}}
	for _, bc := range []struct {
		name    string
		handler mcp.MethodHandler
	}{{"bare", next}, {"noop", h.telemetryMiddleware(next)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.handler(ctx, "tools/call", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
