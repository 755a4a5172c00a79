package oauthtest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// serveMCP serves mcptest's server behind as.
func serveMCP(t testing.TB, as *oauthtest.AuthServer, opts *oauthtest.ResourceOptions) *oauthtest.Resource {
	t.Helper()
	srv := mcptest.NewServer("protected")
	return as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), opts)
}

// rpc posts a JSON-RPC body with a bearer token (none when tok is "").
func rpc(t testing.TB, url, tok, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

const (
	listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	callIncr  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"increment","arguments":{}}}`
)

// TestResource covers the 401, 403 and 200 paths with raw requests.
func TestResource(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now})
	client := as.AddClient(oauthtest.Client{RedirectURIs: []string{redirectURI}})
	res := serveMCP(t, as, &oauthtest.ResourceOptions{
		ScopesSupported: []string{"mcp:read", "mcp:write"},
		ChallengeScopes: []string{"mcp:read"},
		ToolScopes:      map[string][]string{"increment": {"mcp:write"}},
	})
	if !strings.HasPrefix(res.URL, "http://127.0.0.1:") || !strings.HasSuffix(res.URL, "/mcp") {
		t.Fatalf("URL = %s", res.URL)
	}
	prm := strings.TrimSuffix(res.URL, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	if res.MetadataURL() != prm {
		t.Errorf("MetadataURL = %s, want %s", res.MetadataURL(), prm)
	}

	status, m := getJSON(t, prm)
	want := map[string]any{
		"resource":                 res.URL,
		"authorization_servers":    []any{as.Issuer()},
		"scopes_supported":         []any{"mcp:read", "mcp:write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "oauthtest MCP server",
	}
	if diff := cmp.Diff(want, m); status != http.StatusOK || diff != "" {
		t.Errorf("metadata %d (-want +got):\n%s", status, diff)
	}

	short := as.IssueTokens(client.ID, res.URL, "mcp:read")
	clock.Advance(time.Hour) // the default lifetime
	read := as.IssueTokens(client.ID, res.URL, "mcp:read")
	write := as.IssueTokens(client.ID, res.URL, "mcp:read", "mcp:write")
	elsewhere := as.IssueTokens(client.ID, "https://other.example.com/mcp", "mcp:read", "mcp:write")
	revoked := as.IssueTokens(client.ID, res.URL, "mcp:read")
	as.Revoke(revoked.AccessToken)

	tests := []struct {
		name       string
		tok, body  string
		wantStatus int
		wantHeader string // "" for none
	}{
		{"no token", "", listTools, 401, `Bearer scope="mcp:read", resource_metadata="` + prm + `"`},
		{"unknown token", "made-up", listTools, 401, `Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked", scope="mcp:read", resource_metadata="` + prm + `"`},
		{"expired token", short.AccessToken, listTools, 401, `Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked", scope="mcp:read", resource_metadata="` + prm + `"`},
		{"revoked token", revoked.AccessToken, listTools, 401, `Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked", scope="mcp:read", resource_metadata="` + prm + `"`},
		{"refresh token", read.RefreshToken, listTools, 401, `Bearer error="invalid_token", error_description="the access token is unknown, expired or revoked", scope="mcp:read", resource_metadata="` + prm + `"`},
		{"token for another resource", elsewhere.AccessToken, listTools, 401, `Bearer error="invalid_token", error_description="the access token is for another resource", scope="mcp:read", resource_metadata="` + prm + `"`},
		{"read token lists", read.AccessToken, listTools, 200, ""},
		{"read token calls increment", read.AccessToken, callIncr, 403, `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="` + prm + `"`},
		{"read token calls increment in a batch", read.AccessToken, "[" + listTools + "," + callIncr + "]", 403, `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="` + prm + `"`},
		{"write token calls increment", write.AccessToken, callIncr, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := rpc(t, res.URL, tt.tok, tt.body)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("WWW-Authenticate") != tt.wantHeader {
				t.Errorf("got %d %q\nwant %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.wantStatus, tt.wantHeader)
			}
		})
	}

	for name, c := range map[string]struct{ got, want int64 }{
		"Served":            {res.Counts.Served.Load(), 2},
		"NoToken":           {res.Counts.NoToken.Load(), 1},
		"InvalidToken":      {res.Counts.InvalidToken.Load(), 5},
		"InsufficientScope": {res.Counts.InsufficientScope.Load(), 2},
		"Metadata":          {res.Counts.Metadata.Load(), 1},
	} {
		if c.got != c.want {
			t.Errorf("Counts.%s = %d, want %d", name, c.got, c.want)
		}
	}
	reqs := res.Requests()
	last := reqs[len(reqs)-1]
	if last.Token != write.AccessToken || !cmp.Equal(last.Tools, []string{"increment"}) || !cmp.Equal(last.Methods, []string{"tools/call"}) || last.Status != 0 {
		t.Errorf("last request recorded as %+v", last)
	}

	resp, err := http.Get(strings.TrimSuffix(res.URL, "/mcp") + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /elsewhere: %d", resp.StatusCode)
	}
}

