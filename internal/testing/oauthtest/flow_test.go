package oauthtest_test

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// TestFullFlow drives registration, authorization, code exchange, refresh
// with rotation and expiry by hand, as a client would.
func TestFullFlow(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{
		Now:            clock.Now,
		Scopes:         []string{"mcp:read", "mcp:write"},
		AccessTokenTTL: 10 * time.Minute,
	})
	cfg := registerClient(t, as, "none", "mcp:read")

	a := authorize(t, as, cfg)
	q := a.redirect.Query()
	if got := a.redirect.Scheme + "://" + a.redirect.Host + a.redirect.Path; got != redirectURI {
		t.Errorf("redirected to %s, want %s", got, redirectURI)
	}
	if q.Get("code") == "" || q.Get("state") != a.state || q.Has("iss") || q.Has("error") {
		t.Errorf("redirect query = %v, want code and state only", q)
	}
	ars := as.AuthorizationRequests()
	if len(ars) != 1 {
		t.Fatalf("%d authorization requests recorded, want 1", len(ars))
	}
	want := oauthtest.AuthorizationRequest{
		ClientID: cfg.ClientID, RedirectURI: redirectURI, ResponseType: "code", Scope: "mcp:read",
		Resource: resourceURL, State: a.state, CodeChallenge: oauth2.S256ChallengeFromVerifier(a.verifier),
		CodeChallengeMethod: "S256", Scopes: []string{"mcp:read"}, Redirected: true,
	}
	ars[0].Query = nil
	if diff := cmp.Diff(want, ars[0]); diff != "" {
		t.Errorf("recorded authorization request (-want +got):\n%s", diff)
	}

	tok, err := exchange(t, cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.TokenType != "Bearer" || tok.Extra("scope") != "mcp:read" {
		t.Errorf("token = %+v, scope %v", tok, tok.Extra("scope"))
	}
	if got, want := tok.Extra("expires_in"), float64(600); got != want {
		t.Errorf("expires_in = %v, want %v", got, want)
	}
	scopes, ok := as.Valid(tok.AccessToken)
	if !ok || !slices.Equal(scopes, []string{"mcp:read"}) {
		t.Errorf("Valid(access token) = %v, %v", scopes, ok)
	}
	if _, ok := as.Valid(tok.RefreshToken); ok {
		t.Error("a refresh token is Valid as an access token")
	}
	info, _ := as.Lookup(tok.AccessToken)
	if info.ClientID != cfg.ClientID || info.Resource != resourceURL || !info.Expiry.Equal(clock.Now().Add(10*time.Minute)) {
		t.Errorf("Lookup(access token) = %+v", info)
	}

	// Expiry, through the clock.
	clock.Advance(10*time.Minute - time.Second)
	if _, ok := as.Valid(tok.AccessToken); !ok {
		t.Error("access token invalid a second before expiry")
	}
	clock.Advance(time.Second)
	if _, ok := as.Valid(tok.AccessToken); ok {
		t.Error("access token still valid at expiry")
	}

	// Refresh with rotation.
	tok2, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if tok2.RefreshToken == tok.RefreshToken || tok2.AccessToken == tok.AccessToken {
		t.Error("refresh did not rotate the tokens")
	}
	if _, ok := as.Valid(tok2.AccessToken); !ok {
		t.Error("refreshed access token invalid")
	}
	if info, _ := as.Lookup(tok.RefreshToken); !info.Rotated || info.Active {
		t.Errorf("old refresh token after rotation: %+v", info)
	}

	// Reuse of the rotated token: invalid_grant, and the family is revoked.
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("reusing a rotated refresh token: %v, want invalid_grant", err)
	}
	if _, ok := as.Valid(tok2.AccessToken); ok {
		t.Error("the access token of a replayed family is still valid")
	}
	if _, err := refresh(t, cfg, tok2.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("refresh token of a replayed family: %v, want invalid_grant", err)
	}

	for name, got := range map[string]int64{
		"Registrations": as.Counts.Registrations.Load(), "Authorizations": as.Counts.Authorizations.Load(),
		"CodeGrants": as.Counts.CodeGrants.Load(), "RefreshGrants": as.Counts.RefreshGrants.Load(),
		"TokenRequests": as.Counts.TokenRequests.Load(),
	} {
		want := map[string]int64{"Registrations": 1, "Authorizations": 1, "CodeGrants": 1, "RefreshGrants": 3, "TokenRequests": 4}[name]
		if got != want {
			t.Errorf("Counts.%s = %d, want %d", name, got, want)
		}
	}
	trs := as.TokenRequests()
	var outcomes []string
	for _, tr := range trs {
		outcomes = append(outcomes, tr.GrantType+":"+tr.Error)
	}
	if diff := cmp.Diff([]string{"authorization_code:", "refresh_token:", "refresh_token:invalid_grant", "refresh_token:invalid_grant"}, outcomes); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
}

