package oauthtest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// sdkHandler is go-sdk's own OAuth client, registering dynamically and
// acting as the user's browser with as.VisitAuthURL.
func sdkHandler(t testing.TB, as *oauthtest.AuthServer, authMethod string) *auth.AuthorizationCodeHandler {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirectURI},
			TokenEndpointAuthMethod: authMethod,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ClientName:              "go-sdk",
		}},
		RedirectURL: redirectURI,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			loc, err := as.VisitAuthURL(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			q := loc.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization: %s: %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSDKClient runs go-sdk's OAuth client against the fake, as a check
// that the fake speaks what real clients speak: discovery from the 401,
// registration, PKCE, resource, iss, and step-up on 403.
func TestSDKClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts oauthtest.Options
		res  oauthtest.ResourceOptions
	}{
		{"default", oauthtest.Options{}, oauthtest.ResourceOptions{}},
		{"iss, scopes, step-up", oauthtest.Options{Iss: oauthtest.IssOn, Scopes: []string{"mcp:read", "mcp:write"}},
			oauthtest.ResourceOptions{ScopesSupported: []string{"mcp:read", "mcp:write"}, ChallengeScopes: []string{"mcp:read"},
				RequiredScopes: []string{"mcp:read"}, ToolScopes: map[string][]string{"increment": {"mcp:write"}}}},
		{"openid with an issuer path", oauthtest.Options{Discovery: oauthtest.DiscoveryOIDC, IssuerPath: "/tenant1"}, oauthtest.ResourceOptions{Metadata: oauthtest.PRMRoot}},
		{"2025-03-26 fallbacks", oauthtest.Options{Discovery: oauthtest.DiscoveryNone},
			oauthtest.ResourceOptions{SameOrigin: true, Metadata: oauthtest.PRMNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := oauthtest.NewServer(t, &tt.opts)
			res := serveMCP(t, as, &tt.res)
			c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil)
			cs, err := c.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: res.URL, OAuthHandler: sdkHandler(t, as, "none")}, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			r, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "increment", Arguments: map[string]any{}})
			if err != nil || r.IsError {
				t.Fatalf("increment: %v %+v", err, r)
			}
			if res.Counts.Served.Load() == 0 || as.Counts.CodeGrants.Load() == 0 {
				t.Errorf("served %d, code grants %d", res.Counts.Served.Load(), as.Counts.CodeGrants.Load())
			}
			if tt.res.ToolScopes != nil {
				if n := res.Counts.InsufficientScope.Load(); n != 1 {
					t.Errorf("Counts.InsufficientScope = %d, want 1", n)
				}
				ars := as.AuthorizationRequests()
				last := ars[len(ars)-1]
				if got := slices.Sorted(slices.Values(last.Scopes)); !slices.Equal(got, []string{"mcp:read", "mcp:write"}) {
					t.Errorf("step-up asked for scope %q", last.Scope)
				}
			}
		})
	}
}

// TestSDKClientQuirk reproduces a real server's quirk: its registration
// response omits token_endpoint_auth_method, go-sdk then assumes RFC 7591's
// default, client_secret_basic, and the token endpoint refuses it.
func TestSDKClientQuirk(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{OmitRegisteredAuthMethod: true})
	res := serveMCP(t, as, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil)
	cs, err := c.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: res.URL, OAuthHandler: sdkHandler(t, as, "client_secret_post")}, nil)
	if err == nil {
		cs.Close()
		t.Fatal("connected despite the quirk")
	}
	trs := as.TokenRequests()
	if len(trs) == 0 {
		t.Error("no token request")
	}
	for _, tr := range trs {
		if !tr.BasicAuth || tr.Error != "invalid_client" {
			t.Errorf("token request %+v, want a refused Basic attempt", tr)
		}
	}
	if res.Counts.Served.Load() != 0 {
		t.Errorf("%d requests reached the MCP server", res.Counts.Served.Load())
	}
}
