package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/guard"
)

// stdioGate refuses, before the agent is opened or the request forwarded
// to the replica that holds it, a POST that adds a stdio server when such
// adds are not allowed (checkStdio). Other requests pass untouched. The
// body was read into memory by the security wrapper.
func (s *Server) stdioGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			data, err := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(data))
			var peek struct {
				Command string `json:"command"`
			}
			if err == nil && json.Unmarshal(data, &peek) == nil && peek.Command != "" {
				if aerr := s.checkStdio(r); aerr != nil {
					writeError(w, aerr)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkStdio says whether r may add a stdio server: starting a command
// from a network request is running code on this machine, so it takes
// Options.AllowStdioServers, an access token (which r carried: the
// security wrapper checked it), and a request that is not a browser's from
// another site or origin, even a trusted one.
func (s *Server) checkStdio(r *http.Request) *api.APIError {
	switch {
	case !s.opts.AllowStdioServers:
		return apiErrorf(http.StatusForbidden, api.CodeStdioNotAllowed,
			"adding a stdio server (a command) through the API is not allowed: start agentmcp serve with --allow-stdio-servers, or add it with agentmcp add --db or agentmcp import")
	case !s.sec.HasToken():
		return apiErrorf(http.StatusForbidden, api.CodeStdioNotAllowed, "adding a stdio server through the API needs an access token, and this server has none")
	case guard.CrossSiteOrOrigin(r):
		return apiErrorf(http.StatusForbidden, api.CodeStdioNotAllowed, "stdio servers cannot be added by a page of another site or origin")
	}
	return nil
}
