package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// TestMCPEndpointOAuth: with Options.OAuth the MCP endpoint is an OAuth
// resource server: no token gets 401 naming its protected resource
// metadata (served without a token, naming the authorization server); an
// access token of that server for the endpoint works; one for another
// audience, expired, of another issuer or forged does not; the server's own
// token still works, and an access token does not open the API.
func TestMCPEndpointOAuth(t *testing.T) {
	for _, alg := range []string{"ES256", "RS256"} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			clock := oauthtest.NewClock(time.Now())
			as := oauthtest.NewServer(t, &oauthtest.Options{JWT: alg, Now: clock.Now})
			other := oauthtest.NewServer(t, &oauthtest.Options{JWT: alg})
			client := as.AddClient(oauthtest.Client{ID: "editor", RedirectURIs: []string{"http://127.0.0.1/cb"}})
			e := newEnv(t, &Options{Token: "secret", OAuth: &OAuthOptions{Issuer: as.Issuer(), Now: clock.Now}})
			ctx := testCtx(t)
			_, url := mcpServer(t, "s")
			if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
				t.Fatal(err)
			}
			endpoint := e.ts.URL + agentPath + "/mcp"
			metadataURL := e.ts.URL + "/.well-known/oauth-protected-resource" + agentPath + "/mcp"

			status, h, b := e.do("POST", agentPath+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `resource_metadata="`+metadataURL+`"`) {
				t.Fatalf("no token: %d %q %s; want 401 naming %s", status, h.Get("WWW-Authenticate"), b, metadataURL)
			}
			status, _, b = e.do("GET", "/.well-known/oauth-protected-resource"+agentPath+"/mcp", "")
			var meta struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
			}
			if status != http.StatusOK || json.Unmarshal(b, &meta) != nil || meta.Resource != endpoint || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != as.Issuer() {
				t.Fatalf("metadata: %d %s", status, b)
			}

			connect := func(token string) error {
				hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
				c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
				if err != nil {
					return err
				}
				defer cs.Close()
				_, err = cs.ListTools(ctx, nil)
				return err
			}
			valid := as.IssueTokens(client.ID, endpoint).AccessToken
			if err := connect(valid); err != nil {
				t.Fatalf("a valid access token: %v", err)
			}
			if err := connect("secret"); err != nil {
				t.Fatalf("the server's own token: %v", err)
			}
			if status, _, b := e.do("GET", agentPath, "", "Authorization: Bearer "+valid); status != http.StatusUnauthorized {
				t.Errorf("the API with an access token: %d %s, want 401", status, b)
			}

			claims := func(change func(map[string]any)) string {
				c := as.AccessJWTClaims(client.ID, endpoint)
				change(c)
				return as.SignJWT(c)
			}
			bad := []struct{ name, token, want string }{
				{"another audience", claims(func(c map[string]any) { c["aud"] = "https://elsewhere.example/mcp" }), "another audience"},
				{"the endpoint of another agent", as.IssueTokens(client.ID, e.ts.URL+"/agents/test/b/mcp").AccessToken, "another audience"},
				{"expired", claims(func(c map[string]any) { c["exp"] = clock.Now().Add(-time.Hour).Unix() }), "expired"},
				{"another issuer", claims(func(c map[string]any) { c["iss"] = other.Issuer() }), "another authorization server"},
				{"signed by another server", other.SignJWT(as.AccessJWTClaims(client.ID, endpoint)), "signing key"},
				{"no expiry", claims(func(c map[string]any) { delete(c, "exp") }), "no expiry"},
				{"not a JWT", "opaque-token", "not a JWT"},
			}
			for _, tt := range bad {
				status, h, b := e.do("POST", agentPath+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization: Bearer "+tt.token)
				if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) ||
					!strings.Contains(h.Get("WWW-Authenticate"), "resource_metadata=") || !strings.Contains(string(b), tt.want) {
					t.Errorf("%s: %d %q %s; want 401 invalid_token saying %q", tt.name, status, h.Get("WWW-Authenticate"), b, tt.want)
				}
			}
			// The valid token expires with time.
			clock.Advance(2 * time.Hour)
			if err := connect(valid); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
				t.Errorf("the token after its expiry: %v, want 401", err)
			}
		})
	}
}

// TestMCPEndpointAuth: the MCP endpoint takes the API's token rule: without
// a token only loopback Host names are served; with one, every request
// needs it, whatever its Host; with OAuth and no token, every request
// needs an access token, on loopback too.
func TestMCPEndpointAuth(t *testing.T) {
	t.Parallel()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	accept := "Accept: application/json, text/event-stream"
	open := newEnv(t, nil)
	if status, _, b := open.do("POST", agentPath+"/mcp", ping, "Host: agents.example.com", accept); status != http.StatusForbidden || !strings.Contains(string(b), api.CodeHostNotAllowed) {
		t.Errorf("no token, another host: %d %s; want 403 host_not_allowed", status, b)
	}
	if status, _, b := open.do("POST", agentPath+"/mcp", ping, accept); status == http.StatusUnauthorized || status == http.StatusForbidden {
		t.Errorf("no token, loopback: %d %s; want it served", status, b)
	}

	tok := newEnv(t, &Options{Token: "secret"})
	if status, h, b := tok.do("POST", agentPath+"/mcp", ping, "Host: agents.example.com", accept); status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("token required, none sent: %d %s; want 401", status, b)
	}
	if status, _, b := tok.do("POST", agentPath+"/mcp", ping, "Host: agents.example.com", accept, "Authorization: Bearer secret"); status == http.StatusUnauthorized || status == http.StatusForbidden {
		t.Errorf("token sent, another host: %d %s; want it served", status, b)
	}

	// A tools/call the gateway answers itself, below go-sdk's server, is
	// behind the same checks.
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tool_up_echo","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	callHeaders := []string{accept, "Content-Type: application/json", "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: tool_up_echo"}
	if status, _, b := tok.do("POST", agentPath+"/mcp", call, append([]string{"Host: agents.example.com"}, callHeaders...)...); status != http.StatusUnauthorized {
		t.Errorf("token required, none sent, tools/call: %d %s; want 401", status, b)
	}

	as := oauthtest.NewServer(t, &oauthtest.Options{JWT: "ES256"})
	oauthOnly := newEnv(t, &Options{OAuth: &OAuthOptions{Issuer: as.Issuer()}})
	if status, h, b := oauthOnly.do("POST", agentPath+"/mcp", ping, accept); status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("OAuth without a token, loopback: %d %s; want 401 with the metadata", status, b)
	}
	if status, _, b := oauthOnly.do("POST", agentPath+"/mcp", call, callHeaders...); status != http.StatusUnauthorized {
		t.Errorf("OAuth without a token, loopback, tools/call: %d %s; want 401", status, b)
	}
	if status, _, b := oauthOnly.do("GET", "/agents", ""); status != http.StatusOK {
		t.Errorf("OAuth without a token: the API on loopback: %d %s; want it served as before", status, b)
	}
}

