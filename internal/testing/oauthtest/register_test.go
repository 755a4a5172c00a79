package oauthtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

func TestRegistration(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	tests := []struct {
		method     string // token_endpoint_auth_method sent; "" sends none
		wantMethod string
		wantSecret bool
	}{
		{"none", "none", false},
		{"client_secret_post", "client_secret_post", true},
		{"client_secret_basic", "client_secret_basic", true},
		{"", "client_secret_basic", true}, // RFC 7591 §2's default
	}
	for _, tt := range tests {
		t.Run(tt.wantMethod+"/"+tt.method, func(t *testing.T) {
			meta := map[string]any{"redirect_uris": []string{redirectURI}, "client_name": "x", "application_type": "native", "software_id": "agentmcp"}
			if tt.method != "" {
				meta["token_endpoint_auth_method"] = tt.method
			}
			status, body := register(t, as, meta)
			if status != http.StatusCreated {
				t.Fatalf("status %d: %v", status, body)
			}
			id, _ := body["client_id"].(string)
			_, hasSecret := body["client_secret"]
			if id == "" || hasSecret != tt.wantSecret || body["token_endpoint_auth_method"] != tt.wantMethod ||
				body["software_id"] != "agentmcp" || body["client_name"] != "x" {
				t.Errorf("registration response = %v", body)
			}
			if tt.wantSecret && body["client_secret_expires_at"] != float64(0) {
				t.Errorf("client_secret_expires_at = %v, want 0", body["client_secret_expires_at"])
			}
			c, ok := as.Client(id)
			want := oauthtest.Client{ID: id, AuthMethod: tt.wantMethod, RedirectURIs: []string{redirectURI},
				GrantTypes: []string{"authorization_code"}, Name: "x", ApplicationType: "native"}
			if tt.wantSecret {
				want.Secret = body["client_secret"].(string)
			}
			if diff := cmp.Diff(want, c); !ok || diff != "" {
				t.Errorf("Client(%s) (-want +got):\n%s", id, diff)
			}
		})
	}
	if n := as.Counts.Registrations.Load(); n != int64(len(tests)) {
		t.Errorf("Counts.Registrations = %d", n)
	}
	if rs := as.Registrations(); len(rs) != len(tests) || rs[0].Metadata["client_name"] != "x" || rs[0].Status != http.StatusCreated {
		t.Errorf("Registrations = %+v", rs)
	}
}

