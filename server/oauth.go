package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/oauth/resource"
)

// OAuthOptions make the agents' MCP endpoints OAuth 2.1 resource servers
// of an external authorization server, so that an MCP host can sign in the
// standard way: a request without a valid token gets 401 with a
// WWW-Authenticate challenge naming the endpoint's protected resource
// metadata (RFC 9728), which names the authorization server.
//
// Access tokens are verified as JWTs by package oauth/resource (its doc
// says how, and why JWTs rather than introspection): signed by a key of
// the authorization server's JWKS, issued by Issuer, for Audience, with
// Scopes, not expired.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer URL; its metadata is
	// read from Issuer's RFC 8414 (or OpenID) well-known URL. Required.
	Issuer string

	// Audience is the audience (aud) a token must carry. Empty means the
	// endpoint's own URL, the resource indicator (RFC 8707) an MCP host
	// asks tokens for: at the public URL (Options.Agent.CallbackHost) when
	// there is one; else at the request's Host only when it names this
	// machine's loopback interface or one of Options.AllowedHosts, with the
	// port of the listener the request came in on. A request for another
	// Host is then refused (403 host_not_allowed) unless it carries the
	// server's own token: the client cannot choose the audience its token
	// is checked against.
	Audience string

	// Scopes are the scopes a token must have, also advertised as
	// scopes_supported. Nil means none.
	Scopes []string

	// HTTPClient fetches the authorization server's metadata and keys.
	// Nil means resource.Options.HTTPClient's default: a client behind an
	// SSRF guard that allows Issuer's host, so that a metadata document
	// cannot point the server at a cloud metadata endpoint or another
	// internal host.
	HTTPClient *http.Client

	// Now is the clock tokens are checked against. Nil means time.Now.
	Now func() time.Time
}

// resourceMetadataRoute serves the protected resource metadata of an
// agent's MCP endpoint (RFC 9728 §3.1: the well-known prefix inserted
// before the resource's path). It needs no token.
const resourceMetadataRoute = "GET /.well-known/oauth-protected-resource/agents/{class}/{name}/mcp"

// wellKnownResource is the RFC 9728 well-known prefix.
const wellKnownResource = "/.well-known/oauth-protected-resource"

// resourceServer checks the OAuth access tokens of the MCP endpoints: the
// endpoint a request is for, its challenge and its metadata here, the
// token itself by package oauth/resource.
type resourceServer struct {
	opts      OAuthOptions
	verifier  *resource.Verifier
	publicURL string // the server's public origin, "" for the request's
	// hostServed reports whether a host name (no port) is one the server
	// serves as its own (security.hostAllowed); nil: none.
	hostServed func(host string) bool
}

func newResourceServer(o *OAuthOptions, publicURL string) *resourceServer {
	rs := &resourceServer{opts: *o, publicURL: strings.TrimSuffix(publicURL, "/")}
	rs.opts.Scopes = slices.Clone(o.Scopes)
	rs.verifier = resource.New(&resource.Options{Issuer: o.Issuer, Scopes: o.Scopes, HTTPClient: o.HTTPClient, Now: o.Now})
	return rs
}

// endpoint returns the URL of the MCP endpoint r is for, and of its
// metadata. Without a public URL the origin is r's, and ok reports whether
// it is this server's (ownOrigin); with an Audience the origin names the
// endpoint only, and any is ok.
func (rs *resourceServer) endpoint(r *http.Request) (resource, metadata string, ok bool) {
	origin, ok := rs.publicURL, true
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
		ok = rs.opts.Audience != "" || rs.ownOrigin(r, scheme)
	}
	// The request is for the endpoint or for its metadata: the path
	// (as routed, /agents/{class}/{name}/mcp) names the endpoint either way.
	p := strings.TrimPrefix(r.URL.EscapedPath(), wellKnownResource)
	return origin + p, origin + wellKnownResource + p, ok
}

