package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/oauth/resource"
)

// csp is the Content-Security-Policy of every response: the dashboard's
// own scripts, styles and connections only (images and audio in results
// as data: URLs); no inline script, nothing from another host, no
// framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// security holds the request checks every response goes through.
type security struct {
	token          []byte // sha256 of Options.Token, nil without a token
	allowedHosts   map[string]bool
	trusted        map[string]bool // TrustedOrigins
	originPatterns []string        // for websocket.AcceptOptions
	cop            *http.CrossOriginProtection
	bodyTimeout    time.Duration    // Options.BodyTimeout; negative: none
	writeTimeout   time.Duration    // Options.WriteTimeout; negative: none
	resource       *resource.Server // Options.OAuth's checks of the MCP endpoints; nil without (oauth.go)
}

func newSecurity(o *Options) *security {
	sec := &security{allowedHosts: map[string]bool{}, trusted: map[string]bool{}, cop: http.NewCrossOriginProtection(),
		bodyTimeout: o.BodyTimeout, writeTimeout: o.WriteTimeout}
	if o.Token != "" {
		sum := sha256.Sum256([]byte(o.Token))
		sec.token = sum[:]
	}
	if o.OAuth != nil {
		var public string
		if o.Agent != nil {
			public = o.Agent.CallbackHost
		}
		sec.resource = newResourceServer(o.OAuth, public, func(host string) bool { return sec.hostAllowed(host) })
	}
	for _, h := range o.AllowedHosts {
		sec.allowedHosts[strings.ToLower(h)] = true
	}
	for _, origin := range o.TrustedOrigins {
		if err := sec.cop.AddTrustedOrigin(origin); err != nil {
			continue // not an origin (Open refuses those)
		}
		sec.trusted[origin] = true
		sec.originPatterns = append(sec.originPatterns, origin)
	}
	return sec
}

// wrap applies the checks before mux: security headers on every response;
// the Host check without a token (DNS rebinding); CORS for trusted
// origins; and, on the API and the streams, the cross-site checks (Fetch
// Metadata, then Origin for state-changing methods) and the token. Which
// requests are protected is decided on the route mux will run (see
// protected), so that the check and the routing cannot read a path two
// ways.
func (sec *security) wrap(mux *http.ServeMux) http.Handler {
	next := mux
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if sec.token == nil && !sec.hostAllowed(r.Host) {
			refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeHostNotAllowed,
				"host %q is not served: without an access token only loopback names are (start the server with a token to serve other hosts)", r.Host))
			return
		}
		origin := r.Header.Get("Origin")
		trusted := origin != "" && sec.trusted[origin]
		if trusted {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		_, pattern := mux.Handler(r)
		prot := protected(pattern, r)
		if prot {
			if !trusted && crossSite(r) {
				refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeCrossOrigin, "cross-site requests are refused"))
				return
			}
			if err := sec.cop.Check(r); err != nil {
				refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeCrossOrigin, "cross-origin request refused"))
				return
			}
			if pattern == mcpRoute && sec.resource != nil {
				if !sec.mcpAuthorized(w, r) {
					return
				}
			} else if !sec.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="agentmcp"`)
				refuse(w, r, apiErrorf(http.StatusUnauthorized, api.CodeUnauthorized,
					"an access token is required: send Authorization: Bearer TOKEN, or open the dashboard link that agentmcp serve printed (/?token=...)"))
				return
			}
		}
		// Past the checks: the body, within its limits, then the handler,
		// its answer bounded unless it is a stream.
		if aerr := readBody(w, r, bodyLimit(prot, pattern, r), sec.bodyTimeout); aerr != nil {
			refuse(w, r, aerr)
			return
		}
		if !isStream(pattern, r) {
			w = newDeadlineWriter(w, sec.writeTimeout)
		}
		next.ServeHTTP(w, r)
	})
}

// The routes that need no token. Any other route, including the ones
// added later, is protected.
const (
	indexRoute    = "/{$}"
	staticRoute   = "/static/"
	callbackRoute = "/agents/{class}/{name}/callback"
	fallbackRoute = "/"
)

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

// crossSite reports whether a browser says the request comes from another
// site or origin (Fetch Metadata). Requests without the header (curl,
// programs, old browsers) are judged by the token and the Origin check.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return true
}

// authorized reports whether r carries the token, as a bearer token or
// the cookie; always true without a token.
func (sec *security) authorized(r *http.Request) bool {
	if sec.token == nil {
		return true
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && sec.matches(strings.TrimSpace(tok))
	}
	c, err := r.Cookie(cookieName(r))
	return err == nil && sec.matches(c.Value)
}

// matches compares a token in constant time.
func (sec *security) matches(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], sec.token) == 1
}

// cookieName is the token cookie's name. It carries the port: cookies are
// shared by every port of a host, and two servers on one host must not
// overwrite each other's.
func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return "agentmcp_token_" + port
	}
	return "agentmcp_token"
}

// hostAllowed reports whether a Host header names this machine's loopback
// interface (localhost, *.localhost, 127.0.0.0/8, ::1) or an allowed host.
func (sec *security) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "":
		return false
	case host == "localhost", strings.HasSuffix(host, ".localhost"), sec.allowedHosts[host]:
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
