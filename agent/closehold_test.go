package agent_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdingServer serves mcptest's server in mode, except that the first
// POST whose JSON-RPC method is method is held: the server reads it, says
// so on held, and answers only when the test ends, or when the client
// goes away.
func holdingServer(t *testing.T, mode mcptest.Mode, method string) (url string, held <-chan struct{}) {
	t.Helper()
	inner := mcptest.Handler(t, mode, func() *mcp.Server { return mcptest.NewServer("s").Server })
	heldc, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			first := false
			if strings.Contains(string(body), `"method":"`+method+`"`) {
				once.Do(func() { first = true })
			}
			if first {
				close(heldc)
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(release) }) // before the server stops
	return hs.URL, heldc
}

// TestCloseHeldHandshake: an agent whose stored server holds the answer
// to its handshake (it read the request and has not answered) while the
// agent restores it closes at once (as its Host hibernates it), in both
// protocol eras: the answer never comes, and only Close ends the wait.
func TestCloseHeldHandshake(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   mcptest.Mode
		method string
	}{
		{"2025-11-25", mcptest.Stateful, "initialize"},
		{"2026-07-28", mcptest.Stateless, "server/discover"},
		{"2025-11-25/tools-list", mcptest.Stateful, "tools/list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, held := holdingServer(t, tc.mode, tc.method)
			ctx := testCtx(t)
			st := openSQLite(t, "")
			if err := st.PutServer(ctx, store.Server{Namespace: "TestAgent/held", ID: "s1", Name: "Held", URL: url}); err != nil {
				t.Fatal(err)
			}
			a, err := agent.Open(ctx, st, "TestAgent", "held", nil)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-held:
			case <-ctx.Done():
				a.Close(ctx)
				t.Fatalf("the server never received %s", tc.method)
			}
			closed := make(chan error, 1)
			start := time.Now()
			go func() { closed <- a.Close(ctx) }()
			safety := time.NewTimer(10 * time.Second) // a safety net, not a speed goal
			defer safety.Stop()
			select {
			case err := <-closed:
				t.Logf("Close returned in %v", time.Since(start))
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			case <-safety.C:
				t.Errorf("Close waited for the server's answer to %s", tc.method)
			}
		})
	}
}
