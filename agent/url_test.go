package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/netguard"
)

// TestAddMCPServerTrailingSlash: one trailing slash on the path does not
// make another server, with a generated or a stable id, and the URL
// stored and dialled stays the one first given.
func TestAddMCPServerTrailingSlash(t *testing.T) {
	for _, tt := range []struct {
		name        string
		first, then string // paths
		id          string
	}{
		{name: "slash-added", first: "/mcp", then: "/mcp/"},
		{name: "slash-dropped", first: "/mcp/", then: "/mcp"},
		{name: "stable-id", first: "/mcp", then: "/mcp/", id: "docs"},
		{name: "case-port-slash", first: "/mcp", then: "/mcp/", id: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcptest.NewServer("s")
			h := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
			var mu sync.Mutex
			var paths []string
			handshakes := 0
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var msg struct{ Method string }
				json.Unmarshal(body, &msg)
				if msg.Method == "initialize" || msg.Method == "server/discover" {
					mu.Lock()
					handshakes++
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			st := openSQLite(t, "")
			a := openAgent(t, st, "slash", nil)
			ctx := testCtx(t)
			opts := &agent.AddOptions{ID: tt.id}

			first, err := a.AddMCPServer(ctx, "Docs", hs.URL+tt.first, opts)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			before := handshakes
			mu.Unlock()
			then := hs.URL + tt.then
			if tt.name == "case-port-slash" {
				then = strings.Replace(then, "http://127.0.0.1:", "HTTP://127.0.0.1:", 1)
			}
			again, err := a.AddMCPServer(ctx, "Docs", then, opts)
			if err != nil || again != first {
				t.Errorf("add of %s = %+v, %v; want %+v", tt.then, again, err, first)
			}
			if n := len(a.MCPServers().Servers); n != 1 {
				t.Errorf("%d servers, want 1", n)
			}
			rows, _ := st.ListServers(ctx, a.Namespace())
			var urls []string
			for _, row := range rows {
				urls = append(urls, row.URL)
			}
			if diff := cmp.Diff([]string{hs.URL + tt.first}, urls); diff != "" {
				t.Errorf("stored URLs (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if n := handshakes - before; n != 0 {
				t.Errorf("the second add made %d handshakes, want none", n)
			}
			for _, p := range paths {
				if p != tt.first {
					t.Errorf("a request went to %s, want %s only", p, tt.first)
					break
				}
			}
		})
	}
}

func TestSameServerURL(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"https://x.example/mcp", "https://x.example/mcp/", true},
		{"https://x.example/mcp/", "HTTPS://X.EXAMPLE:443/mcp", true},
		{"https://x.example", "https://x.example/", true},
		{"https://x.example/mcp?a=1", "https://x.example/mcp/?a=1", true},
		{"https://x.example/mcp", "https://x.example/mcp//", false},
		{"https://x.example/mcp", "https://x.example/mcp?a=1", false},
		{"https://x.example/mcp", "https://x.example:8443/mcp/", false},
		{"https://x.example/a/mcp", "https://x.example/a/mcp/", true},
		{"not a url", "not a url", false},
	} {
		if got := agent.SameServerURL(tt.a, tt.b); got != tt.want {
			t.Errorf("SameServerURL(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := agent.SameServerURL(tt.b, tt.a); got != tt.want {
			t.Errorf("SameServerURL(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestBlockedBeforeScheme: the SSRF guard judges the host before the
// scheme, as netguard documents, on every way in.
func TestBlockedBeforeScheme(t *testing.T) {
	st := openSQLite(t, "")
	a := openAgent(t, st, "order", nil)
	ctx := testCtx(t)
	for _, raw := range []string{"ftp://10.0.0.1/", "ftp://169.254.169.254/", "file://192.168.1.1/x"} {
		if _, err := a.AddMCPServer(ctx, "X", raw, nil); !errors.Is(err, netguard.ErrBlockedURL) || !strings.HasPrefix(err.Error(), "Blocked URL:") {
			t.Errorf("AddMCPServer(%s) = %v, want Blocked URL", raw, err)
		}
		if err := a.CheckAdd("X", raw, nil); !errors.Is(err, netguard.ErrBlockedURL) {
			t.Errorf("CheckAdd(%s) = %v, want Blocked URL", raw, err)
		}
	}
	// A public host under another scheme is merely unsupported.
	_, err := a.AddMCPServer(ctx, "X", "ftp://example.com/", nil)
	if err == nil || errors.Is(err, netguard.ErrBlockedURL) {
		t.Errorf("ftp://example.com/: %v, want an unsupported-scheme error", err)
	}
	if rows, _ := st.ListServers(ctx, a.Namespace()); len(rows) != 0 {
		t.Errorf("%d rows stored", len(rows))
	}
}
