package mcpclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool compares a tool call through the Manager with the same
// call on a raw go-sdk ClientSession (go-sdk's own streamable transport),
// against one server on 127.0.0.1, in both eras. The two are timed in
// alternation within the same loop, so machine noise hits both alike; the
// "ratio" metric is manager time over raw time (the goal is at most 1.05).
func BenchmarkCallTool(b *testing.B) {
	for _, era := range []struct {
		name string
		mode mcptest.Mode
		pin  string
	}{{"2026-07-28", mcptest.Stateless, "2026-07-28"}, {"2025-11-25", mcptest.Stateful, "2025-11-25"}} {
		b.Run(era.name, func(b *testing.B) {
			srv := mcptest.NewServer("bench")
			hs := mcptest.Serve(b, era.mode, func() *mcp.Server { return srv.Server })
			ctx := context.Background()

			m := newManager(b, nil)
			connectReady(b, m, "s", mcpclient.ServerOptions{URL: hs.URL, Client: mcpclient.ClientOptions{ProtocolVersion: era.pin}})

			raw, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: era.pin})
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			args := map[string]any{"text": "hello"}
			params := &mcp.CallToolParams{Name: "echo", Arguments: args}
			for range 50 { // warm up both
				m.CallTool(ctx, "s", "echo", args, nil)
				raw.CallTool(ctx, params)
			}

			var viaManager, viaRaw time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := m.CallTool(ctx, "s", "echo", args, nil); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				viaManager += t1.Sub(t0)
				viaRaw += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(viaManager.Nanoseconds())/n, "manager-ns/call")
			b.ReportMetric(float64(viaRaw.Nanoseconds())/n, "raw-ns/call")
			b.ReportMetric(float64(viaManager)/float64(viaRaw), "ratio")
		})
	}
}

// BenchmarkCallToolManager and BenchmarkCallToolRaw measure each side
// alone, for allocation counts (-benchmem).
func BenchmarkCallToolManager(b *testing.B) {
	srv := mcptest.NewServer("bench")
	hs := mcptest.Serve(b, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	m := newManager(b, nil)
	connectReady(b, m, "s", mcpclient.ServerOptions{URL: hs.URL})
	args := map[string]any{"text": "hello"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.CallTool(ctx, "s", "echo", args, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallToolRaw(b *testing.B) {
	srv := mcptest.NewServer("bench")
	hs := mcptest.Serve(b, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	ctx := context.Background()
	raw, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	args := map[string]any{"text": "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
}
