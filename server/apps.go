package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server/internal/viewpolicy"
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
	h.Set("Content-Security-Policy", viewpolicy.Policy(v.CSP(), r.Host))
	h.Set("X-Frame-Options", "SAMEORIGIN") // framed by the dashboard only (frame-ancestors)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write([]byte(v.HTML))
	}
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
