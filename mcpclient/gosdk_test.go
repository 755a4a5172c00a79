package mcpclient_test

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkTransport selects go-sdk's streamable HTTP transport.
var sdkTransport = mcpclient.TransportOptions{Implementation: mcpclient.ImplementationGoSDK}

// TestGoSDKTransport checks the Manager on go-sdk's streamable HTTP
// transport, in both eras: the catalog, a call, list_changed, custom
// headers on every request, and no resumable session.
func TestGoSDKTransport(t *testing.T) {
	for _, era := range eras {
		if era.mode == mcptest.SSE {
			continue
		}
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer("s")
			real := mcptest.Handler(t, era.mode, func() *mcp.Server { return srv.Server })
			var mu sync.Mutex
			var tenants []string
			hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				tenants = append(tenants, r.Header.Get("X-Tenant"))
				mu.Unlock()
				real.ServeHTTP(w, r)
			}))
			m := newManager(t, nil)
			rec := record(m)
			opts := sdkTransport
			opts.Headers = http.Header{"X-Tenant": {"t-42"}}
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: opts})
			info, _ := m.Server("s1")
			if info.ProtocolVersion != era.version || info.Transport != mcpclient.TransportStreamableHTTP {
				t.Errorf("transport %s, version %s; want streamable-http, %s", info.Transport, info.ProtocolVersion, era.version)
			}
			if info.Resume != nil {
				t.Errorf("a go-sdk transport session offers a resume: %+v", info.Resume)
			}
			res, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "hi"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != "echo: hi" {
				t.Errorf("echo = %q", got)
			}
			srv.AddTool("late")
			rec.waitFor(t, "tools event", func(ev mcpclient.Event) bool {
				return ev.Kind == mcpclient.EventToolsChanged &&
					slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), "s1/late")
			})
			mu.Lock()
			defer mu.Unlock()
			for i, tenant := range tenants {
				if tenant != "t-42" {
					t.Errorf("request %d without the custom header", i)
				}
			}
		})
	}
}

// TestGoSDKTransportErrors checks that go-sdk's transport reports the
// statuses the Manager acts on as the default transport does: 401 as
// unauthorized, and a handshake 404 as "not streamable HTTP" (so that auto
// falls back to SSE).
func TestGoSDKTransportErrors(t *testing.T) {
	t.Run("unauthorized", func(t *testing.T) {
		srv := mcptest.NewServer("s")
		hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
		hs.SetFault(http.StatusUnauthorized)
		m := newManager(t, nil)
		if _, err := m.RegisterServer(testCtx(t), "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: sdkTransport}); err != nil {
			t.Fatal(err)
		}
		res, err := m.ConnectToServer(testCtx(t), "s1")
		if err != nil || res.State != mcpclient.StateAuthenticating || !mcpclient.IsUnauthorized(res.Err) {
			t.Errorf("ConnectToServer = %+v, %v; want authenticating with an unauthorized error", res, err)
		}
		var herr *mcpclient.HTTPError
		if !errors.As(res.Err, &herr) || herr.StatusCode != http.StatusUnauthorized {
			t.Errorf("error %v is not an *HTTPError with status 401", res.Err)
		}
	})
	t.Run("auto falls back to SSE", func(t *testing.T) {
		srv := mcptest.NewServer("s")
		hs := mcptest.Serve(t, mcptest.SSE, func() *mcp.Server { return srv.Server })
		m := newManager(t, nil)
		connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL, Transport: sdkTransport})
		if info, _ := m.Server("s1"); info.Transport != mcpclient.TransportSSE {
			t.Errorf("transport %s, want sse", info.Transport)
		}
	})
	t.Run("unknown implementation", func(t *testing.T) {
		m := newManager(t, nil)
		_, err := m.RegisterServer(testCtx(t), "s1", mcpclient.ServerOptions{URL: "http://127.0.0.1:1/mcp",
			Transport: mcpclient.TransportOptions{Implementation: "other"}})
		if err == nil {
			t.Error("RegisterServer accepted an unknown transport implementation")
		}
	})
}
