package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// The dashboard hosts MCP Apps views (dashboard/static/apps.js): after a
// call of a tool with a view, it frames GET .../servers/{id}/view?tool=,
// which answers the view's HTML under a Content-Security-Policy of its
// own: the view runs sandboxed (an opaque origin: no cookie, no storage,
// no same-origin request to the API), with inline scripts and styles, and
// may reach only what its resource's _meta.ui.csp lists, never the
// dashboard's own origin. It talks to the dashboard by postMessage alone.

const viewRoute = "/agents/{class}/{name}/servers/{id}/view"

func (s *Server) appsRoutes(mux *http.ServeMux) {
	mux.Handle(viewRoute, s.agentRoute(methods{http.MethodGet: s.toolView}))
}

// toolView answers the view of the tool named by the query's "tool".
func (s *Server) toolView(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	tool := r.URL.Query().Get("tool")
	if tool == "" {
		writeError(w, required("tool"))
		return
	}
	v, err := callServer(s, r, a, fmt.Sprintf("view of %q", tool), 0, func(ctx context.Context, id string, _ time.Duration) (*mcpclient.View, error) {
		if aerr := knownTool(a, id, tool); aerr != nil {
			return nil, aerr
		}
		v, err := a.ToolView(ctx, id, tool)
		if errors.Is(err, mcpclient.ErrNoView) {
			aerr := apiErrorf(http.StatusNotFound, api.CodeNoView, "tool %q of MCP server %s has no view", tool, id)
			aerr.ServerID = id
			return nil, aerr
		}
		return v, err
	})
	if err != nil {
		writeError(w, s.apiError(r.Context(), err))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", viewCSP(v.CSP(), r.Host))
	h.Set("X-Frame-Options", "SAMEORIGIN") // framed by the dashboard only (frame-ancestors)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write([]byte(v.HTML))
	}
}

// viewCSP is the Content-Security-Policy of a view: nothing but its
// inline scripts and styles, data: images, fonts and media, and the
// origins its _meta.ui.csp lists (safe ones: viewSource) for what they
// are listed for; sandboxed with scripts alone (an opaque origin, even
// when the view is opened outside its frame), framed only by the
// dashboard. host is the dashboard's, which no list may name.
func viewCSP(c mcpclient.ViewCSP, host string) string {
	src := func(list []string, base ...string) string {
		out := append([]string(nil), base...)
		for _, s := range list {
			if viewSource(s, host) && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return "'none'"
		}
		return strings.Join(out, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + src(c.ResourceDomains, "'unsafe-inline'"),
		"style-src " + src(c.ResourceDomains, "'unsafe-inline'"),
		"img-src " + src(c.ResourceDomains, "data:"),
		"font-src " + src(c.ResourceDomains, "data:"),
		"media-src " + src(c.ResourceDomains, "data:"),
		"connect-src " + src(c.ConnectDomains),
		"frame-src " + src(c.FrameDomains),
		"base-uri " + src(c.BaseURIDomains),
		"form-action 'none'",
		"frame-ancestors 'self'",
		"sandbox allow-scripts",
	}, "; ")
}

// sourceRE is an origin a view may list: https or wss (http or ws only
// for a loopback host), a host name (its leftmost label may be "*"), an
// optional port; no path, no keyword, no scheme alone, no bare "*".
var sourceRE = regexp.MustCompile(`^(https|wss|http|ws)://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$`)

// viewSource reports whether s, from a view's _meta.ui.csp, may go into
// its policy: an origin (sourceRE), plain http only to loopback, and not
// the dashboard's own host (the API), whatever the scheme or port.
func viewSource(s, dashboardHost string) bool {
	s = strings.ToLower(s)
	m := sourceRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	scheme, rest, _ := strings.Cut(s, "://")
	hostname := rest
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		hostname = rest[:i]
	}
	if scheme == "http" || scheme == "ws" {
		if hostname != "localhost" && !strings.HasPrefix(hostname, "127.") {
			return false
		}
	}
	dh := strings.ToLower(dashboardHost)
	if i := strings.LastIndexByte(dh, ':'); i >= 0 && !strings.Contains(dh[i:], "]") {
		dh = dh[:i]
	}
	return hostname != dh && !strings.HasSuffix(dh, strings.TrimPrefix(hostname, "*"))
}

// hostApps returns the Manager options of the server's agents: o's, with
// Apps set, since the dashboard renders the servers' views (the clients
// advertise the extension).
func hostApps(o *mcpclient.Options) *mcpclient.Options {
	var mo mcpclient.Options
	if o != nil {
		mo = *o
	}
	mo.Apps = true
	return &mo
}
