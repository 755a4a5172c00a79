package mcpclient_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdingServer serves mcptest's server in mode, except that the first
// POST whose JSON-RPC method is method is held: the server reads it, says
// so on the returned channel, and answers only once release is closed (at
// the end of the test at the latest), or when the client goes away. With
// method "endpoint", the SSE event stream is opened and its endpoint
// event held.
func holdingServer(t *testing.T, mode mcptest.Mode, method string) (url string, held <-chan struct{}, release func()) {
	t.Helper()
	inner := mcptest.Handler(t, mode, func() *mcp.Server { return mcptest.NewServer("s").Server })
	heldc := make(chan struct{})
	releasec := make(chan struct{})
	var once, heldOnce sync.Once
	release = func() { once.Do(func() { close(releasec) }) }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if method == "endpoint" && r.Method == http.MethodGet {
			// An HTTP+SSE server that opens the event stream and holds
			// its endpoint event.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			heldOnce.Do(func() { close(heldc) })
			select {
			case <-releasec:
			case <-r.Context().Done():
			}
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"method":"`+method+`"`) {
				first := false
				heldOnce.Do(func() { first = true })
				if first {
					close(heldc)
					select {
					case <-releasec:
					case <-r.Context().Done():
						return
					}
				}
			}
		}
		inner.ServeHTTP(w, r)
	})
	hs := mcptest.ServeHandler(t, h)
	t.Cleanup(release) // before the server stops (cleanups run last first)
	return hs.URL, heldc, release
}

// closeHeld holds method's answer on a server in mode while the Manager
// connects (or discovers) it, then checks that Manager.Close returns
// without the answer: only Close can end the wait.
func closeHeld(t *testing.T, mode mcptest.Mode, transport mcpclient.TransportOptions, method string) {
	url, held, release := holdingServer(t, mode, method)
	m := mcpclient.New(nil)
	ctx := testCtx(t)
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: url, Transport: transport}); err != nil {
		t.Fatal(err)
	}
	if err := m.EstablishConnection("s1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatalf("the server never received %s", method)
	}
	closed := make(chan error, 1)
	start := time.Now()
	go func() { closed <- m.Close(ctx) }()
	safety := time.NewTimer(10 * time.Second) // a safety net, not a speed goal
	defer safety.Stop()
	select {
	case err := <-closed:
		t.Logf("Close returned in %v: %v", time.Since(start), err)
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-safety.C:
		release() // the answer, so that the Manager can end
		<-closed
		t.Fatalf("Close waited for the server's answer to %s", method)
	}
}

// TestCloseHeldHandshake: closing a Manager whose server holds the answer
// to a request of the handshake or of the first discovery (it read the
// request and has not answered) returns at once, in both protocol eras
// and over HTTP+SSE (the endpoint event held too): the request in flight
// is cancelled under its reader, or, for a legacy initialize whose answer
// may name a session to end, no longer waited for (the wait was two
// seconds; transport's TestCloseHeldInitialize makes it an hour).
func TestCloseHeldHandshake(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      mcptest.Mode
		transport mcpclient.TransportOptions
		method    string
	}{
		{"2025-11-25/initialize", mcptest.Stateful, mcpclient.TransportOptions{}, "initialize"},
		{"2025-11-25/tools-list", mcptest.Stateful, mcpclient.TransportOptions{}, "tools/list"},
		{"2026-07-28/discover", mcptest.Stateless, mcpclient.TransportOptions{}, "server/discover"},
		{"2026-07-28/tools-list", mcptest.Stateless, mcpclient.TransportOptions{}, "tools/list"},
		{"go-sdk/initialize", mcptest.Stateful, mcpclient.TransportOptions{Implementation: mcpclient.ImplementationGoSDK}, "initialize"},
		{"sse/endpoint", mcptest.SSE, mcpclient.TransportOptions{Type: mcpclient.TransportSSE}, "endpoint"},
		{"sse/initialize", mcptest.SSE, mcpclient.TransportOptions{Type: mcpclient.TransportSSE}, "initialize"},
		{"sse/tools-list", mcptest.SSE, mcpclient.TransportOptions{Type: mcpclient.TransportSSE}, "tools/list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closeHeld(t, tc.mode, tc.transport, tc.method)
		})
	}
}