func TestRegistrationRejected(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{AuthMethods: []string{"none", "client_secret_post"}, RequireApplicationType: true})
	ok := func() map[string]any {
		return map[string]any{"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none", "application_type": "native"}
	}
	tests := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"no redirect uris", func(m map[string]any) { delete(m, "redirect_uris") }, "invalid_redirect_uri"},
		{"relative redirect uri", func(m map[string]any) { m["redirect_uris"] = []string{"/callback"} }, "invalid_redirect_uri"},
		{"custom scheme", func(m map[string]any) { m["redirect_uris"] = []string{"myapp://callback"} }, "invalid_redirect_uri"},
		{"fragment", func(m map[string]any) { m["redirect_uris"] = []string{"https://app.example.com/cb#x"} }, "invalid_redirect_uri"},
		{"http on a public host", func(m map[string]any) { m["redirect_uris"] = []string{"http://app.example.com/cb"} }, "invalid_redirect_uri"},
		{"one bad among good", func(m map[string]any) { m["redirect_uris"] = []string{redirectURI, "javascript:alert(1)"} }, "invalid_redirect_uri"},
		{"unsupported auth method", func(m map[string]any) { m["token_endpoint_auth_method"] = "client_secret_basic" }, "invalid_client_metadata"},
		{"default auth method unsupported", func(m map[string]any) { delete(m, "token_endpoint_auth_method") }, "invalid_client_metadata"},
		{"private_key_jwt", func(m map[string]any) { m["token_endpoint_auth_method"] = "private_key_jwt" }, "invalid_client_metadata"},
		{"implicit grant", func(m map[string]any) { m["grant_types"] = []string{"implicit"} }, "invalid_client_metadata"},
		{"no authorization_code grant", func(m map[string]any) { m["grant_types"] = []string{"refresh_token"} }, "invalid_client_metadata"},
		{"token response type", func(m map[string]any) { m["response_types"] = []string{"token"} }, "invalid_client_metadata"},
		{"no application type", func(m map[string]any) { delete(m, "application_type") }, "invalid_client_metadata"},
		{"bad application type", func(m map[string]any) { m["application_type"] = "desktop" }, "invalid_client_metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ok()
			tt.change(m)
			status, body := register(t, as, m)
			if status != http.StatusBadRequest || body["error"] != tt.want {
				t.Errorf("got %d %v, want 400 %s", status, body, tt.want)
			}
		})
	}
	// The accepted forms, for contrast.
	for _, uris := range [][]string{{"https://app.example.com/cb"}, {"http://localhost:8080/cb"}, {"http://[::1]/cb"}, {"https://app.example.com/cb?x=1"}} {
		m := ok()
		m["redirect_uris"] = uris
		if status, body := register(t, as, m); status != http.StatusCreated {
			t.Errorf("redirect_uris %v: %d %v", uris, status, body)
		}
	}

	t.Run("not json", func(t *testing.T) {
		resp, err := http.Post(as.RegistrationEndpoint(), "application/x-www-form-urlencoded", strings.NewReader("redirect_uris=x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
}

func TestRegistrationOptions(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{OmitRegisteredAuthMethod: true, AllowHTTPRedirects: true})
	status, body := register(t, as, map[string]any{"redirect_uris": []string{"http://app.example.com/cb"}, "token_endpoint_auth_method": "client_secret_post"})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	if _, ok := body["token_endpoint_auth_method"]; ok {
		t.Errorf("response has token_endpoint_auth_method: %v", body)
	}
	// The method registered still applies: a client that believes RFC
	// 7591's default (Basic) is refused.
	c, _ := as.Client(body["client_id"].(string))
	if c.AuthMethod != "client_secret_post" {
		t.Errorf("registered method %q", c.AuthMethod)
	}
}

func TestRegistrationFaults(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	meta := map[string]any{"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none"}
	as.FailRegistrations(1, oauthtest.FaultUnavailable)
	if status, body := register(t, as, meta); status != http.StatusServiceUnavailable {
		t.Errorf("first registration: %d %v, want 503", status, body)
	}
	as.FailRegistrations(1, oauthtest.FaultLoseResponse)
	if _, err := http.Post(as.RegistrationEndpoint(), "application/json", strings.NewReader(`{"redirect_uris":["`+redirectURI+`"],"token_endpoint_auth_method":"none"}`)); err == nil {
		t.Error("lost registration response arrived")
	}
	if status, _ := register(t, as, meta); status != http.StatusCreated {
		t.Errorf("registration after the faults: %d", status)
	}
	var got []string
	for _, r := range as.Registrations() {
		got = append(got, r.Fault.String()+":"+map[bool]string{true: "registered", false: "not"}[r.ClientID != ""])
	}
	if diff := cmp.Diff([]string{"unavailable:not", "lose response:registered", "none:registered"}, got); diff != "" {
		t.Errorf("Registrations (-want +got):\n%s", diff)
	}
	if len(as.Clients()) != 2 {
		t.Errorf("%d clients, want 2 (one whose response was lost)", len(as.Clients()))
	}
}

// TestPreregisteredClients: clients from Options and AddClient
// authenticate with their method.
func TestPreregisteredClients(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{
		DisableRegistration: true,
		Clients: []oauthtest.Client{
			{ID: "basic-client", Secret: "s3cret&=", RedirectURIs: []string{redirectURI}},
			{ID: "post-client", Secret: "s3cret", AuthMethod: "client_secret_post", RedirectURIs: []string{redirectURI}},
		},
	})
	public := as.AddClient(oauthtest.Client{RedirectURIs: []string{redirectURI}})
	if public.ID == "" || public.AuthMethod != "none" {
		t.Errorf("AddClient = %+v", public)
	}
	for _, c := range []struct {
		id, secret string
		style      oauth2.AuthStyle
	}{
		{"basic-client", "s3cret&=", oauth2.AuthStyleInHeader},
		{"post-client", "s3cret", oauth2.AuthStyleInParams},
		{public.ID, "", oauth2.AuthStyleInParams},
	} {
		cfg := &oauth2.Config{ClientID: c.id, ClientSecret: c.secret, RedirectURL: redirectURI,
			Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint(), TokenURL: as.TokenEndpoint(), AuthStyle: c.style}}
		tok := login(t, as, cfg)
		if _, err := refresh(t, cfg, tok.RefreshToken); err != nil {
			t.Errorf("%s: refresh: %v", c.id, err)
		}
	}
	// oauth2's auto-detection tries Basic first, then the body. A failed
	// client authentication does not use the code up, so that works, in
	// two requests.
	cfg := &oauth2.Config{ClientID: "post-client", ClientSecret: "s3cret", RedirectURL: redirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint(), TokenURL: as.TokenEndpoint()}}
	before := as.Counts.CodeGrants.Load()
	login(t, as, cfg)
	if n := as.Counts.CodeGrants.Load() - before; n != 2 {
		t.Errorf("auto-detected client authentication took %d code grants, want 2", n)
	}
}
