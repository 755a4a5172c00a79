package mcptest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestStopEndsHandlers: Stop returns while tool handlers are in flight,
// as a killed process would: one waits for its context, one for the
// client's answer to an elicitation (with a context of its own), which the
// client never sends.
func TestStopEndsHandlers(t *testing.T) {
	for _, detached := range []bool{false, true} {
		name := "request context"
		if detached {
			name = "elicitation with a context of its own"
		}
		t.Run(name, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "stop", Version: "1.0.0"}, nil)
			started, ended := make(chan struct{}), make(chan error, 1)
			srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					close(started)
					var err error
					if detached {
						_, err = req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "Name?",
							RequestedSchema: map[string]any{"type": "object"}})
					} else {
						<-ctx.Done()
						err = ctx.Err()
					}
					ended <- err
					return nil, err
				})
			hs := Serve(t, Stateful, func() *mcp.Server { return srv })

			// The client's elicitation handler never answers while the
			// server runs.
			unblock := make(chan struct{})
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1.0.0"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					<-unblock
					return nil, errors.New("gone")
				}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a safety net only
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{},
				DisableStandaloneSSE: !detached}, nil)
			if err != nil {
				t.Fatal(err)
			}
			callDone := make(chan struct{})
			go func() {
				defer close(callDone)
				cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
			}()
			<-started

			stopped := make(chan struct{})
			go func() {
				hs.Stop()
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-ctx.Done():
				t.Fatal("Stop waits for a handler in flight")
			}
			// The elicitation fails either way: cancelled, or the session
			// closing.
			if err := <-ended; err == nil || !detached && !errors.Is(err, context.Canceled) {
				t.Errorf("the handler ended with %v", err)
			}
			close(unblock)
			cancel()
			<-callDone
			cs.Close()
		})
	}
}
