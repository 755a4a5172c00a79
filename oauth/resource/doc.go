// Package resource verifies the access tokens an OAuth 2.1 resource server
// receives, the other side of package oauth's client: agentmcp serve's MCP
// endpoints use it to take the tokens of an external authorization server.
//
// Access tokens are verified as JWTs (RFC 9068): signed (RS256 or ES256)
// by a key of the authorization server's JWKS (its metadata's jwks_uri,
// read from Issuer's RFC 8414 or OpenID well-known URLs), issued by
// Issuer, for the audience the caller names, with the scopes it requires,
// not expired. JWTs rather than token introspection (RFC 7662): a request
// costs no round trip to the authorization server (the keys are fetched
// once and again only for an unknown key id, at most every 30 seconds),
// and the resource server needs no client credentials of its own; the
// price is that a revoked token works until it expires, so keep access
// tokens short-lived.
//
// A Server is the rest of a protected resource's side (RFC 9728) for the
// resources of one HTTP server: the URL of the resource a request is for
// (the audience its token must carry, unless fixed), its protected
// resource metadata, and the WWW-Authenticate challenge of a 401. A
// request's Host names the resource only when it is the server's own
// (ServerOptions.HostServed, at the port it came in on); otherwise
// ErrHostNotServed, so that a client cannot choose the audience its token
// is checked against.
//
// # Usage
//
//	v := resource.New(&resource.Options{Issuer: "https://auth.example.com", Scopes: []string{"mcp"}})
//	err := v.Verify(ctx, token, func() (string, error) { return "https://mcp.example.com/mcp", nil })
//	if errors.Is(err, resource.ErrInvalidToken) { /* 401 with the reason: err's text never quotes the token */ }
//	sub := resource.Subject(token) // once verified: who the token is for
//
//	rs := resource.NewServer(&resource.ServerOptions{Options: resource.Options{Issuer: issuer}, PublicURL: "https://mcp.example.com"})
//	err = rs.Verify(r, token)           // the audience: the resource r is for
//	challenge, _ := rs.Challenge(r, false) // WWW-Authenticate of a 401
//
// # Concurrency
//
// A Verifier and a Server are safe for concurrent use; concurrent verifications that
// need the keys share one fetch.
//
// # Errors
//
// A token refused is an error wrapping ErrInvalidToken, whose text says
// why and is safe to show. Any other error (the keys could not be read)
// is the authorization server's or the network's: the token was neither
// accepted nor refused.
package resource