func TestLenientRefreshReuse(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{LenientRefreshReuse: true})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	tok2, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("reuse: %v, want invalid_grant", err)
	}
	if _, ok := as.Valid(tok2.AccessToken); !ok {
		t.Error("lenient reuse revoked the new access token")
	}
	if _, err := refresh(t, cfg, tok2.RefreshToken); err != nil {
		t.Errorf("refresh with the current token after a lenient reuse: %v", err)
	}
}

// TestRefreshReuseGrace: a rotated refresh token presented again within
// the grace of its rotation gets a new pair of tokens (as a client that
// crashed before saving the first answer needs), counted apart; the grace
// runs from the first rotation, and once it is over reuse is refused and
// revokes the authorization as without a grace.
func TestRefreshReuseGrace(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, RefreshReuseGrace: time.Minute})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	tok2, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := as.Lookup(tok.RefreshToken); !info.Rotated || !info.Active {
		t.Errorf("rotated refresh token within the grace: %+v; want rotated and active", info)
	}

	// Within the grace (measured from the first rotation, not the last
	// reuse): honoured twice, each time with a new pair.
	clock.Advance(30 * time.Second)
	tok3, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatalf("reuse within the grace: %v", err)
	}
	clock.Advance(29 * time.Second)
	tok4, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatalf("second reuse within the grace: %v", err)
	}
	seen := map[string]bool{tok.RefreshToken: true}
	for _, tk := range []*oauth2.Token{tok2, tok3, tok4} {
		if seen[tk.RefreshToken] || seen[tk.AccessToken] {
			t.Errorf("a reuse within the grace returned tokens already issued: %+v", tk)
		}
		seen[tk.RefreshToken], seen[tk.AccessToken] = true, true
		if _, ok := as.Valid(tk.AccessToken); !ok {
			t.Errorf("access token %s issued in the grace is not valid", tk.AccessToken)
		}
	}
	if n := as.Counts.RefreshReusedInGrace.Load(); n != 2 {
		t.Errorf("Counts.RefreshReusedInGrace = %d, want 2", n)
	}
	// The branch the reuse started works on: its refresh token rotates.
	tok5, err := refresh(t, cfg, tok4.RefreshToken)
	if err != nil {
		t.Fatalf("refresh with a token issued in the grace: %v", err)
	}

	// Past the grace: refused, and the authorization revoked, every
	// branch of it.
	clock.Advance(time.Second)
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("reuse past the grace: %v, want invalid_grant", err)
	}
	for _, tk := range []*oauth2.Token{tok2, tok3, tok5} {
		if _, ok := as.Valid(tk.AccessToken); ok {
			t.Errorf("access token %s still valid after a reuse past the grace", tk.AccessToken)
		}
	}
	if _, err := refresh(t, cfg, tok5.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("refresh after the revocation: %v, want invalid_grant", err)
	}
	if n := as.Counts.RefreshReusedInGrace.Load(); n != 2 {
		t.Errorf("Counts.RefreshReusedInGrace = %d after the refusals, want 2", n)
	}
	var outcomes []string
	for _, tr := range as.TokenRequests() {
		outcomes = append(outcomes, tr.GrantType+":"+tr.Error)
	}
	want := []string{"authorization_code:", "refresh_token:", "refresh_token:", "refresh_token:", "refresh_token:", "refresh_token:invalid_grant", "refresh_token:invalid_grant"}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
}

