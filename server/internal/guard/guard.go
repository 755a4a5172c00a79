package guard

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/oauth/resource"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// CSP is the Content-Security-Policy of every response: the dashboard's
// own scripts, styles and connections only (images and audio in results
// as data: URLs); no inline script, nothing from another host, no
// framing. The dashboard frames its own origin only: the MCP Apps views
// it hosts (package server's view route, which sets a policy of its own
// that lets the dashboard frame it, sandboxed).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; " +
	"connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configure a Guard. Every field is optional.
type Options struct {
	// Token, if set, is required on every route that is not public.
	// Empty means none: then only loopback Host headers (and
	// AllowedHosts) are served.
	Token string

	// AllowedHosts are host names (without port) served in addition to
	// loopback ones when Token is empty.
	AllowedHosts []string

	// TrustedOrigins are origins whose browser pages may use the routes
	// with the user's cookie (CORS, WebSocket origin, CSRF checks).
	// Entries that are not origins are ignored (the server refuses them
	// first).
	TrustedOrigins []string

	// BodyTimeout bounds the reading of a request's body, WriteTimeout the
	// writing of a response that is not a stream once it starts. Zero
	// means none.
	BodyTimeout, WriteTimeout time.Duration

	// Resource, if set, makes the MCP endpoints OAuth 2.1 resource
	// servers (package oauth/resource) of an external authorization
	// server: their requests then need Token or one of its access tokens.
	// Its HostServed is the guard's HostAllowed. Nil means the MCP
	// endpoints take Token like the other routes.
	Resource *resource.ServerOptions
}

// Route is what the guard needs to know of the route a request matched.
type Route struct {
	Public bool  // needs no token, and passes no cross-site check
	Body   int64 // the largest body it takes; 0: its body is not read
	Stream bool  // its response lasts as long as its client (no WriteTimeout)
	MCP    bool  // an MCP endpoint (Options.Resource)
}

// Guard holds the checks every request goes through.
type Guard struct {
	token          []byte // sha256 of Options.Token, nil without a token
	allowedHosts   map[string]bool
	trusted        map[string]bool // TrustedOrigins
	originPatterns []string        // for websocket.AcceptOptions
	cop            *http.CrossOriginProtection
	bodyTimeout    time.Duration
	writeTimeout   time.Duration
	resource       *resource.Server // nil without Options.Resource
}

// New returns a Guard for o (nil means the zero Options).
func New(o *Options) *Guard {
	if o == nil {
		o = &Options{}
	}
	g := &Guard{allowedHosts: map[string]bool{}, trusted: map[string]bool{}, cop: http.NewCrossOriginProtection(),
		bodyTimeout: o.BodyTimeout, writeTimeout: o.WriteTimeout}
	if o.Token != "" {
		sum := sha256.Sum256([]byte(o.Token))
		g.token = sum[:]
	}
	if o.Resource != nil {
		ro := *o.Resource
		ro.HostServed = g.HostAllowed
		g.resource = resource.NewServer(&ro)
	}
	for _, h := range o.AllowedHosts {
		g.allowedHosts[strings.ToLower(h)] = true
	}
	for _, origin := range o.TrustedOrigins {
		if err := g.cop.AddTrustedOrigin(origin); err != nil {
			continue // not an origin
		}
		g.trusted[origin] = true
		g.originPatterns = append(g.originPatterns, origin)
	}
	return g
}

// CheckOrigins returns an error naming the first of origins that is not
// an origin (scheme://host[:port], no path), which New would leave out.
func CheckOrigins(origins []string) error {
	for _, origin := range origins {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(origin); err != nil {
			return fmt.Errorf("%q is not an origin (scheme://host[:port], no path)", origin)
		}
	}
	return nil
}

// Wrap applies the checks before mux: security headers on every response;
// the Host check without a token (DNS rebinding); CORS for trusted
// origins; and, on the routes that are not public, the cross-site checks
// (Fetch Metadata, then Origin for state-changing methods) and the token.
// Then the body is read (Route.Body, within BodyTimeout), and the handler
// runs, its answer bounded by WriteTimeout unless it is a stream. route
// says what the route mux will run for r is (pattern is the one it
// matched).
func (g *Guard) Wrap(mux *http.ServeMux, route func(pattern string, r *http.Request) Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if g.token == nil && !g.HostAllowed(r.Host) {
			Refuse(w, r, reply.Errorf(http.StatusForbidden, api.CodeHostNotAllowed,
				"host %q is not served: without an access token only loopback names are (start the server with a token to serve other hosts)", r.Host))
			return
		}
		origin := r.Header.Get("Origin")
		trusted := origin != "" && g.trusted[origin]
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
		rt := route(pattern, r)
		if !rt.Public {
			if !trusted && CrossSite(r) {
				Refuse(w, r, reply.Errorf(http.StatusForbidden, api.CodeCrossOrigin, "cross-site requests are refused"))
				return
			}
			if err := g.cop.Check(r); err != nil {
				Refuse(w, r, reply.Errorf(http.StatusForbidden, api.CodeCrossOrigin, "cross-origin request refused"))
				return
			}
			if rt.MCP && g.resource != nil {
				if !g.mcpAuthorized(w, r) {
					return
				}
			} else if !g.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="agentmcp"`)
				Refuse(w, r, reply.Errorf(http.StatusUnauthorized, api.CodeUnauthorized,
					"an access token is required: send Authorization: Bearer TOKEN, or open the dashboard link that agentmcp serve printed (/?token=...)"))
				return
			}
		}
		// Past the checks: the body, within its limits, then the handler,
		// its answer bounded unless it is a stream.
		limit := rt.Body
		if rt.Public {
			limit = 0
		}
		if aerr := ReadBody(w, r, limit, g.bodyTimeout); aerr != nil {
			Refuse(w, r, aerr)
			return
		}
		if !rt.Stream {
			w = newDeadlineWriter(w, g.writeTimeout)
		}
		mux.ServeHTTP(w, r)
	})
}

// HasToken reports whether the server has a token (Options.Token).
func (g *Guard) HasToken() bool { return g.token != nil }

// OriginPatterns are the trusted origins, for websocket.AcceptOptions.
func (g *Guard) OriginPatterns() []string { return g.originPatterns }

// CrossSite reports whether a browser says the request comes from another
// site or origin (Fetch Metadata). Requests without the header (curl,
// programs, old browsers) are judged by the token and the Origin check.
func CrossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return true
}

// authorized reports whether r carries the token, as a bearer token or
// the cookie; always true without a token.
func (g *Guard) authorized(r *http.Request) bool {
	if g.token == nil {
		return true
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && g.Matches(strings.TrimSpace(tok))
	}
	c, err := r.Cookie(CookieName(r))
	return err == nil && g.Matches(c.Value)
}

// Matches reports, in constant time, whether tok is the token; false
// without a token.
func (g *Guard) Matches(tok string) bool {
	if g.token == nil {
		return false
	}
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], g.token) == 1
}

// CookieName is the token cookie's name. It carries the port: cookies are
// shared by every port of a host, and two servers on one host must not
// overwrite each other's.
func CookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return "agentmcp_token_" + port
	}
	return "agentmcp_token"
}

// HostAllowed reports whether a Host header names this machine's loopback
// interface (localhost, *.localhost, 127.0.0.0/8, ::1) or an allowed host.
func (g *Guard) HostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "":
		return false
	case host == "localhost", strings.HasSuffix(host, ".localhost"), g.allowedHosts[host]:
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
