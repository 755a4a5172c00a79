package server

import (
	"net/http"
	"path"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/agentmcp/agentmcp/server/internal/guard"
)

// The defaults of the connection and request limits (Options).
const (
	defaultHeaderTimeout = 10 * time.Second
	defaultBodyTimeout   = 30 * time.Second
	defaultWriteTimeout  = 60 * time.Second
	defaultIdleTimeout   = 60 * time.Second
	// maxHeaderBytes caps a request's header (net/http's default is 1 MiB).
	maxHeaderBytes = 64 << 10
)

// HTTPServer returns an http.Server that serves s on the connections it
// accepts, with the connection limits of Options: a request's headers must
// arrive within HeaderTimeout, at most 64 KiB of them; a keep-alive
// connection idle for IdleTimeout is closed. It sets no ReadTimeout or
// WriteTimeout, which would cut the WebSocket and SSE streams: s bounds
// each request's body and each response's writing itself (BodyTimeout,
// WriteTimeout), and the streams by their pings (KeepAlive). It registers
// s.CloseStreams to run on Shutdown. The caller may set other fields
// (ErrorLog, TLSConfig) before serving.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opts.HeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	hs.RegisterOnShutdown(s.CloseStreams)
	return hs
}

// The stream routes: their responses last as long as the client stays,
// and their own pings bound them (see stream.go).
const (
	agentRootRoute = "/agents/{class}/{name}" // a WebSocket when upgraded
	eventsRoute    = "/agents/{class}/{name}/events"
)

// isStream reports whether r, matched to pattern, opens a stream.
func isStream(pattern string, r *http.Request) bool {
	switch pattern {
	case eventsRoute, mcpRoute:
		// An MCP response is a stream (server-sent events) as long as a
		// call or a session's GET lasts.
		return true
	case agentRootRoute:
		return httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket")
	}
	return false
}

// bodyLimit is the largest body a request may carry: a JSON document on
// the API's POST routes (and the PUTs of exposureRoute and policyRoute), an MCP message on
// mcpRoute; anywhere else (and on the public routes) a body is not read
// (guard.ReadBody).
func bodyLimit(pattern string, r *http.Request) int64 {
	switch {
	case r.Method == http.MethodPut && (pattern == exposureRoute || pattern == policyRoute):
		return maxBody
	case r.Method != http.MethodPost:
		return 0
	case pattern == mcpRoute:
		return maxMCPBody
	}
	return maxBody
}

// The routes that need no token. Any other route, including the ones
// added later, is protected.
const (
	indexRoute    = "/{$}"
	staticRoute   = "/static/"
	callbackRoute = "/agents/{class}/{name}/callback"
	fallbackRoute = "/"
)

// route is what the security layer (package guard, Server.sec) needs to
// know of the route r matched (pattern): whether it needs the token, the
// body it takes, whether it is a stream or an MCP endpoint.
func route(pattern string, r *http.Request) guard.Route {
	return guard.Route{Public: !protected(pattern, r), Body: bodyLimit(pattern, r), Stream: isStream(pattern, r), MCP: pattern == mcpRoute}
}

// protected reports whether r needs the token: everything but the
// dashboard's page and assets, and the OAuth callback, which the
// authorization server's redirect reaches without the user's token (its
// single-use state protects it). The answer comes from the route mux
// matches for r, on the same (escaped) path it matches on, so that an
// encoded slash ("/agents/c/n%2Fcallback", one path segment) or an encoded
// letter ("/%61gents/...") is judged as the route that will serve it. The
// fallback route (custom OAuth callback paths, and not found) is protected
// under /agents, as the API's unknown paths are.
func protected(pattern string, r *http.Request) bool {
	switch pattern {
	case indexRoute, staticRoute, resourceMetadataRoute:
		return false
	case callbackRoute:
		// A path that is not clean gets a redirect to the clean one, not
		// the callback: protected, as anything else.
		p := r.URL.EscapedPath()
		return path.Clean(p) != p
	case fallbackRoute:
		return underAgents(r.URL.Path) || underAgents(r.URL.EscapedPath())
	}
	return true
}

func underAgents(p string) bool {
	return p == "/agents" || strings.HasPrefix(p, "/agents/")
}
