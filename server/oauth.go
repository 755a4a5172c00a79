package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

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
const resourceMetadataRoute = "GET " + resource.WellKnown + "/agents/{class}/{name}/mcp"

// newResourceServer is the protected resource of Options.OAuth: the MCP
// endpoints at publicURL, else at the hosts the server serves
// (hostServed).
func newResourceServer(o *OAuthOptions, publicURL string, hostServed func(string) bool) *resource.Server {
	return resource.NewServer(&resource.ServerOptions{
		Options:  resource.Options{Issuer: o.Issuer, Scopes: o.Scopes, HTTPClient: o.HTTPClient, Now: o.Now},
		Audience: o.Audience, PublicURL: publicURL, HostServed: hostServed,
	})
}

// refuseHost answers a request whose Host is not this server's when the
// audience would come from it.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, apiErrorf(http.StatusForbidden, api.CodeHostNotAllowed,
		"host %q is not this server's: access tokens are accepted for its public URL (agentmcp serve --public-url), or for loopback and allowed host names at the port it listens on", r.Host))
}

// challenge answers 401 with the RFC 9728 challenge.
func (sec *security) challenge(w http.ResponseWriter, r *http.Request, reason string) {
	c, err := sec.resource.Challenge(r, reason != "")
	if err != nil {
		refuseHost(w, r)
		return
	}
	w.Header().Set("WWW-Authenticate", c)
	msg := "an access token is required: sign in with the authorization server named by the resource metadata (WWW-Authenticate), or send the access token of agentmcp serve"
	if reason != "" {
		msg = "the access token is not valid here: " + reason
	}
	refuse(w, r, apiErrorf(http.StatusUnauthorized, api.CodeUnauthorized, "%s", msg))
}

// serveMetadata serves an endpoint's protected resource metadata.
func (sec *security) serveMetadata(w http.ResponseWriter, r *http.Request) {
	md, err := sec.resource.Metadata(r, "agentmcp agent "+r.PathValue("class")+"/"+r.PathValue("name"))
	if err != nil {
		refuseHost(w, r)
		return
	}
	auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
}

// bearerToken returns r's bearer token, or "".
func bearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
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
		sec.challenge(w, r, "")
		return false
	}
	err := sec.resource.Verify(r, tok)
	switch {
	case err == nil:
		return true
	case errors.Is(err, resource.ErrInvalidToken):
		sec.challenge(w, r, strings.TrimPrefix(err.Error(), resource.ErrInvalidToken.Error()+": "))
	case errors.Is(err, resource.ErrHostNotServed):
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
		mux.HandleFunc(resourceMetadataRoute, s.sec.serveMetadata)
	}
}
