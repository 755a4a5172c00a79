// Package pages serves the dashboard's HTML pages and assets (package
// dashboard embeds them): the page at / (Index), its assets under
// /static/ (Static), and the page an OAuth popup lands on after the
// authorization server sends the user back (OAuthDone).
//
// The page at / also takes the dashboard's link with the server's token
// (/?token=TOKEN): it sets the token cookie (package guard checks it) and
// redirects to the same page without the token, so that it stays out of
// the history and the address bar. Pages are never cached; assets are
// revalidated (no-cache). There are no directory listings.
//
// A Pages is safe for concurrent use.
package pages

import (
	"bytes"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/dashboard"
	"github.com/agentmcp/agentmcp/server/internal/guard"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// Pages are the dashboard's parsed templates.
type Pages struct {
	t *template.Template // index.html and callback.html
}

// New parses the dashboard's page templates. The embedded templates are
// part of the binary: failing to parse them is a build mistake the tests
// catch, so New panics then.
func New() *Pages {
	return &Pages{t: template.Must(template.ParseFS(dashboard.Files(), "index.html", "callback.html"))}
}

// IndexData is what the page at / is rendered with.
type IndexData struct {
	DefaultAgent      string // the agent the page shows first
	AllowStdioServers bool   // the add form offers commands
}

// Index serves the dashboard page at / (GET and HEAD only), rendered with
// data; /?token=TOKEN sets the token cookie when g has a token and TOKEN
// is it, and redirects without the token either way.
func (p *Pages) Index(w http.ResponseWriter, r *http.Request, g *guard.Guard, data IndexData) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		reply.Error(w, reply.Errorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: %s)", r.Method, http.MethodGet))
		return
	}
	q := r.URL.Query()
	if tok := q.Get("token"); tok != "" && g.HasToken() {
		if g.Matches(tok) {
			http.SetCookie(w, &http.Cookie{
				Name: guard.CookieName(r), Value: tok, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
		}
		q.Del("token")
		target := "/"
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	p.render(w, "index.html", data, http.StatusOK, "the dashboard")
}

// render writes template name with data as an HTML page with status.
func (p *Pages) render(w http.ResponseWriter, name string, data any, status int, what string) {
	var b bytes.Buffer
	if err := p.t.Lookup(name).Execute(&b, data); err != nil {
		reply.Error(w, reply.Errorf(http.StatusInternalServerError, api.CodeInternal, "rendering %s: %v", what, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// Static serves the dashboard's assets under /static/, without directory
// listings.
func Static() http.Handler {
	sub, err := fs.Sub(dashboard.Files(), "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			reply.Error(w, reply.Errorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: GET, HEAD)", r.Method))
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if info, err := fs.Stat(sub, name); err != nil || info.IsDir() || !fs.ValidPath(name) {
			reply.Error(w, reply.Errorf(http.StatusNotFound, api.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// OAuthDone answers an OAuth callback with a page for the popup the
// dashboard opened: it closes itself after a success, and shows the
// error (400) after a failure. It is an agent.OAuthCallbackConfig's
// CustomHandler.
func (p *Pages) OAuthDone(w http.ResponseWriter, r *http.Request, res agent.CallbackResult) {
	status := http.StatusOK
	if !res.AuthSuccess {
		status = http.StatusBadRequest
	}
	p.render(w, "callback.html", res, status, "the callback page")
}
