package viewpolicy

import (
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestPolicy: what a view's _meta.ui.csp may add to its policy: origins
// (https, wss; http and ws to loopback only), a wildcard leftmost label;
// never a keyword, a scheme, a path, "*", a second directive, or the
// dashboard's host.
func TestPolicy(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"https://api.example.com", true},
		{"https://api.example.com:8443", true},
		{"wss://live.example.com", true},
		{"https://*.example.com", true},
		{"http://localhost:3000", true},
		{"http://127.0.0.2:3000", true},
		{"http://api.example.com", false},
		{"https://dash.agentmcp.test", false},
		{"https://DASH.agentmcp.test:444", false},
		{"https://*.agentmcp.test", false},
		{"https://*.example.com.", false},
		{"*", false},
		{"'self'", false},
		{"'unsafe-eval'", false},
		{"data:", false},
		{"https:", false},
		{"https://api.example.com/path", false},
		{"https://a.example.com https://b.example.com", false},
		{"https://a.example.com;script-src *", false},
		{"javascript:alert(1)", false},
	} {
		if got := Source(tt.src, "dash.agentmcp.test:8787"); got != tt.want {
			t.Errorf("Source(%q) = %v; want %v", tt.src, got, tt.want)
		}
	}
	if got := Source("https://*.example.com", "dash.example.com"); got {
		t.Error("a wildcard covering the dashboard's host is allowed")
	}
	got := Policy(mcpclient.ViewCSP{}, "127.0.0.1:1")
	if !strings.Contains(got, "connect-src 'none'") || !strings.Contains(got, "sandbox allow-scripts") || strings.Contains(got, "'self' ") {
		t.Errorf("the policy of a view that asks nothing: %s", got)
	}
}
