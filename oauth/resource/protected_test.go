package resource

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestServerResource: the resource a request is for is at the public URL
// when there is one; else at the request's Host only when it is a host
// the server serves at the port the request came in on, or when the
// audience is fixed; otherwise ErrHostNotServed. The challenge and the
// metadata name that resource.
func TestServerResource(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}
	req := func(host, path string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
	}
	served := func(host string) bool { return host == "localhost" }
	tests := []struct {
		name           string
		opts           ServerOptions
		r              *http.Request
		resource, meta string
		err            error
	}{
		{"public URL", ServerOptions{PublicURL: "https://mcp.example.com/"}, req("evil.example", "/agents/a/b/mcp"),
			"https://mcp.example.com/agents/a/b/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/agents/a/b/mcp", nil},
		{"served host", ServerOptions{HostServed: served}, req("localhost:8787", "/agents/a/b/mcp"),
			"http://localhost:8787/agents/a/b/mcp", "http://localhost:8787/.well-known/oauth-protected-resource/agents/a/b/mcp", nil},
		{"metadata request", ServerOptions{HostServed: served}, req("localhost:8787", "/.well-known/oauth-protected-resource/agents/a/b/mcp"),
			"http://localhost:8787/agents/a/b/mcp", "http://localhost:8787/.well-known/oauth-protected-resource/agents/a/b/mcp", nil},
		{"another port", ServerOptions{HostServed: served}, req("localhost:9999", "/agents/a/b/mcp"), "", "", ErrHostNotServed},
		{"another host", ServerOptions{HostServed: served}, req("evil.example:8787", "/agents/a/b/mcp"), "", "", ErrHostNotServed},
		{"no hosts served", ServerOptions{}, req("localhost:8787", "/agents/a/b/mcp"), "", "", ErrHostNotServed},
		{"fixed audience", ServerOptions{Audience: "urn:mcp"}, req("evil.example", "/agents/a/b/mcp"),
			"http://evil.example/agents/a/b/mcp", "http://evil.example/.well-known/oauth-protected-resource/agents/a/b/mcp", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Issuer = "https://auth.example.com"
			tt.opts.Scopes = []string{"mcp", "read"}
			s := NewServer(&tt.opts)
			resource, meta, err := s.Resource(tt.r)
			if resource != tt.resource || meta != tt.meta || !errors.Is(err, tt.err) {
				t.Fatalf("Resource = %q, %q, %v; want %q, %q, %v", resource, meta, err, tt.resource, tt.meta, tt.err)
			}
			c, err := s.Challenge(tt.r, true)
			want := `Bearer resource_metadata="` + tt.meta + `", scope="mcp read", error="invalid_token"`
			if tt.err != nil {
				want = ""
			}
			if c != want || !errors.Is(err, tt.err) {
				t.Errorf("Challenge = %q, %v; want %q", c, err, want)
			}
			md, err := s.Metadata(tt.r, "x")
			if tt.err == nil && (err != nil || md.Resource != tt.resource || md.AuthorizationServers[0] != "https://auth.example.com" || len(md.ScopesSupported) != 2) {
				t.Errorf("Metadata = %+v, %v", md, err)
			}
		})
	}
}
