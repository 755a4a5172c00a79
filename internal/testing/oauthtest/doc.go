// Package oauthtest is a fake OAuth 2.1 authorization server and an
// OAuth-protected MCP resource for tests, both on 127.0.0.1.
//
// The authorization server (NewServer) serves RFC 8414 or OpenID metadata
// (or none, for the 2025-03-26 fallback endpoints), RFC 7591 dynamic client
// registration, client ID metadata documents, pre-registered clients, the
// authorization endpoint (auto-approving, or denying on demand) and the token
// endpoint (authorization code with PKCE S256, refresh tokens with rotation;
// a rotated token presented again revokes the whole authorization, unless
// Options.RefreshReuseGrace honours it shortly after its rotation).
// With Options.JWT its access tokens are JWTs (RFC 9068) signed with a key
// it publishes at its jwks_uri, and SignJWT mints tokens with any claims
// (another audience, expired), for resource servers that verify them.
// It is strict: it checks what a real server checks, and a little more, so a
// client that passes against it is likely right. A rejected request gets the
// OAuth error a real server would send, and the reason is logged to the test.
//
// The protected resource (AuthServer.ProtectMCP, AuthServer.ServeMCP) puts an
// MCP handler behind bearer tokens from that server: 401 with a
// WWW-Authenticate challenge naming its RFC 9728 metadata, 403
// insufficient_scope for tools that need more scopes, and the metadata
// itself at the path-aware or root well-known URL (or elsewhere).
//
// Both record every request they receive and count them by kind, so tests
// can assert what a client did and did not do: one refresh, no second
// registration, no request without a token.
//
// # Usage
//
//	clock := oauthtest.NewClock(time.Time{})
//	as := oauthtest.NewServer(t, &oauthtest.Options{
//		Now:    clock.Now,
//		Scopes: []string{"mcp:read", "mcp:write"},
//	})
//	srv := mcptest.NewServer("docs")
//	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless,
//		func() *mcp.Server { return srv.Server }), &oauthtest.ResourceOptions{
//		ToolScopes: map[string][]string{"increment": {"mcp:write"}},
//	})
//	// res.URL is the MCP endpoint; a client discovers the rest from its 401.
//	// When the client has an authorization URL, act as the user's browser:
//	loc, err := as.VisitAuthURL(ctx, authURL) // the redirect, with code and state
//	// ... deliver loc to the client's callback; later:
//	clock.Advance(2 * time.Hour)             // the access token expires
//	if as.Counts.RefreshGrants.Load() != 1 { ... }
//
// Faults: FailTokenRequests(n, FaultUnavailable) makes the next n token
// requests fail with 503 (or a dropped connection, invalid_grant, ...);
// Deny makes authorizations end in access_denied; Revoke and RemoveClient
// forget tokens and clients.
//
// # Concurrency
//
// Everything is safe for concurrent use. Counts are atomic; the request logs
// (AuthorizationRequests, TokenRequests, Registrations, Requests) return
// copies. Options.OnAuthorize runs on the request's goroutine without any
// lock held.
//
// # Errors
//
// Protocol errors go to the client as OAuth error responses (RFC 6749 §5.2,
// §4.1.2.1; RFC 7591 §3.2.2; RFC 6750 §3) and are recorded with the request.
// Helpers that can fail return errors (VisitAuthURL); misuse of the API in a
// test fails the test through t.
package oauthtest
