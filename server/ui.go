package server

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
)

// index serves the dashboard page at /. With a token, /?token=TOKEN sets
// the token cookie and redirects to the same page without the token, so
// that it stays out of the history and the address bar.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	q := r.URL.Query()
	if tok := q.Get("token"); tok != "" && s.sec.HasToken() {
		if s.sec.Matches(tok) {
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
	var b bytes.Buffer
	if err := s.pages.Lookup("index.html").Execute(&b, struct {
		DefaultAgent      string
		AllowStdioServers bool // the add form offers commands
	}{s.opts.DefaultAgent, s.opts.AllowStdioServers && s.sec.HasToken()}); err != nil {
		writeError(w, apiErrorf(http.StatusInternalServerError, api.CodeInternal, "rendering the dashboard: %v", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// parsePages parses the dashboard's page templates.
func parsePages() *template.Template {
	// The embedded templates are part of the binary: failing to parse
	// them is a build mistake the tests catch.
	return template.Must(template.ParseFS(dashboard.Files(), "index.html", "callback.html"))
}

// static serves the dashboard's assets under /static/, without directory
// listings.
func (s *Server) static() http.Handler {
	sub, err := fs.Sub(dashboard.Files(), "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, apiErrorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "%s is not allowed here (allowed: GET, HEAD)", r.Method))
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if info, err := fs.Stat(sub, name); err != nil || info.IsDir() || !fs.ValidPath(name) {
			writeError(w, apiErrorf(http.StatusNotFound, api.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// oauthDone answers an OAuth callback (the agent's CustomHandler, unless
// Options.OAuthCallback says otherwise) with a page for the popup the
// dashboard opened: it closes itself after a success and shows the error
// after a failure.
func (s *Server) oauthDone(w http.ResponseWriter, r *http.Request, res agent.CallbackResult) {
	var b bytes.Buffer
	if err := s.pages.Lookup("callback.html").Execute(&b, res); err != nil {
		writeError(w, apiErrorf(http.StatusInternalServerError, api.CodeInternal, "rendering the callback page: %v", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	status := http.StatusOK
	if !res.AuthSuccess {
		status = http.StatusBadRequest
	}
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
