package mcpclient_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// gateCases are the eras and transports the gate tests run on: both eras
// of our transports, and go-sdk's.
var gateCases = []struct {
	name string
	mode mcptest.Mode
	impl mcpclient.TransportImplementation
}{
	{"2025-11-25", mcptest.Stateful, ""},
	{"2026-07-28", mcptest.Stateless, ""},
	{"go-sdk", mcptest.Stateful, mcpclient.ImplementationGoSDK},
}

// countedServer serves a test MCP server in mode and counts the HTTP
// requests it receives.
func countedServer(t *testing.T, mode mcptest.Mode) (string, *atomic.Int64) {
	srv := mcptest.NewServer("gated")
	requests := new(atomic.Int64)
	real := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		real.ServeHTTP(w, r)
	}))
	return hs.URL, requests
}

// TestGate: with the gate closed, calls fail with ErrGateClosed and the
// server gets nothing; opened again, they go through (both eras, both of
// our transports and go-sdk's).
func TestGate(t *testing.T) {
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := countedServer(t, tc.mode)
			var closed atomic.Bool
			stopped := errors.New("the replica's lease is not trusted")
			m := newManager(t, &mcpclient.Options{Gate: func() error {
				if closed.Load() {
					return stopped
				}
				return nil
			}})
			connectReady(t, m, "s", mcpclient.ServerOptions{Name: "S", URL: url,
				Transport: mcpclient.TransportOptions{Implementation: tc.impl}})
			ctx := testCtx(t)
			if _, err := m.CallTool(ctx, "s", "echo", map[string]any{"text": "open"}, nil); err != nil {
				t.Fatal(err)
			}
			closed.Store(true)
			before := requests.Load()
			_, err := m.CallTool(ctx, "s", "echo", map[string]any{"text": "closed"}, nil)
			if !errors.Is(err, mcpclient.ErrGateClosed) || !errors.Is(err, stopped) {
				t.Errorf("call through a closed gate: %v", err)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("the server got %d requests through a closed gate", n)
			}
			closed.Store(false)
			if _, err := m.Reconnect(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			if _, err := m.CallTool(ctx, "s", "echo", map[string]any{"text": "open"}, nil); err != nil {
				t.Errorf("call once the gate opened: %v", err)
			}
		})
	}
}

// TestGateAtWrite: a request that passed the gate's first check (before
// its connection is taken) is still not written when the gate closes
// before the write, as when the process is stopped between the two.
func TestGateAtWrite(t *testing.T) {
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := countedServer(t, tc.mode)
			// armed: the next check passes and closes the gate behind it.
			var armed, closed atomic.Bool
			stopped := errors.New("the replica's lease is not trusted")
			m := newManager(t, &mcpclient.Options{Gate: func() error {
				if closed.Load() {
					return stopped
				}
				if armed.CompareAndSwap(true, false) {
					closed.Store(true)
				}
				return nil
			}})
			connectReady(t, m, "s", mcpclient.ServerOptions{Name: "S", URL: url,
				Transport: mcpclient.TransportOptions{Implementation: tc.impl}})
			ctx := testCtx(t)
			before := requests.Load()
			armed.Store(true)
			_, err := m.CallTool(ctx, "s", "echo", map[string]any{"text": "late"}, nil)
			if err == nil {
				t.Errorf("a call whose write came after the gate closed succeeded")
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("the server got %d requests written after the gate closed", n)
			}
			if err != nil && (!errors.Is(err, mcpclient.ErrGateClosed) || !errors.Is(err, stopped)) {
				t.Errorf("call whose write the gate stopped: %v; want ErrGateClosed and the gate's error", err)
			}
		})
	}
}
