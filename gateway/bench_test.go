package gateway_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall measures one echo call of an upstream server through the
// gateway by a go-sdk client, in each era, against the agent's own call
// of the same tool (direct); the difference is the gateway's hop.
func BenchmarkCall(b *testing.B) {
	e := newEnv(b, nil)
	ctx := testCtx(b)
	args := map[string]any{"text": "hi"}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.a.CallTool(ctx, "alpha", "echo", args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, era := range []string{eraSessions, eraStateless} {
		b.Run("gateway-"+era, func(b *testing.B) {
			cs := e.connect(era, nil)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_alpha_echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
