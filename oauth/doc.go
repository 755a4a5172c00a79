// Package oauth is agentmcp's OAuth client for MCP servers: the default
// mcpclient.AuthProvider.
//
// A Provider runs the MCP authorization flow of one server in two halves,
// so that a person can take their time (and the process can restart) in
// between. Authorize, called when the server answers 401 (or 403
// insufficient_scope), discovers the authorization server (RFC 9728
// protected resource metadata from the WWW-Authenticate challenge or the
// well-known URLs; RFC 8414 or OpenID metadata; the 2025-03-26 fallbacks),
// reuses or makes a client registration (stored registration while the
// redirect URI is unchanged, client ID metadata document, pre-registered
// credentials, RFC 7591 dynamic registration), picks scopes (the
// challenge's, else the resource's, united with those granted before for
// step-up), and returns an authorization URL with PKCE S256, the RFC 8707
// resource and a state "{serverId}:{value}" (130 random bits) bound to its
// own verifier. Exchange, called with the callback's query, checks and
// consumes that state (single use, StateLifetime), checks the RFC 9207
// issuer, exchanges the code and stores the tokens. CheckState, and
// CheckStoredState without a Provider (from the Storage alone), report
// whether a state could be redeemed without consuming it.
//
// Token refreshes before expiry, once per server: concurrent callers share
// one refresh, and Storage.Lock extends that across processes. It
// refreshes when less than a third of the token's lifetime remains, at
// most 30 seconds (30 seconds for a token stored without its issue time).
// A rotated refresh token is saved before it is used, or, when the storage
// does not take it, kept and used from memory and saved again later in
// place of the token it replaced (a token someone else stored meanwhile
// stands); a process that dies before the save loses it, and only an
// authorization server's reuse grace saves the grant then. A network
// error, a 5xx or a 429 is retried and never loses the refresh token; a
// refusal (invalid_grant, invalid_client, any other OAuth error or 4xx)
// drops the tokens, so that the next request's 401 starts a new
// authorisation, and invalid_client or unauthorized_client drops the
// dynamic registration too. Exchange saves its tokens under the same lock, and a refresh writes
// or drops only the token it refreshed: one that a completed
// authorisation replaced meanwhile is left alone.
//
// # Usage
//
//	p, err := oauth.New(&oauth.MemoryStorage{}, oauth.Config{
//		ServerID:    "docs",
//		ServerURL:   "https://mcp.example.com/mcp",
//		RedirectURL: "https://agents.example.com/agents/my-agent/default/callback",
//		HTTPClient:  guardedClient,
//	})
//	m.RegisterServer(ctx, "docs", mcpclient.ServerOptions{URL: ..., Auth: p})
//	res, _ := m.ConnectToServer(ctx, "docs") // authenticating, res.AuthURL
//	// ... the user authorises; the callback arrives:
//	err = p.Exchange(ctx, callbackRequest.URL.Query())
//
// # Concurrency
//
// A Provider is safe for concurrent use.
//
// # Errors
//
// Callback errors (ErrStateFormat, ErrStateUnknown, ErrStateExpired,
// ErrStateServer, ErrIssuer) have messages fit for users; token endpoint
// failures are *TokenError; ErrResourceMismatch refuses a resource whose
// metadata names another one. Text from authorization servers is
// sanitised; errors carry no more of a response than its status and OAuth
// error (error, error_description), and never a token, a client secret, an
// authorization code or a PKCE verifier.
package oauth