func TestKeepRefreshToken(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{KeepRefreshToken: true})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	for range 2 {
		status, body := postToken(t, as, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {cfg.ClientID}}, "", "")
		if status != http.StatusOK || body["refresh_token"] != nil {
			t.Errorf("refresh without rotation: %d %v, want 200 without refresh_token", status, body)
		}
	}
}

// TestConcurrentRefresh: of many refreshes with one token, exactly one
// wins, and every request is counted.
func TestConcurrentRefresh(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{LenientRefreshReuse: true})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range 20 {
		wg.Go(func() {
			_, err := refresh(t, cfg, tok.RefreshToken)
			if err != nil && oauthError(err) != "invalid_grant" {
				t.Errorf("refresh: %v", err)
			}
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 || as.Counts.RefreshGrants.Load() != 20 {
		t.Errorf("%d refreshes succeeded of %d; want 1 of 20", wins, as.Counts.RefreshGrants.Load())
	}
}

// TestCodeExchangeRejected covers each way a code exchange can be wrong.
// A code is used up by any attempt, so each case authorizes afresh.
func TestCodeExchangeRejected(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, CodeTTL: time.Minute})
	cfg := registerClient(t, as, "none")
	other := registerClient(t, as, "none")
	tests := []struct {
		name string
		// change alters the exchange; nil exchanges correctly.
		change func(cfg *oauth2.Config, a *authorization) []oauth2.AuthCodeOption
		want   string
	}{
		{"pkce mismatch", func(_ *oauth2.Config, a *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.GenerateVerifier())}
		}, "invalid_grant"},
		{"no verifier", func(_ *oauth2.Config, a *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("code_verifier", "")}
		}, "invalid_request"},
		{"short verifier", func(_ *oauth2.Config, a *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.VerifierOption("too-short")}
		}, "invalid_grant"},
		{"the challenge as verifier", func(_ *oauth2.Config, a *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.S256ChallengeFromVerifier(a.verifier))}
		}, "invalid_grant"},
		{"wrong redirect_uri", func(cfg *oauth2.Config, _ *authorization) []oauth2.AuthCodeOption {
			cfg.RedirectURL = "http://127.0.0.1:9/other"
			return nil
		}, "invalid_grant"},
		{"no resource", func(*oauth2.Config, *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("resource", "")}
		}, "invalid_request"},
		{"other resource", func(*oauth2.Config, *authorization) []oauth2.AuthCodeOption {
			return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("resource", "https://mcp.example.com/mcp/")}
		}, "invalid_target"},
		{"another client", func(cfg *oauth2.Config, _ *authorization) []oauth2.AuthCodeOption {
			cfg.ClientID = other.ClientID
			return nil
		}, "invalid_grant"},
		{"expired", func(*oauth2.Config, *authorization) []oauth2.AuthCodeOption {
			clock.Advance(time.Minute)
			return nil
		}, "invalid_grant"},
		{"unknown code", func(_ *oauth2.Config, a *authorization) []oauth2.AuthCodeOption {
			a.redirect.RawQuery = "code=made-up"
			return nil
		}, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authorize(t, as, cfg)
			c := *cfg
			opts := tt.change(&c, a)
			_, err := exchange(t, &c, a, opts...)
			if got := oauthError(err); got != tt.want {
				t.Fatalf("exchange: %v; want %s", err, tt.want)
			}
			if tt.name == "unknown code" {
				return
			}
			// Used up: even the right exchange now fails.
			if _, err := exchange(t, cfg, a); oauthError(err) != "invalid_grant" {
				t.Errorf("right exchange after a failed one: %v, want invalid_grant", err)
			}
		})
	}
}

