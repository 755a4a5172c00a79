package mcpclient_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerSchemas are input schemas with x-mcp-header annotations, valid and
// not, and the edge cases of go-sdk's rule, by tool name; the valid ones
// are named "ok-...".
var headerSchemas = map[string]string{
	"ok-plain":      `{"type":"object","properties":{"a":{"type":"string"}}}`,
	"ok-header":     `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
	"ok-nested":     `{"type":"object","properties":{"o":{"type":"object","properties":{"t":{"type":"integer","x-mcp-header":"Tier"}}},"b":{"type":"boolean","x-mcp-header":"Flag"}}}`,
	"ok-tchars":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X-a_1.b~c!#$%&'*+^` + "`" + `|"}}}`,
	"bad-number":    `{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`,
	"bad-untyped":   `{"type":"object","properties":{"n":{"x-mcp-header":"N"}}}`,
	"bad-null-type": `{"type":"object","properties":{"n":{"type":null,"x-mcp-header":"N"}}}`,
	"bad-empty":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
	"bad-null":      `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":null}}}`,
	"bad-nonstring": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`,
	"bad-space":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Re gion"}}}`,
	"bad-unicode":   `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`,
	"bad-duplicate": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Key"},"b":{"type":"string","x-mcp-header":"KEY"}}}`,
	"bad-deep-dup":  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Key"},"o":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"key"}}}}}`,
	"bad-nested":    `{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"array","x-mcp-header":"N"}}}}}`,
	"bad-null-prop": `{"type":"object","properties":{"z":null,"a":{"type":"object","x-mcp-header":"A"}}}`,
	// go-sdk cannot read these schemas for annotations: valid.
	"ok-type-array":   `{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`,
	"ok-bool-schema":  `{"type":"object","properties":{"t":true,"a":{"type":"number","x-mcp-header":"A"}}}`,
	"ok-root-type":    `{"type":5,"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
	"ok-props-array":  `{"type":"object","properties":{"a":{"type":"object","properties":[],"x-mcp-header":"A"}}}`,
	"ok-case":         `{"type":"object","Properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
	"ok-root-header":  `{"type":"object","x-mcp-header":"","properties":{"a":{"type":"string"}}}`,
	"ok-items-header": `{"type":"object","properties":{"a":{"type":"array","items":{"type":"number","x-mcp-header":""}}}}`,
	// Nested as deep as go-sdk reads a message (1000, the list's own
	// nesting included); deeper, see TestHeaderAnnotationsDepth.
	"bad-deep": `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}},"deep":` + strings.Repeat("[", 994) + strings.Repeat("]", 994) + `}`,
}

// TestToolHeaderFilter: the Manager leaves out of its catalog exactly the
// tools go-sdk's ClientSession.ListTools leaves out for their x-mcp-header
// annotations (and a null tool), in both eras, its own lists sent without
// go-sdk's method or not.
func TestToolHeaderFilter(t *testing.T) {
	var tools []*mcp.Tool
	var want []string
	for name, schema := range headerSchemas {
		tools = append(tools, &mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)})
		if strings.HasPrefix(name, "ok-") {
			want = append(want, name)
		}
	}
	tools = append(tools, nil)
	slices.Sort(want)
	newServer := func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "placeholder", InputSchema: map[string]any{"type": "object"}}, okTool)
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					return &mcp.ListToolsResult{Tools: tools}, nil
				}
				return next(ctx, method, req)
			}
		})
		return srv
	}
	for _, era := range httpEras {
		t.Run(era.name, func(t *testing.T) {
			ctx := testCtx(t)
			hs := mcptest.Serve(t, era.mode, newServer)

			// go-sdk alone.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var sdk []string
			for _, tool := range res.Tools {
				sdk = append(sdk, tool.Name)
			}
			slices.Sort(sdk)
			if !slices.Equal(sdk, want) {
				t.Errorf("go-sdk kept %v, want %v", sdk, want)
			}

			for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
				m := newManager(t, nil)
				connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL,
					Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP, Implementation: impl}})
				var got []string
				for _, tool := range m.ListTools(mcpclient.Filter{}) {
					got = append(got, tool.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, sdk) {
					t.Errorf("transport %q: the Manager kept %v, go-sdk %v", impl, got, sdk)
				}
			}
		})
	}
}
