package oauthtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// TestUsage is the package's main flow written out, as a client under test
// meets it: 401 from the MCP endpoint, discovery, registration,
// authorization, code exchange, use, expiry, refresh, a 503, step-up.
// (Example functions cannot have a testing.TB, which NewServer needs.)
func TestUsage(t *testing.T) {
	ctx := testCtx(t)
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{
		Now:            clock.Now,
		Scopes:         []string{"mcp:read", "mcp:write"},
		AccessTokenTTL: 15 * time.Minute,
		Iss:            oauthtest.IssOn,
	})
	srv := mcptest.NewServer("docs")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }),
		&oauthtest.ResourceOptions{
			ScopesSupported: []string{"mcp:read", "mcp:write"},
			ToolScopes:      map[string][]string{"increment": {"mcp:write"}},
		})

	// 1. The first request has no token: 401 naming the metadata.
	resp := rpc(t, res.URL, "", listTools)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	// resp.Header: WWW-Authenticate: Bearer resource_metadata="<res.MetadataURL()>"
	// The metadata names as.Issuer(); as.MetadataURL() describes the server.

	// 2. Registration (RFC 7591) and authorization with PKCE and resource.
	cfg := registerClient(t, as, "none", "mcp:read")
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", res.URL))
	loc, err := as.VisitAuthURL(ctx, authURL) // the browser's visit; the redirect is not followed
	if err != nil {
		t.Fatal(err)
	}
	q := loc.Query() // code, state=state-1, iss=as.Issuer()
	if q.Get("state") != "state-1" || q.Get("iss") != as.Issuer() {
		t.Fatalf("callback query %v", q)
	}

	// 3. Code exchange.
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", res.URL))
	if err != nil {
		t.Fatal(err)
	}
	if resp := rpc(t, res.URL, tok.AccessToken, listTools); resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d", resp.StatusCode)
	}

	// 4. Expiry without sleeping, then a refresh that meets a 503 first.
	clock.Advance(15 * time.Minute)
	if resp := rpc(t, res.URL, tok.AccessToken, listTools); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("expired token: %d", resp.StatusCode)
	}
	as.FailTokenRequests(1, oauthtest.FaultUnavailable)
	if _, err := refresh(t, cfg, tok.RefreshToken); err == nil {
		t.Fatal("refresh during the outage succeeded")
	}
	tok2, err := refresh(t, cfg, tok.RefreshToken) // the 503 kept it valid
	if err != nil {
		t.Fatal(err)
	}

	// 5. A tool that needs more: 403 insufficient_scope, scope="mcp:write".
	if resp := rpc(t, res.URL, tok2.AccessToken, callIncr); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("increment with mcp:read: %d", resp.StatusCode)
	}

	// 6. What happened, counted.
	if as.Counts.Registrations.Load() != 1 || as.Counts.CodeGrants.Load() != 1 || as.Counts.RefreshGrants.Load() != 2 {
		t.Errorf("registrations %d, code grants %d, refreshes %d", as.Counts.Registrations.Load(),
			as.Counts.CodeGrants.Load(), as.Counts.RefreshGrants.Load())
	}
	if res.Counts.Served.Load() != 1 || res.Counts.NoToken.Load() != 1 || res.Counts.InvalidToken.Load() != 1 || res.Counts.InsufficientScope.Load() != 1 {
		t.Errorf("resource counts: served %d, no token %d, invalid %d, insufficient scope %d", res.Counts.Served.Load(),
			res.Counts.NoToken.Load(), res.Counts.InvalidToken.Load(), res.Counts.InsufficientScope.Load())
	}
}