// TestResourceWithSDKClient connects go-sdk's MCP client with a token
// and calls tools, with and without the scope one needs.
func TestResourceWithSDKClient(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	client := as.AddClient(oauthtest.Client{RedirectURIs: []string{redirectURI}})
	res := serveMCP(t, as, &oauthtest.ResourceOptions{RequiredScopes: []string{"mcp"}, ToolScopes: map[string][]string{"increment": {"mcp:write"}}})

	connect := func(scopes ...string) *mcp.ClientSession {
		tok := as.IssueTokens(client.ID, res.URL, scopes...)
		hc := oauth2.NewClient(testCtx(t), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok.AccessToken}))
		c := mcp.NewClient(&mcp.Implementation{Name: "oauthtest", Version: "1"}, nil)
		cs, err := c.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: res.URL, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect with %v: %v", scopes, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect("mcp")
	r, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || r.IsError {
		t.Fatalf("echo: %v %+v", err, r)
	}
	if _, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "increment", Arguments: map[string]any{}}); err == nil {
		t.Error("increment without mcp:write succeeded")
	}
	cs = connect("mcp", "mcp:write")
	if r, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "increment", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Errorf("increment with mcp:write: %v %+v", err, r)
	}

	// Without mcp, nothing works, not even the handshake.
	tok := as.IssueTokens(client.ID, res.URL)
	if resp := rpc(t, res.URL, tok.AccessToken, listTools); resp.StatusCode != http.StatusForbidden ||
		resp.Header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="mcp", resource_metadata="`+res.MetadataURL()+`"` {
		t.Errorf("token without the required scope: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestResourceMetadataLocations checks where the metadata is served and
// what challenges say, for each option.
func TestResourceMetadataLocations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      oauthtest.ResourceOptions
		served    []string // paths answering 200
		header    string   // the challenge's resource_metadata path, "" for none
		resource  string   // "" for the endpoint's URL
		asServers []any    // nil for the AuthServer's issuer
	}{
		{"path-aware", oauthtest.ResourceOptions{}, []string{"/.well-known/oauth-protected-resource/mcp"}, "/.well-known/oauth-protected-resource/mcp", "", nil},
		{"root", oauthtest.ResourceOptions{Metadata: oauthtest.PRMRoot}, []string{"/.well-known/oauth-protected-resource"}, "/.well-known/oauth-protected-resource", "", nil},
		{"both", oauthtest.ResourceOptions{Metadata: oauthtest.PRMBoth}, []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}, "/.well-known/oauth-protected-resource/mcp", "", nil},
		{"header only", oauthtest.ResourceOptions{Metadata: oauthtest.PRMHeaderOnly}, []string{"/oauthtest/resource-metadata"}, "/oauthtest/resource-metadata", "", nil},
		{"header only, custom path", oauthtest.ResourceOptions{Metadata: oauthtest.PRMHeaderOnly, MetadataPath: "/meta/prm.json"}, []string{"/meta/prm.json"}, "/meta/prm.json", "", nil},
		{"none", oauthtest.ResourceOptions{Metadata: oauthtest.PRMNone}, nil, "", "", nil},
		{"no header", oauthtest.ResourceOptions{OmitMetadataHeader: true}, []string{"/.well-known/oauth-protected-resource/mcp"}, "", "", nil},
		{"other path", oauthtest.ResourceOptions{Path: "/public/mcp"}, []string{"/.well-known/oauth-protected-resource/public/mcp"}, "/.well-known/oauth-protected-resource/public/mcp", "", nil},
		{"resource mismatch", oauthtest.ResourceOptions{MetadataResource: "https://evil.example.com/mcp"}, []string{"/.well-known/oauth-protected-resource/mcp"}, "/.well-known/oauth-protected-resource/mcp", "https://evil.example.com/mcp", nil},
		{"ssrf", oauthtest.ResourceOptions{AuthorizationServers: []string{"http://169.254.169.254/"}}, []string{"/.well-known/oauth-protected-resource/mcp"}, "/.well-known/oauth-protected-resource/mcp", "", []any{"http://169.254.169.254/"}},
	}
	probe := []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/public/mcp", "/oauthtest/resource-metadata", "/meta/prm.json"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := oauthtest.NewServer(t, nil)
			res := serveMCP(t, as, &tt.opts)
			origin := res.URL[:strings.Index(res.URL[len("http://"):], "/")+len("http://")]
			var served []string
			for _, p := range probe {
				status, m := getJSON(t, origin+p)
				if status != http.StatusOK {
					continue
				}
				served = append(served, p)
				wantRes := tt.resource
				if wantRes == "" {
					wantRes = res.URL
				}
				wantAS := tt.asServers
				if wantAS == nil {
					wantAS = []any{as.Issuer()}
				}
				if m["resource"] != wantRes || !cmp.Equal(m["authorization_servers"], wantAS) {
					t.Errorf("%s: resource %v, authorization_servers %v", p, m["resource"], m["authorization_servers"])
				}
			}
			if diff := cmp.Diff(tt.served, served); diff != "" {
				t.Errorf("served at (-want +got):\n%s", diff)
			}
			want := "Bearer"
			if tt.header != "" {
				want = `Bearer resource_metadata="` + origin + tt.header + `"`
			}
			if got := rpc(t, res.URL, "", listTools).Header.Get("WWW-Authenticate"); got != want {
				t.Errorf("challenge %q, want %q", got, want)
			}
		})
	}
}

// TestSameOrigin serves the resource on the authorization server's own
// origin, as a 2025-03-26 server without metadata.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{Discovery: oauthtest.DiscoveryNone})
	res := serveMCP(t, as, &oauthtest.ResourceOptions{SameOrigin: true, Metadata: oauthtest.PRMNone})
	if res.URL != as.URL+"/mcp" {
		t.Errorf("URL = %s, want %s", res.URL, as.URL+"/mcp")
	}
	if resp := rpc(t, res.URL, "", listTools); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	cfg := registerClient(t, as, "none")
	if cfg.Endpoint.TokenURL != as.URL+"/token" {
		t.Errorf("token endpoint %s", cfg.Endpoint.TokenURL)
	}
	a := authorize(t, as, cfg, oauth2.SetAuthURLParam("resource", res.URL))
	tok, err := exchange(t, cfg, a, oauth2.SetAuthURLParam("resource", res.URL))
	if err != nil {
		t.Fatal(err)
	}
	if resp := rpc(t, res.URL, tok.AccessToken, listTools); resp.StatusCode != http.StatusOK {
		t.Errorf("with a token: %d", resp.StatusCode)
	}
}