// ownOrigin reports whether r's Host names this server: a host it serves
// (a loopback name or address, or an allowed host) and the port of the
// listener r came in on (the scheme's default when the Host has none). A
// Host header is the client's to write: any other would let it choose the
// audience its token is checked against.
func (rs *resourceServer) ownOrigin(r *http.Request, scheme string) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || rs.hostServed == nil {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if scheme == "https" {
			port = "443"
		}
	}
	_, localPort, err := net.SplitHostPort(local.String())
	return err == nil && port == localPort && rs.hostServed(host)
}

// refuseHost answers a request whose Host is not this server's when the
// audience would come from it.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeHostNotAllowed,
		"host %q is not this server's: access tokens are accepted for its public URL (agentmcp serve --public-url), or for loopback and allowed host names at the port it listens on", r.Host))
}

// challenge answers 401 with the RFC 9728 challenge.
func (rs *resourceServer) challenge(w http.ResponseWriter, r *http.Request, reason string) {
	_, metadata, ok := rs.endpoint(r)
	if !ok {
		refuseHost(w, r)
		return
	}
	params := fmt.Sprintf("resource_metadata=%q", metadata)
	if len(rs.opts.Scopes) > 0 {
		params += fmt.Sprintf(", scope=%q", strings.Join(rs.opts.Scopes, " "))
	}
	if reason != "" {
		params += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+params)
	msg := "an access token is required: sign in with the authorization server named by the resource metadata (WWW-Authenticate), or send the access token of agentmcp serve"
	if reason != "" {
		msg = "the access token is not valid here: " + reason
	}
	refuse(w, r, apiErrorf(http.StatusUnauthorized, api.CodeUnauthorized, "%s", msg))
}

// serveMetadata serves an endpoint's protected resource metadata.
func (rs *resourceServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	resource, _, ok := rs.endpoint(r)
	if !ok {
		refuseHost(w, r)
		return
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{rs.opts.Issuer},
		ScopesSupported:        rs.opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentmcp agent " + r.PathValue("class") + "/" + r.PathValue("name"),
	}).ServeHTTP(w, r)
}

// bearerToken returns r's bearer token, or "".
func bearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// errHostNotServed refuses a token when the audience would come from a
// Host that is not this server's (resourceServer.ownOrigin).
var errHostNotServed = errors.New("host not served")

// verify checks a JWT access token for the endpoint r is for: its
// audience is Audience, else the endpoint's URL (errHostNotServed when r's
// Host is not this server's).
func (rs *resourceServer) verify(ctx context.Context, r *http.Request, tok string) error {
	return rs.verifier.Verify(ctx, tok, func() (string, error) {
		if rs.opts.Audience != "" {
			return rs.opts.Audience, nil
		}
		audience, _, ok := rs.endpoint(r)
		if !ok {
			return "", errHostNotServed
		}
		return audience, nil
	})
}

// mcpAuthorized checks a request to an MCP endpoint when Options.OAuth is
// set: the server's own token (bearer or cookie), or a valid access token
// of the authorization server. Otherwise it answers 401 with the RFC 9728
// challenge (or 503 when the authorization server's keys cannot be read)
// and returns false.
func (sec *security) mcpAuthorized(w http.ResponseWriter, r *http.Request) bool {
	tok := bearerToken(r)
	if sec.token != nil {
		if tok != "" && sec.matches(tok) {
			return true
		}
		if c, err := r.Cookie(cookieName(r)); err == nil && tok == "" && sec.matches(c.Value) {
			return true
		}
	}
	if tok == "" {
		sec.resource.challenge(w, r, "")
		return false
	}
	err := sec.resource.verify(r.Context(), r, tok)
	switch {
	case err == nil:
		return true
	case errors.Is(err, resource.ErrInvalidToken):
		sec.resource.challenge(w, r, strings.TrimPrefix(err.Error(), resource.ErrInvalidToken.Error()+": "))
	case errors.Is(err, errHostNotServed):
		refuseHost(w, r)
	default:
		refuse(w, r, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "cannot check the access token: %v", err))
	}
	return false
}

// oauthRoutes adds the protected resource metadata of the MCP endpoints,
// when Options.OAuth is set.
func (s *Server) oauthRoutes(mux *http.ServeMux) {
	if s.sec.resource != nil {
		mux.HandleFunc(resourceMetadataRoute, s.sec.resource.serveMetadata)
	}
}