// TestMCPEndpointSignIn: an MCP host signs in the standard way: go-sdk's
// OAuth client, given only the endpoint, finds the authorization server
// from the 401 and the protected resource metadata, registers, authorizes
// (the fake acting as the user's browser) and connects with its token.
func TestMCPEndpointSignIn(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{JWT: "ES256"})
	e := newEnv(t, &Options{Token: "secret", OAuth: &OAuthOptions{Issuer: as.Issuer()}})
	ctx := testCtx(t)
	_, url := mcpServer(t, "s")
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const redirect = "http://127.0.0.1:1/callback"
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", ClientName: "editor",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			loc, err := as.VisitAuthURL(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			q := loc.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.ts.URL + agentPath + "/mcp", OAuthHandler: h}, nil)
	if err != nil {
		t.Fatalf("connect with sign-in: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_s_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("call after sign-in: %+v, %v", res, err)
	}
	if as.Counts.CodeGrants.Load() != 1 {
		t.Errorf("%d code grants, want one sign-in", as.Counts.CodeGrants.Load())
	}
}

// TestMCPEndpointAudienceFromConfig: the audience a token must carry is
// not the client's to choose. Without a public URL it is the endpoint's URL
// at a host this server serves (a loopback name or an allowed host) with
// the port the request came in on: a token issued for another resource
// server (another host, or another port of this one), sent with that Host,
// is refused, and so is that Host's metadata. With a public URL, only the
// public URL's endpoint is the audience, whatever the Host.
func TestMCPEndpointAudienceFromConfig(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{JWT: "ES256"})
	client := as.AddClient(oauthtest.Client{ID: "editor", RedirectURIs: []string{"http://127.0.0.1/cb"}})
	_, url := mcpServer(t, "s")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	accept := "Accept: application/json, text/event-stream"
	served := func(e *env, host, aud string) (int, []byte) {
		t.Helper()
		status, _, b := e.do("POST", agentPath+"/mcp", ping, "Host: "+host, accept, "Authorization: Bearer "+as.IssueTokens(client.ID, aud+agentPath+"/mcp").AccessToken)
		return status, b
	}

	e := newEnv(t, &Options{Token: "secret", OAuth: &OAuthOptions{Issuer: as.Issuer()}})
	if _, err := e.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	self := strings.TrimPrefix(e.ts.URL, "http://")
	_, port, _ := strings.Cut(self, ":")
	for _, host := range []string{self, "localhost:" + port} {
		if status, b := served(e, host, "http://"+host); status != http.StatusOK {
			t.Errorf("a token for this endpoint at %s: %d %s; want it served", host, status, b)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "localhost:1", "127.0.0.1:1"} {
		if status, b := served(e, host, "http://"+host); status != http.StatusForbidden {
			t.Errorf("a token for http://%s sent with Host %s: %d %s; want 403", host, host, status, b)
		}
		status, _, b := e.do("GET", "/.well-known/oauth-protected-resource"+agentPath+"/mcp", "", "Host: "+host)
		if status != http.StatusForbidden || strings.Contains(string(b), `"resource"`) {
			t.Errorf("metadata for Host %s: %d %s; want it refused", host, status, b)
		}
	}
	// The server's own token still works with any Host.
	if status, _, b := e.do("POST", agentPath+"/mcp", ping, "Host: evil.example", accept, "Authorization: Bearer secret"); status != http.StatusOK {
		t.Errorf("the server's token with another Host: %d %s", status, b)
	}

	const public = "https://agents.example.com"
	p := newEnv(t, &Options{Token: "secret", Agent: &agent.Options{CallbackHost: public}, OAuth: &OAuthOptions{Issuer: as.Issuer()}})
	if _, err := p.client("test", "a").AddMCPServer(testCtx(t), api.AddRequest{Name: "s", URL: url, ID: "s"}); err != nil {
		t.Fatal(err)
	}
	publicSelf := strings.TrimPrefix(p.ts.URL, "http://")
	for _, host := range []string{"agents.example.com", publicSelf} {
		if status, b := served(p, host, public); status != http.StatusOK {
			t.Errorf("public URL: a token for %s with Host %s: %d %s; want it served", public, host, status, b)
		}
	}
	for _, aud := range []string{"http://evil.example", "http://" + publicSelf} {
		if status, b := served(p, strings.TrimPrefix(aud, "http://"), aud); status == http.StatusOK {
			t.Errorf("public URL: a token for %s: %d %s; want it refused", aud, status, b)
		}
	}
}
