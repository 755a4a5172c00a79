package guard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/oauth/resource"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// HasResource reports whether the MCP endpoints are OAuth resource
// servers (Options.Resource).
func (g *Guard) HasResource() bool { return g.resource != nil }

// refuseHost answers a request whose Host is not this server's when the
// audience would come from it.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	Refuse(w, r, reply.Errorf(http.StatusForbidden, api.CodeHostNotAllowed,
		"host %q is not this server's: access tokens are accepted for its public URL (agentmcp serve --public-url), or for loopback and allowed host names at the port it listens on", r.Host))
}

// challenge answers 401 with the RFC 9728 challenge.
func (g *Guard) challenge(w http.ResponseWriter, r *http.Request, reason string) {
	c, err := g.resource.Challenge(r, reason != "")
	if err != nil {
		refuseHost(w, r)
		return
	}
	w.Header().Set("WWW-Authenticate", c)
	msg := "an access token is required: sign in with the authorization server named by the resource metadata (WWW-Authenticate), or send the access token of agentmcp serve"
	if reason != "" {
		msg = "the access token is not valid here: " + reason
	}
	Refuse(w, r, reply.Errorf(http.StatusUnauthorized, api.CodeUnauthorized, "%s", msg))
}

// ServeMetadata serves the protected resource metadata of the MCP
// endpoint of the agent named by r's path ({class}, {name}); it needs
// Options.Resource.
func (g *Guard) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	md, err := g.resource.Metadata(r, "agentmcp agent "+r.PathValue("class")+"/"+r.PathValue("name"))
	if err != nil {
		refuseHost(w, r)
		return
	}
	auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
}

// Bind returns h for r. In OAuth mode (Options.Resource), for a request
// with an access token of the authorization server (Wrap checked it,
// expiry included), that is h with go-sdk's token info carrying the
// token's subject as the user (resource.Subject: its sub claim, else its
// client, else a hash of the token), so that the gateway binds each MCP
// session to the user who opened it. Otherwise (no OAuth mode, the
// server's own token) it is h.
func (g *Guard) Bind(r *http.Request, h http.Handler) http.Handler {
	tok := BearerToken(r)
	if g.resource == nil || tok == "" || g.Matches(tok) {
		return h
	}
	subject := resource.Subject(tok)
	verified := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: subject}, nil
	}
	// The token was checked before; this only carries the subject.
	return auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// BearerToken returns r's bearer token, or "".
func BearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// mcpAuthorized checks a request to an MCP endpoint when Options.Resource
// is set: the server's own token (bearer or cookie), or a valid access
// token of the authorization server. Otherwise it answers 401 with the
// RFC 9728 challenge (or 503 when the authorization server's keys cannot
// be read) and returns false.
func (g *Guard) mcpAuthorized(w http.ResponseWriter, r *http.Request) bool {
	tok := BearerToken(r)
	if g.token != nil {
		if tok != "" && g.Matches(tok) {
			return true
		}
		if c, err := r.Cookie(CookieName(r)); err == nil && tok == "" && g.Matches(c.Value) {
			return true
		}
	}
	if tok == "" {
		g.challenge(w, r, "")
		return false
	}
	err := g.resource.Verify(r, tok)
	switch {
	case err == nil:
		return true
	case errors.Is(err, resource.ErrInvalidToken):
		g.challenge(w, r, strings.TrimPrefix(err.Error(), resource.ErrInvalidToken.Error()+": "))
	case errors.Is(err, resource.ErrHostNotServed):
		refuseHost(w, r)
	default:
		Refuse(w, r, reply.Errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "cannot check the access token: %v", err))
	}
	return false
}

// CrossSiteOrOrigin reports whether a browser says r comes from another
// site or origin (Fetch Metadata), or r has an Origin other than its own
// host's. Trusted origins count as other origins here.
func CrossSiteOrOrigin(r *http.Request) bool {
	if CrossSite(r) {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}
