package mcpclient_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer is an AuthProvider with a fixed token.
type bearer string

func (b bearer) Token(context.Context) (string, error) { return string(b), nil }
func (bearer) Authorize(context.Context, *mcpclient.AuthChallenge) (string, error) {
	return "", nil
}

// TestRedirectKeepsSecrets: a server that redirects to another origin (here
// another port of 127.0.0.1) does not hand that origin its bearer token or
// its custom headers, on either transport implementation; the protocol's
// own headers (the session's too) still go, and the connection works.
func TestRedirectKeepsSecrets(t *testing.T) {
	for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
		t.Run(string(impl), func(t *testing.T) {
			srv := mcptest.NewServer("elsewhere")
			real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
			var (
				mu   sync.Mutex
				seen []http.Header
			)
			other := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Clone())
				mu.Unlock()
				real.ServeHTTP(w, r)
			}))
			front := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
			}))
			m := newManager(t, nil)
			connectReady(t, m, "s", mcpclient.ServerOptions{
				URL:  front.URL,
				Auth: bearer("SECRET-TOKEN"),
				Transport: mcpclient.TransportOptions{
					Type:           mcpclient.TransportStreamableHTTP,
					Implementation: impl,
					Headers:        http.Header{"X-Api-Key": {"SECRET-KEY"}},
				},
				Client: mcpclient.ClientOptions{ProtocolVersion: "2025-11-25"},
			})
			if _, err := m.CallTool(testCtx(t), "s", "echo", map[string]any{"text": "x"}, nil); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatal("nothing reached the other origin")
			}
			for _, h := range seen {
				for _, k := range []string{"Authorization", "X-Api-Key"} {
					if v := h.Get(k); v != "" {
						t.Errorf("the other origin got %s: %q", k, v)
					}
				}
				if h.Get("Mcp-Protocol-Version") == "" && h.Get("Accept") == "" {
					t.Errorf("the protocol's headers were dropped too: %v", h)
				}
			}
		})
	}
}