// TestCodeReuse: the second redemption of a code fails and revokes what
// the first one gave.
func TestCodeReuse(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	cfg := registerClient(t, as, "none")
	a := authorize(t, as, cfg)
	tok, err := exchange(t, cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exchange(t, cfg, a); oauthError(err) != "invalid_grant" {
		t.Errorf("second exchange: %v, want invalid_grant", err)
	}
	if _, ok := as.Valid(tok.AccessToken); ok {
		t.Error("the access token survived the code's reuse")
	}
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("refresh after the code's reuse: %v, want invalid_grant", err)
	}
}

// TestClientAuthentication: each client must authenticate with its
// registered method, and only that.
func TestClientAuthentication(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	clients := map[string]*oauth2.Config{}
	for _, m := range []string{"none", "client_secret_post", "client_secret_basic"} {
		clients[m] = registerClient(t, as, m)
	}
	tests := []struct {
		client string
		style  oauth2.AuthStyle
		secret string // "" keeps the real one
		want   string
	}{
		{"none", oauth2.AuthStyleInParams, "", ""},
		{"none", oauth2.AuthStyleInHeader, "", "invalid_client"},
		{"none", oauth2.AuthStyleInParams, "a-secret", "invalid_client"},
		{"client_secret_post", oauth2.AuthStyleInParams, "", ""},
		{"client_secret_post", oauth2.AuthStyleInHeader, "", "invalid_client"},
		{"client_secret_post", oauth2.AuthStyleInParams, "wrong", "invalid_client"},
		{"client_secret_basic", oauth2.AuthStyleInHeader, "", ""},
		{"client_secret_basic", oauth2.AuthStyleInParams, "", "invalid_client"},
		{"client_secret_basic", oauth2.AuthStyleInHeader, "wrong", "invalid_client"},
	}
	for _, tt := range tests {
		name := tt.client + "/" + map[oauth2.AuthStyle]string{oauth2.AuthStyleInParams: "params", oauth2.AuthStyleInHeader: "basic"}[tt.style]
		if tt.secret != "" {
			name += "/secret " + tt.secret
		}
		t.Run(name, func(t *testing.T) {
			cfg := *clients[tt.client]
			a := authorize(t, as, &cfg)
			cfg.Endpoint.AuthStyle = tt.style
			if tt.secret != "" {
				cfg.ClientSecret = tt.secret
			}
			_, err := exchange(t, &cfg, a)
			if got := oauthError(err); got != tt.want {
				t.Errorf("exchange: %v; want %q", err, tt.want)
			}
		})
	}

	t.Run("both methods at once", func(t *testing.T) {
		cfg := clients["client_secret_basic"]
		status, body := postToken(t, as, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_secret": {cfg.ClientSecret}}, cfg.ClientID, cfg.ClientSecret)
		if status != http.StatusBadRequest || body["error"] != "invalid_request" {
			t.Errorf("Basic and client_secret together: %d %v", status, body)
		}
	})
	t.Run("refresh by another client", func(t *testing.T) {
		tok := login(t, as, clients["none"])
		cfg := clients["client_secret_post"]
		if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
			t.Errorf("refresh with another client's token: %v, want invalid_grant", err)
		}
	})
	t.Run("removed client", func(t *testing.T) {
		c := registerClient(t, as, "none")
		tok := login(t, as, c)
		as.RemoveClient(c.ClientID)
		if _, err := refresh(t, c, tok.RefreshToken); oauthError(err) != "invalid_client" {
			t.Errorf("refresh by a removed client: %v, want invalid_client", err)
		}
	})
}

