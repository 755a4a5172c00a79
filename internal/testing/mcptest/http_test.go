package mcptest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
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

// TestStopClosesLateSessions: Stop waits for a handler still running (an
// initialize whose server is being made), so that a session it opens is
// closed by Stop too rather than left running after the test (goleak
// found one such session's reader after a package's tests).
func TestStopClosesLateSessions(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1.0.0"}, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hs := Serve(t, Stateful, func() *mcp.Server {
		once.Do(func() { close(entered) })
		<-release
		return srv
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		hs.Stop()
	}()
	// Stop has closed the sessions there were and waits for the handler.
	for {
		if hs.handling.waiting() {
			break
		}
		select {
		case <-stopped:
			t.Fatal("Stop returned while a handler was running")
		case <-time.After(time.Millisecond): // polling for Stop's wait
		}
	}
	close(release)
	<-stopped
	<-posted
	for ss := range srv.Sessions() {
		t.Errorf("session %s still open after Stop", ss.ID())
	}
}
