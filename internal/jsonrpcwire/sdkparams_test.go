//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package jsonrpcwire

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMarshalSDKParams encodes the params go-sdk's client really sends,
// in both eras: in 2026-07-28 with the _meta it adds to every request
// (the protocol version, the client's Implementation, and capabilities of
// a type of its own, which MarshalParams leaves to encoding/json).
func TestMarshalSDKParams(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, struct {
				Echo string `json:"echo"`
			}, error) {
				return nil, struct {
					Echo string `json:"echo"`
				}{in.Text}, nil
			})
			st, ct := mcp.NewInMemoryTransports()
			ss, err := server.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "agentmcp", Title: "<t>", Version: "dev"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{"x/y": map[string]any{"a": 1.5}}},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return nil, nil
				},
			})
			var sent int
			client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					switch method {
					case "tools/call", "tools/list", "prompts/list", "resources/list", "resources/templates/list":
						sent++
						params := req.GetParams()
						want, wantErr := stdJSON(params)
						got, err := MarshalParams(params)
						if err != nil || wantErr != nil || string(got) != want {
							t.Errorf("%s: MarshalParams = %s, %v\nencoding/json:      %s, %v", method, got, err, want, wantErr)
						}
						if version == "2026-07-28" && len(params.GetMeta()) == 0 {
							t.Errorf("%s: no _meta in a 2026-07-28 request", method)
						}
					}
					return next(ctx, method, req)
				}
			})
			cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "c"}); err != nil {
				t.Log(err) // an unknown cursor: only the request matters
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello\u2028<>"}}); err != nil {
				t.Fatal(err)
			}
			if sent < 3 {
				t.Errorf("%d requests checked, want 3", sent)
			}
		})
	}
}
