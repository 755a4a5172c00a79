package server

import (
	"net/http"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

const appsToken = "apps-token"

// appsEnv is a server with a token and agent test/a holding "apps", an
// MCP Apps server whose view is html and asks for csp, and "other", a
// server without apps.
func appsEnv(t *testing.T, html string, csp func(dashboard string) map[string]any) (*env, *mcptest.AppsServer) {
	t.Helper()
	e := newEnv(t, &Options{Token: appsToken, DefaultAgent: "test/a"})
	srv := mcptest.NewAppsServer("apps", html, csp(e.ts.URL))
	_, url := mcpServerOf(t, srv.Server)
	_, otherURL := mcpServer(t, "other")
	for _, s := range []struct{ id, url string }{{"apps", url}, {"other", otherURL}} {
		if status, _, b := e.do("POST", agentPath+"/servers", `{"name":"`+s.id+`","url":"`+s.url+`","id":"`+s.id+`"}`, "Authorization: Bearer "+appsToken); status != http.StatusCreated {
			t.Fatalf("add %s: %d %s", s.id, status, b)
		}
	}
	return e, srv
}

// TestViewRoute: GET .../servers/{id}/view?tool= answers the view's HTML
// under a policy of its own: sandboxed (scripts only), framed by the
// dashboard alone, reaching only the safe origins its _meta.ui.csp lists
// and never the dashboard's; it needs the token like the API. A tool
// without a view, an unknown tool and a missing one are errors; the view
// is read once while the server's lists are unchanged.
func TestViewRoute(t *testing.T) {
	e, srv := appsEnv(t, "<p>the view</p>", func(dashboard string) map[string]any {
		return map[string]any{
			"connectDomains":  []any{"https://api.example.com", dashboard, "*", "'unsafe-eval'", "https://x.example; script-src *"},
			"resourceDomains": []any{"https://cdn.example.com", "http://cdn.example.com", "data:", "javascript:alert(1)", "https://*.0.0.1"},
			"frameDomains":    []any{"https://frames.example.com/path"},
		}
	})
	auth := "Authorization: Bearer " + appsToken
	view := agentPath + "/servers/apps/view?tool=show"
	status, h, b := e.do("GET", view, "", auth)
	if status != http.StatusOK || string(b) != "<p>the view</p>" {
		t.Fatalf("view: %d %s", status, b)
	}
	want := "default-src 'none'; script-src 'unsafe-inline' https://cdn.example.com; style-src 'unsafe-inline' https://cdn.example.com; " +
		"img-src data: https://cdn.example.com; font-src data: https://cdn.example.com; media-src data: https://cdn.example.com; " +
		"connect-src https://api.example.com; frame-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts"
	if got := h.Get("Content-Security-Policy"); got != want {
		t.Errorf("CSP\n got %s\nwant %s", got, want)
	}
	if got := h.Get("X-Frame-Options"); got != "SAMEORIGIN" {
		t.Errorf("X-Frame-Options %q", got)
	}
	if got := h.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
	if status, _, _ := e.do("GET", view, ""); status != http.StatusUnauthorized {
		t.Errorf("without the token: %d", status)
	}
	if status, _, _ := e.do("GET", view, "", auth); status != http.StatusOK {
		t.Errorf("again: %d", status)
	}
	if n := srv.Reads.Load(); n != 1 {
		t.Errorf("the view was read %d times; want once while the lists are unchanged", n)
	}
	for _, tt := range []struct {
		path   string
		status int
		code   string
	}{
		{"/servers/apps/view?tool=second", http.StatusNotFound, api.CodeNoView},
		{"/servers/other/view?tool=echo", http.StatusNotFound, api.CodeNoView},
		{"/servers/apps/view?tool=nope", http.StatusNotFound, api.CodeUnknownTool},
		{"/servers/apps/view", http.StatusBadRequest, api.CodeInvalidRequest},
		{"/servers/nope/view?tool=show", http.StatusNotFound, api.CodeUnknownServer},
	} {
		status, _, b := e.do("GET", agentPath+tt.path, "", auth)
		if status != tt.status || apiError(t, b).Code != tt.code {
			t.Errorf("%s: %d %s; want %d %s", tt.path, status, b, tt.status, tt.code)
		}
	}
}
