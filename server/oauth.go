package server

import (
	"net/http"
	"time"

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

// resourceOptions is the protected resource of Options.OAuth (package
// guard checks its tokens): the MCP endpoints at publicURL, else at the
// hosts the server serves.
func resourceOptions(o *OAuthOptions, publicURL string) *resource.ServerOptions {
	return &resource.ServerOptions{
		Options:  resource.Options{Issuer: o.Issuer, Scopes: o.Scopes, HTTPClient: o.HTTPClient, Now: o.Now},
		Audience: o.Audience, PublicURL: publicURL,
	}
}

// oauthRoutes adds the protected resource metadata of the MCP endpoints,
// when Options.OAuth is set.
func (s *Server) oauthRoutes(mux *http.ServeMux) {
	if s.sec.HasResource() {
		mux.HandleFunc(resourceMetadataRoute, s.sec.ServeMetadata)
	}
}