// TestTokenEndpointRejects malformed requests.
func TestTokenEndpointRejects(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	id := cfg.ClientID
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"no grant type", url.Values{"client_id": {id}}, "invalid_request"},
		{"unknown grant type", url.Values{"client_id": {id}, "grant_type": {"password"}}, "unsupported_grant_type"},
		{"client_credentials", url.Values{"client_id": {id}, "grant_type": {"client_credentials"}}, "unsupported_grant_type"},
		{"repeated parameter", url.Values{"client_id": {id}, "grant_type": {"refresh_token", "refresh_token"}}, "invalid_request"},
		{"no client", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, "invalid_client"},
		{"unknown client", url.Values{"client_id": {"nobody"}, "grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, "invalid_client"},
		{"no refresh token", url.Values{"client_id": {id}, "grant_type": {"refresh_token"}}, "invalid_request"},
		{"an access token as refresh token", url.Values{"client_id": {id}, "grant_type": {"refresh_token"}, "refresh_token": {tok.AccessToken}}, "invalid_grant"},
		{"refresh for another resource", url.Values{"client_id": {id}, "grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "resource": {"https://other.example.com/mcp"}}, "invalid_target"},
		{"refresh widening scope", url.Values{"client_id": {id}, "grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "scope": {"admin"}}, "invalid_scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := postToken(t, as, tt.form, "", "")
			if body["error"] != tt.want || status < 400 {
				t.Errorf("got %d %v, want error %s", status, body, tt.want)
			}
		})
	}
	// The right resource is accepted on refresh.
	status, body := postToken(t, as, url.Values{"client_id": {id}, "grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "resource": {resourceURL}}, "", "")
	if status != http.StatusOK {
		t.Errorf("refresh with the grant's resource: %d %v", status, body)
	}

	t.Run("query parameters", func(t *testing.T) {
		resp, err := http.Post(as.TokenEndpoint()+"?grant_type=refresh_token", "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
	t.Run("json body", func(t *testing.T) {
		resp, err := http.Post(as.TokenEndpoint(), "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
	t.Run("GET", func(t *testing.T) {
		resp, err := http.Get(as.TokenEndpoint())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("status %d, want 405", resp.StatusCode)
		}
	})
}

func TestRefreshTokenExpiry(t *testing.T) {
	t.Parallel()
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, RefreshTokenTTL: 24 * time.Hour})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	clock.Advance(24 * time.Hour)
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("expired refresh token: %v, want invalid_grant", err)
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	if !as.Revoke(tok.AccessToken) || as.Revoke("nothing") {
		t.Error("Revoke reports the wrong tokens as known")
	}
	if _, ok := as.Valid(tok.AccessToken); ok {
		t.Error("revoked access token still valid")
	}
	tok2, err := refresh(t, cfg, tok.RefreshToken)
	if err != nil {
		t.Fatalf("refresh after revoking the access token: %v", err)
	}
	as.Revoke(tok2.RefreshToken)
	if _, err := refresh(t, cfg, tok2.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("revoked refresh token: %v, want invalid_grant", err)
	}
	as.RevokeAll()
	if _, ok := as.Valid(tok2.AccessToken); ok {
		t.Error("RevokeAll left an access token valid")
	}
}

func TestRefreshPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		policy    oauthtest.RefreshPolicy
		scopes    []string
		grants    []string
		wantToken bool
	}{
		{oauthtest.RefreshAlways, nil, []string{"authorization_code"}, true},
		{oauthtest.RefreshNever, nil, []string{"authorization_code", "refresh_token"}, false},
		{oauthtest.RefreshIfOfflineAccess, []string{"mcp"}, nil, false},
		{oauthtest.RefreshIfOfflineAccess, []string{"mcp", "offline_access"}, nil, true},
		{oauthtest.RefreshIfRegistered, nil, []string{"authorization_code"}, false},
		{oauthtest.RefreshIfRegistered, nil, []string{"authorization_code", "refresh_token"}, true},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			as := oauthtest.NewServer(t, &oauthtest.Options{RefreshTokens: tt.policy, Scopes: []string{"mcp"}, OfflineAccess: true})
			meta := map[string]any{"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none"}
			if tt.grants != nil {
				meta["grant_types"] = tt.grants
			}
			_, body := register(t, as, meta)
			cfg := &oauth2.Config{ClientID: body["client_id"].(string), RedirectURL: redirectURI, Scopes: tt.scopes,
				Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint(), TokenURL: as.TokenEndpoint(), AuthStyle: oauth2.AuthStyleInParams}}
			tok := login(t, as, cfg)
			if got := tok.RefreshToken != ""; got != tt.wantToken {
				t.Errorf("policy %d, scopes %v, grants %v: refresh token issued = %v", tt.policy, tt.scopes, tt.grants, got)
			}
		})
	}
}

// TestTokenFaults covers each injected fault that does not process the
// request: the grant stays valid.
func TestTokenFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault      oauthtest.Fault
		wantStatus int // 0: a dropped connection
		wantCode   string
	}{
		{oauthtest.FaultUnavailable, http.StatusServiceUnavailable, "temporarily_unavailable"},
		{oauthtest.FaultServerError, http.StatusInternalServerError, "server_error"},
		{oauthtest.FaultInvalidGrant, http.StatusBadRequest, "invalid_grant"},
		{oauthtest.FaultDropConnection, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			t.Parallel()
			as := oauthtest.NewServer(t, nil)
			cfg := registerClient(t, as, "none")
			tok := login(t, as, cfg)

			as.FailTokenRequests(2, tt.fault)
			for range 2 {
				_, err := refresh(t, cfg, tok.RefreshToken)
				var re *oauth2.RetrieveError
				switch {
				case tt.wantStatus == 0:
					if err == nil || errors.As(err, &re) {
						t.Fatalf("refresh: %v, want a transport error", err)
					}
				case !errors.As(err, &re) || re.Response.StatusCode != tt.wantStatus || re.ErrorCode != tt.wantCode:
					t.Fatalf("refresh: %v, want %d %s", err, tt.wantStatus, tt.wantCode)
				case tt.fault == oauthtest.FaultUnavailable && re.Response.Header.Get("Retry-After") == "":
					t.Error("503 without Retry-After")
				}
			}
			if _, err := refresh(t, cfg, tok.RefreshToken); err != nil {
				t.Errorf("refresh after the faults: %v", err)
			}
			var got []string
			for _, tr := range as.TokenRequests() {
				got = append(got, tr.GrantType+":"+tr.Fault.String())
			}
			want := []string{"authorization_code:none", "refresh_token:" + tt.fault.String(), "refresh_token:" + tt.fault.String(), "refresh_token:none"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("token requests (-want +got):\n%s", diff)
			}
			if n := as.Counts.RefreshGrants.Load(); n != 3 {
				t.Errorf("Counts.RefreshGrants = %d, want 3", n)
			}
		})
	}
}

// TestLoseResponse: the refresh happens, its answer is lost, and the old
// refresh token is gone.
func TestLoseResponse(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{LenientRefreshReuse: true})
	cfg := registerClient(t, as, "none")
	tok := login(t, as, cfg)
	as.FailTokenRequests(1, oauthtest.FaultLoseResponse)
	var re *oauth2.RetrieveError
	if _, err := refresh(t, cfg, tok.RefreshToken); err == nil || errors.As(err, &re) {
		t.Fatalf("refresh: %v, want a transport error", err)
	}
	if info, _ := as.Lookup(tok.RefreshToken); !info.Rotated {
		t.Errorf("refresh token after a lost response: %+v, want rotated", info)
	}
	if _, err := refresh(t, cfg, tok.RefreshToken); oauthError(err) != "invalid_grant" {
		t.Errorf("refresh again: %v, want invalid_grant", err)
	}
}
