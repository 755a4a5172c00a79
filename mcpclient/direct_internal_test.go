//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestMarshalInitialize: the initialize params the direct path encodes are
// the bytes go-sdk's own client sends for the same params, with and
// without roots, elicitation and sampling (go-sdk encodes them through
// an unexported type whose roots come from RootsV2).
func TestMarshalInitialize(t *testing.T) {
	for name, opts := range map[string]*mcp.ClientOptions{
		"none":  {},
		"roots": {Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}},
		"elicitation and sampling": {
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, nil
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var sent json.RawMessage // the wire's params
			srv := mcptest.NewServer("s")
			real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
			hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var msg struct {
					Method string
					Params json.RawMessage
				}
				if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
					mu.Lock()
					sent = msg.Params
					mu.Unlock()
				}
				real.ServeHTTP(w, r)
			}))
			var given *mcp.InitializeParams // what go-sdk's client hands its middleware
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts)
			client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if p, ok := req.GetParams().(*mcp.InitializeParams); ok {
						given = p
					}
					return next(ctx, method, req)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			cs.Close()
			got, err := marshalInitialize(given)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || given == nil || !bytes.Equal(got, sent) {
				t.Errorf("marshalInitialize:\n%s (%v)\ngo-sdk sent:\n%s", got, err, sent)
			}
		})
	}
}
